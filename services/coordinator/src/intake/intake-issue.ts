/**
 * One re-read of one tracker issue (pure rules in `@overseer/intake`, effects here): a matching
 * issue becomes a task (or starts a mission), a terminal or unassigned one cancels its task, and
 * the comments after the stored cursor answer the task's pending card or feed its next run.
 * Idempotent: the task id comes from the issue key, the item is unique by (source, issue), the
 * cursor moves only after the comments it covers were applied.
 */
import {
  type AppliedTransition,
  type Db,
  getIntakeItem,
  type IntakeItemRow,
  type IntakeSourceRow,
  intakeTaskIds,
  markIntakeItemCancelled,
  recordIntakeItem,
  setIntakeCommentCursor,
} from "@overseer/db";
import {
  type Command,
  DEFAULT_MISSION_MAX_ROUNDS,
  DomainError,
  TERMINAL_TASK_STATUSES,
} from "@overseer/domain";
import {
  commentActionOf,
  type IntakeQuery,
  type IntakeSourceConfig,
  issueVerdictOf,
  type TaskStanding,
  type TrackerAdapter,
  type TrackerIssue,
  taskDraftOf,
} from "@overseer/intake";
import type { Logger } from "@overseer/runtime";

export interface IssueWork {
  readonly db: Db;
  readonly source: IntakeSourceRow;
  readonly query: IntakeQuery;
  readonly config: IntakeSourceConfig;
  readonly adapter: TrackerAdapter;
  readonly apply: (projectId: string, command: Command) => Promise<AppliedTransition>;
  readonly newId: () => string;
  readonly logger: Logger;
  /**
   * Whether the task's open pull request already merged on the forge, the merge then recorded
   * (the forge runner's recordMergeIfMerged); absent: never asked.
   */
  readonly mergedOnForge?: ((projectId: string, taskId: string) => Promise<boolean>) | undefined;
}

/** What a re-read did (logged, counted). */
export type IssueOutcome = "taken" | "cancelled" | "merged" | "answered" | "unchanged" | "gone";

function standingOf(item: IntakeItemRow | null): TaskStanding {
  if (item === null || item.task_id === null) return "none";
  if (item.cancelled_at !== null || item.task_status === null) return "over";
  return TERMINAL_TASK_STATUSES.has(item.task_status as never) ? "over" : "live";
}

export async function readIssue(work: IssueWork, issueId: string): Promise<IssueOutcome> {
  const { source } = work;
  const item = await getIntakeItem(work.db, source.id, issueId);
  const standing = standingOf(item);
  const issue = await work.adapter.getIssue(issueId);
  if (issue === null) {
    if (standing !== "live" || item === null) return "gone";
    return cancelUnlessMerged(work, item, `the issue ${item.issue_key} no longer exists in the tracker`);
  }
  const verdict = issueVerdictOf(issue, work.query, standing);
  if (verdict.kind === "take") return take(work, issue);
  if (verdict.kind === "cancel" && item !== null) return cancelUnlessMerged(work, item, verdict.reason);
  if (standing === "live" && item !== null)
    return (await readComments(work, item)) ? "answered" : "unchanged";
  return "unchanged";
}

async function take(work: IssueWork, issue: TrackerIssue): Promise<IssueOutcome> {
  const { source, config } = work;
  const draft = taskDraftOf(issue, config, await intakeTaskIds(work.db, source.id));
  const by = `intake:${source.id}`;
  // Comments already on the issue are part of what it asks, not answers: the cursor starts after them.
  const { cursor } = await drainComments(work.adapter, issue.id, null);
  let taskId = draft.id;
  try {
    if (draft.as === "mission") {
      const objective = `${draft.title}\n\n${draft.body}`;
      const applied = await work.apply(source.project_id, {
        kind: "start-mission",
        objective,
        stage: null,
        sessionsLimit: null,
        maxRounds: DEFAULT_MISSION_MAX_ROUNDS,
        by,
      });
      // The mission's planning task stands for the issue.
      taskId = applied.events.find((e) => e.taskId !== null)?.taskId ?? draft.id;
    } else {
      const card = {
        id: draft.id,
        stage: draft.stage,
        title: draft.title,
        body: draft.body,
        role: draft.role,
        scope: draft.scope,
        prerequisites: draft.prerequisites,
        acceptance: draft.acceptance,
        priority: 0,
      };
      await work.apply(source.project_id, { kind: "import-tasks", tasks: [card], by });
    }
  } catch (error) {
    // Taken before: a redelivery after a crash between the import and the record below, or
    // another coordinator's runner taking the same issue at the same moment.
    if (!takenBefore(error, taskId)) throw error;
  }
  await recordIntakeItem(work.db, {
    sourceId: source.id,
    issueId: issue.id,
    issueKey: issue.key,
    projectId: source.project_id,
    taskId,
    commentCursor: cursor,
  });
  work.logger.info(
    { source: source.id, issue: issue.key, task: taskId, as: draft.as },
    "intake took an issue",
  );
  return "taken";
}

