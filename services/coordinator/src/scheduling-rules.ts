/** Small rules of the coordinator's scheduling and shutdown, apart from its wiring. */
import type { ProjectRow } from "@overseer/db";
import { budgetReached, type Command } from "@overseer/domain";
import { ConfigError } from "@overseer/input-errors";
import type { ProjectPolicies } from "./project-policy.ts";

/** Whether `work` settled before `deadline` (epoch ms); it goes on either way. */
export async function settlesBy(work: Promise<unknown>, deadline: number): Promise<boolean> {
  const left = deadline - Date.now();
  if (!Number.isFinite(left))
    return work.then(
      () => true,
      () => true,
    );
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), Math.max(0, left));
  });
  const done = work.then(
    () => true,
    () => true,
  );
  try {
    return await Promise.race([done, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Events after which nothing new can be runnable: a claim's own queued runs, a run starting.
 * A commit with any other event gets a scheduling pass.
 */
export const QUIET_EVENTS: ReadonlySet<string> = new Set(["run.queued", "run.started", "run.redelivered"]);

/**
 * The scheduler's claim: with stacked pull requests a prerequisite whose pull request is open
 * satisfies its dependents (docs/state-machine.md rule 19). A stored config that no longer
 * parses claims with merged prerequisites, the stricter reading; its runs record the error.
 */
export function claimCommand(
  policies: ProjectPolicies,
  project: ProjectRow,
): Extract<Command, { kind: "claim" }> {
  try {
    const { landing } = policies.of(project);
    return landing.mode === "pull_request" && landing.pullRequest.prerequisites === "stacked"
      ? { kind: "claim", prerequisites: "stacked" }
      : { kind: "claim" };
  } catch (error) {
    if (error instanceof ConfigError) return { kind: "claim" };
    throw error;
  }
}

/**
 * The pause of an active project whose spend reached `budget_usd` or its runner config's
 * `budget_tokens` (budgetReached), with the reason; null when it may go on.
 */
export function budgetPauseCommand(
  project: ProjectRow,
  budgets: { budgetUsd: number | null; budgetTokens: number | null },
  by: string,
): Command | null {
  if (project.status !== "active") return null;
  const reason = budgetReached(
    {
      costUsd: project.cost_usd,
      tokensIn: Number(project.tokens_in),
      tokensOut: Number(project.tokens_out),
      tokensUnpriced: Number(project.tokens_unpriced),
    },
    budgets,
  );
  if (reason === null) return null;
  return { kind: "set-project-status", status: "paused", by, reason, bound: "budget" };
}
