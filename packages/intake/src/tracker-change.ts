/**
 * What a tracker change means for Overseer (pure): whether an issue is to be taken, left alone,
 * or its task cancelled, and what a comment on it does.
 */
import type { IntakeQuery, TrackerComment, TrackerIssue } from "./tracker-adapter.ts";

/** Where intake stands with an issue: not taken yet, taken with a live task, or its task is over. */
export type TaskStanding = "none" | "live" | "over";

export type IssueVerdict =
  | { readonly kind: "take" }
  | { readonly kind: "cancel"; readonly reason: string }
  | { readonly kind: "keep" };

const fold = (text: string) => text.trim().toLowerCase();

/** Whether an issue is one the query subscribes to (labels all there, assignee, active state). */
export function matchesQuery(issue: TrackerIssue, query: IntakeQuery): boolean {
  const labels = new Set(issue.labels.map(fold));
  if (!(query.labels ?? []).every((label) => labels.has(fold(label)))) return false;
  if (query.assignee !== undefined && !issue.assignees.map(fold).includes(fold(query.assignee))) return false;
  if (query.states !== undefined && query.states.length > 0)
    return query.states.map(fold).includes(fold(issue.state));
  return !issue.terminal;
}

/**
 * - not taken: a matching issue is taken, any other left alone;
 * - live task: an issue gone terminal, or no longer assigned to the query's assignee, cancels it
 *   (the domain's cancel keeps the work on a checkpoint); a label removed does not;
 * - task over: nothing more.
 */
export function issueVerdictOf(
  issue: TrackerIssue,
  query: IntakeQuery,
  standing: TaskStanding,
): IssueVerdict {
  if (standing === "none") return matchesQuery(issue, query) ? { kind: "take" } : { kind: "keep" };
  if (standing === "over") return { kind: "keep" };
  if (issue.terminal) return { kind: "cancel", reason: `${issue.key} is ${issue.state} in the tracker` };
  if (query.assignee !== undefined && !issue.assignees.map(fold).includes(fold(query.assignee)))
    return { kind: "cancel", reason: `${issue.key} is no longer assigned to ${query.assignee}` };
  return { kind: "keep" };
}

/** The hidden marker Overseer puts in its own comments (`<!-- overseer:… -->`). */
export const MARKER_PREFIX = "<!-- overseer:";

export type CommentAction =
  | { readonly kind: "ignore" }
  /** The same command as `POST /api/v1/decisions/:id/resolve`, with the free-text option. */
  | {
      readonly kind: "resolve";
      readonly decisionId: string;
      readonly optionId: "custom";
      readonly note: string;
    }
  /** Fed to the task's next run (the domain's `answer`). */
  | { readonly kind: "answer"; readonly text: string };

/**
 * A comment on a taken issue: Overseer's own (by its identity or carrying its marker) and empty
 * ones are ignored; a person's answers the task's pending "Needs you" card when there is one,
 * else it is fed to the next run.
 */
export function commentActionOf(comment: TrackerComment, pendingDecisionId: string | null): CommentAction {
  const text = comment.body.trim();
  if (comment.byBot || text === "" || text.includes(MARKER_PREFIX)) return { kind: "ignore" };
  const signed = `${text}\n\n— ${comment.author} on the tracker`;
  if (pendingDecisionId !== null)
    return { kind: "resolve", decisionId: pendingDecisionId, optionId: "custom", note: signed };
  return { kind: "answer", text: signed };
}
