import type { RunJob, RunOutcome } from "@overseer/run-contract";

type TransitionKind = Extract<RunOutcome, { kind: "transition" }>["transition"]["kind"];

/**
 * The transitions each kind of run may end with. An executor (or resolver) hands its work in
 * or escalates; only a reviewer decides on work, and only on someone else's.
 */
export const ALLOWED_TRANSITIONS: Readonly<Record<RunJob["action"], readonly TransitionKind[]>> = {
  // A mission's planning task runs as an execute run; Postgres refuses plan/complete elsewhere.
  execute: ["submit", "escalate", "plan", "complete"],
  resolve: ["submit", "escalate"],
  review: ["approve", "reject", "escalate"],
};

/**
 * Why the worker must refuse the agent's transition, or null when it may be recorded. Checked
 * before anything is committed, pushed or landed, so a refused approve never reaches the target
 * branch (Postgres checks the same rules again when it applies the result).
 *
 * An approve is refused unless it comes from a review run, of an agent other than the one that
 * submitted the work, for exactly the task head Postgres recorded at that submit (`taskHead` is
 * the head the worker checked out and would land).
 */
export function refusedTransition(
  job: RunJob,
  transition: TransitionKind,
  taskHead: string | null,
): string | null {
  const allowed = ALLOWED_TRANSITIONS[job.action];
  if (!allowed.includes(transition)) {
    return `a ${job.action} run may only ${allowed.join(", ")}; its agent ${job.agentId} tried to ${transition}`;
  }
  if (transition !== "approve") return null;
  if (job.executorAgentId != null && job.executorAgentId === job.agentId) {
    return `reviewer ${job.agentId} is the executor of ${job.taskId}; it cannot approve its own work`;
  }
  if (taskHead !== job.expectedTaskHead) {
    return `${job.taskBranch} is at ${taskHead ?? "no commit"} but the submitted head is ${job.expectedTaskHead ?? "no commit"}; only the submitted head may be approved`;
  }
  return null;
}
