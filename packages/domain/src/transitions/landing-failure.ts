/**
 * Approved work that did not land (rule 3): a reviewer's landing that conflicted or failed the
 * check command (`land-failed`), or a pull request whose base moved into a conflict
 * (`pr-conflict`, rule 18). Both send the task back to an executor whose checkout has the base
 * merged in, and after the project's `attempts` in a row ask an operator.
 */
import type { LandingFailureReason, Task } from "../task.ts";
import { awaitInput } from "./decision-cards.ts";
import type { Draft } from "./draft.ts";

/** Characters of a failed landing's details kept in the feedback and the event (the tail). */
export const LANDING_DETAILS_KEEP_CHARS = 4000;

export interface LandingFailureInput {
  reason: LandingFailureReason;
  files: readonly string[];
  /** Git's conflict messages, or the tail of the check command's output. */
  details: string;
  /** The branch the work was to land on. */
  branch: string;
  reviewerFeedback?: string | undefined;
  maxAttempts: number;
}

/**
 * Records the failed landing on the task (todo with `landing`, or awaiting_input at the limit)
 * and its `task.landing_failed` event, with `extra` data (the run's executor, the pull request).
 */
export function failLanding(
  draft: Draft,
  task: Task,
  subject: { taskId: string; id: string | null },
  input: LandingFailureInput,
  extra: Record<string, unknown>,
): void {
  const files = [...new Set(input.files)].sort();
  const details =
    input.details.length > LANDING_DETAILS_KEEP_CHARS
      ? `[… ${input.details.length - LANDING_DETAILS_KEEP_CHARS} chars omitted]\n${input.details.slice(-LANDING_DETAILS_KEEP_CHARS)}`
      : input.details;
  const branch = input.branch;
  const what =
    input.reason === "conflict"
      ? `The approved work could not land on ${branch}: it conflicts with ${branch} in ${files.length > 0 ? files.join(", ") : "its history"}. Your checkout has ${branch} merged in, with the conflict markers committed in those files: resolve every conflict, keeping the intent of both sides, then submit.`
      : `The approved work merged cleanly with ${branch}, but the project's check command failed on the integrated tree. Your checkout has ${branch} merged in: make the check pass, then submit.`;
  const feedback = [
    what,
    details.trim()
      ? `${input.reason === "conflict" ? "Git" : "Check output (tail)"}:\n${details.trim()}`
      : "",
    input.reviewerFeedback?.trim() ? `Reviewer notes: ${input.reviewerFeedback.trim()}` : "",
  ]
    .filter((part) => part !== "")
    .join("\n\n");
  const landingFailures = task.landingFailures + 1;
  const next: Task = {
    ...task,
    status: "todo",
    feedback,
    landing: { reason: input.reason, files },
    landingFailures,
    failures: 0,
    notBefore: null,
    statusReason: null,
  };
  draft.event("task.landing_failed", subject, {
    reason: input.reason,
    files,
    details,
    branch,
    ...extra,
    attempt: landingFailures,
    maxAttempts: input.maxAttempts,
  });
  if (landingFailures < input.maxAttempts) {
    draft.putTask(next);
    return;
  }
  // The limit: an operator decides; releasing it starts a fresh count with the base merged in.
  const failure =
    input.reason === "conflict"
      ? `conflicts with ${branch} in ${files.join(", ") || "its history"}`
      : "fails the check command once merged";
  const reason = `Approved work of ${task.id} failed to land ${landingFailures} times in a row; it ${failure}.`;
  awaitInput(draft, { ...next, landingFailures: 0 }, "todo", "other", {
    title: "Landing keeps failing",
    reason,
    question: `${reason} Answer to send it to a new executor (with ${branch} merged in and your answer in its prompt), or stop it.`,
  });
}