/** The import was refused because the issue's task already exists (its id is the issue's). */
function takenBefore(error: unknown, taskId: string): boolean {
  if (!(error instanceof DomainError)) return false;
  if (error.code === "already_exists") return true;
  return error.code === "conflict" && error.details.taskId === taskId && !("unknown" in error.details);
}

/**
 * The task of an issue closed (or gone, or unassigned) is cancelled, unless its pull request
 * merged on the forge before: a person who merges and then closes the issue by hand, before
 * Overseer's poll saw the merge, closed it after the merge ("merged, by anyone → done"), so the
 * merge is recorded instead and the task is done. A forge that cannot be read fails the read
 * (retried with backoff) rather than cancel work that may have merged.
 */
async function cancelUnlessMerged(
  work: IssueWork,
  item: IntakeItemRow,
  reason: string,
): Promise<IssueOutcome> {
  const taskId = item.task_id;
  if (taskId !== null && work.mergedOnForge && (await work.mergedOnForge(item.project_id, taskId))) {
    work.logger.info(
      { source: work.source.id, issue: item.issue_key, task: taskId },
      "intake found the task's pull request merged on the forge: the merge is recorded, the task not cancelled",
    );
    return "merged";
  }
  await cancel(work, item, reason);
  return "cancelled";
}

async function cancel(work: IssueWork, item: IntakeItemRow, reason: string): Promise<void> {
  if (item.task_id === null) return;
  try {
    await work.apply(item.project_id, {
      kind: "cancel",
      taskId: item.task_id,
      by: `intake:${work.source.id}`,
      reason,
    });
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    work.logger.info({ task: item.task_id, reason: error.message }, "intake cancel not applied");
  }
  await markIntakeItemCancelled(work.db, item.source_id, item.issue_id);
  work.logger.info(
    { source: work.source.id, issue: item.issue_key, task: item.task_id, reason },
    "intake cancelled a task",
  );
}

/** Applies the comments after the cursor; true when one reached the task. */
async function readComments(work: IssueWork, item: IntakeItemRow): Promise<boolean> {
  const taskId = item.task_id as string;
  const { comments, cursor } = await drainComments(work.adapter, item.issue_id, item.comment_cursor);
  let pending = item.pending_decision_id;
  let reached = false;
  for (const comment of comments) {
    const action = commentActionOf(comment, pending);
    if (action.kind === "ignore") continue;
    const by = `${work.source.kind}:${comment.author}`;
    const command: Command =
      action.kind === "resolve"
        ? {
            kind: "resolve-decision",
            decisionId: action.decisionId,
            optionId: action.optionId,
            note: action.note,
            by,
            resolutionId: work.newId(),
          }
        : { kind: "answer", taskId, text: action.text, by };
    try {
      await work.apply(item.project_id, command);
      reached = true;
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      work.logger.info({ task: taskId, reason: error.message }, "a tracker comment could not reach its task");
    }
    if (action.kind === "resolve") pending = null;
  }
  if (cursor !== item.comment_cursor)
    await setIntakeCommentCursor(work.db, item.source_id, item.issue_id, cursor);
  return reached;
}

/** Every comment after `cursor` (pages until the adapter has no more), and the last cursor. */
async function drainComments(adapter: TrackerAdapter, issueId: string, cursor: string | null) {
  const all: Awaited<ReturnType<TrackerAdapter["listComments"]>>["comments"] = [];
  let at = cursor;
  for (let page = 0; page < 50; page++) {
    const read = await adapter.listComments(issueId, at);
    all.push(...read.comments);
    if (read.comments.length === 0 || read.cursor === at) return { comments: all, cursor: read.cursor };
    at = read.cursor;
  }
  return { comments: all, cursor: at };
}
