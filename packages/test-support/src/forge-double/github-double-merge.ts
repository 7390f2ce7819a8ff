/** A merge the way GitHub refuses or performs it: open, head as expected, required checks green. */

import type { ApiAnswer } from "./double-server.ts";
import { type DoublePull, type GitHubDoubleState, latestByName } from "./github-double-state.ts";

export async function mergePull(
  double: GitHubDoubleState,
  repository: string,
  pull: DoublePull,
  method: "merge" | "squash" | "rebase",
  login: string,
  expectedSha: string | undefined,
  commitTitle?: string,
): Promise<ApiAnswer> {
  const state = double.repo(repository);
  if (pull.state !== "open")
    return {
      status: 405,
      body: { message: "Pull Request is not mergeable", documentation_url: "https://docs.github.com/rest" },
    };
  const head = await double.headSha(repository, pull);
  if (expectedSha && expectedSha !== head) {
    return {
      status: 409,
      body: {
        message: "Head branch was modified. Review and try the merge again.",
        documentation_url: "https://docs.github.com/rest",
      },
    };
  }
  for (const name of state.requiredChecks) {
    const run = latestByName(state.checkRuns.filter((r) => r.sha === head)).find((r) => r.name === name);
    const status = state.statuses.filter((s) => s.sha === head && s.context === name).at(-1);
    if (run?.conclusion !== "success" && status?.state !== "success") {
      return {
        status: 405,
        body: {
          message: `Required status check "${name}" is expected.`,
          documentation_url: "https://docs.github.com/rest",
        },
      };
    }
  }
  const merged = await double.git.merge(
    repository,
    pull.base,
    head,
    method,
    commitTitle ?? `Merge pull request #${pull.number} from ${pull.head}`,
  );
  if (!merged.sha) {
    return {
      status: 405,
      body: { message: "Pull Request is not mergeable", documentation_url: "https://docs.github.com/rest" },
    };
  }
  const now = new Date().toISOString();
  Object.assign(pull, {
    state: "closed",
    mergedAt: now,
    mergedBy: login,
    mergeCommitSha: merged.sha,
    headShaAtClose: head,
    updatedAt: now,
  });
  return {
    status: 200,
    body: { sha: merged.sha, merged: true, message: "Pull Request successfully merged" },
  };
}
