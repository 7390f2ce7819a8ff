/**
 * How the forge runner reads what the forge says about a task's pull request (pure, tested rule
 * by rule): the gate of the checks, and the human review of the approved head — approvals,
 * changes requested, the threads and comments no run has answered. Overseer's own account
 * (`checkTokenRights().login`) is never a human: its reviews, replies and comments are skipped.
 */
import type { FailingCheck, PullRequestCheckState, PullRequestComment, ReviewThread } from "@overseer/domain";
import type { CheckState, ReviewThread as ForgeThread, ReviewComment, ReviewState } from "@overseer/forge";

/**
 * The checks' combined state: `required` names the checks that gate (`[]`: every check reported
 * on the head). A failure of a gating check is `failure`; all gating checks finished well is
 * `success`; otherwise (one still running, a required one not reported yet, or none reported at
 * all) `pending`.
 */
export function checksGate(
  checks: readonly CheckState[],
  required: readonly string[],
): { state: PullRequestCheckState; failing: CheckState[] } {
  const gating = required.length > 0 ? checks.filter((c) => required.includes(c.name)) : [...checks];
  const failing = gating.filter((c) => c.conclusion === "failure" || c.conclusion === "cancelled");
  if (failing.length > 0) return { state: "failure", failing };
  const missing = required.some((name) => !gating.some((c) => c.name === name));
  if (gating.length === 0 || missing || gating.some((c) => c.conclusion === "pending")) {
    return { state: "pending", failing: [] };
  }
  return { state: "success", failing: [] };
}

export interface HumanReview {
  readonly approvals: number;
  readonly changesRequested: boolean;
  readonly threads: ReviewThread[];
  readonly comments: PullRequestComment[];
}

/**
 * The human review of `headSha`: each person's latest verdict on that head (a comment-only
 * review changes no verdict); unresolved threads whose last word is not Overseer's (Overseer
 * answers each thread when it pushes the next approved head); the bodies of reviews requesting
 * changes; and conversation comments addressing Overseer (`@login` or the word "overseer")
 * written after Overseer's own last comment.
 */
export function humanReview(
  login: string,
  headSha: string,
  reviews: readonly ReviewState[],
  threads: readonly ForgeThread[],
  comments: readonly ReviewComment[],
): HumanReview {
  const mine = (author: string) => author.toLowerCase() === login.toLowerCase();
  const latest = new Map<string, ReviewState>();
  for (const review of reviews) {
    if (mine(review.author) || review.commitSha !== headSha) continue;
    if (
      review.verdict === "approved" ||
      review.verdict === "changes_requested" ||
      review.verdict === "dismissed"
    ) {
      latest.set(review.author, review);
    }
  }
  const verdicts = [...latest.values()];
  const openThreads = threads
    .filter((t) => !t.resolved && t.comments.length > 0 && !mine(t.comments.at(-1)?.author ?? ""))
    .map(
      (t): ReviewThread => ({
        path: t.path,
        line: t.line,
        comments: t.comments.map((c) => ({ author: c.author, body: c.body })),
      }),
    );
  const requested = verdicts
    .filter((r) => r.verdict === "changes_requested" && r.body.trim() !== "")
    .map((r) => ({ author: r.author, body: r.body }));
  const lastMine = comments.reduce((at, c, i) => (mine(c.author) ? i : at), -1);
  const mention = new RegExp(`@${escapeRegExp(login)}\\b|\\boverseer\\b`, "i");
  const addressed = comments
    .slice(lastMine + 1)
    .filter((c) => !mine(c.author) && mention.test(c.body))
    .map((c) => ({ author: c.author, body: c.body }));
  return {
    approvals: verdicts.filter((r) => r.verdict === "approved").length,
    changesRequested: verdicts.some((r) => r.verdict === "changes_requested"),
    threads: openThreads,
    comments: [...requested, ...addressed],
  };
}

/** The failing checks as the domain records them, each with its log tail (empty when none). */
export function failingChecks(
  failing: readonly CheckState[],
  tails: readonly (string | null)[],
): FailingCheck[] {
  return failing.map((check, i) => ({ name: check.name, url: check.url, logTail: tails[i] ?? "" }));
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
