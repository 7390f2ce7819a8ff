/**
 * What the forge suite's cases read of a project's state, and their wait on the forge doubles:
 * one place for every forge (GitHub, GitLab, Gitea) and every case.
 */
import type { ProjectState } from "@overseer/domain";
import type { ApiRequest } from "@overseer/test-support";

/** The task's pull request as Postgres records it, or null. */
export const pr = (state: ProjectState, id: string) => state.tasks.get(id)?.pullRequest ?? null;

/** The task waits on its open pull request (on a head other than `head`, when given). */
export const openOn = (state: ProjectState, id: string, head?: string) => {
  const p = pr(state, id);
  return (
    p?.status === "open" &&
    p.number !== null &&
    state.tasks.get(id)?.status === "pr_open" &&
    (head === undefined || p.headSha !== head)
  );
};

/** Waits until `check` holds of something outside Postgres (a forge double's thread, a comment). */
export async function until(check: () => boolean | Promise<boolean>, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** A double's requests `METHOD path` (path without the query) from index `from` on. */
export function answers(
  requests: readonly ApiRequest[],
  from: number,
  method: string,
  path: RegExp,
): ApiRequest[] {
  return requests.slice(from).filter((r) => r.method === method && path.test(r.path.split("?")[0] ?? ""));
}
