/**
 * A task brought to an open pull request through the real transitions, for the tests of what
 * reads one (the gateway's views and metrics, the CLI's listings).
 */
import { applyTransition, type Db } from "@overseer/db";

/** The pull request `openPullRequest` opens: its number, link and head (the submitted commit). */
export interface OpenedPullRequest {
  number: number;
  url: string;
  head: string;
  /** The task expected to be claimed next; the claim is checked against it when given. */
  taskId?: string;
}

/**
 * In a started project that lands through pull requests: claims the next task, submits `head`,
 * approves it in review with a pull request to main, and records the forge's opening of it.
 * Returns the task's id.
 */
export async function openPullRequest(db: Db, projectId: string, pull: OpenedPullRequest): Promise<string> {
  const claimed = async (action: string) => {
    const run = (await applyTransition(db, projectId, { kind: "claim" })).changes.runs[0];
    if (!run || (pull.taskId !== undefined && run.taskId !== pull.taskId))
      throw new Error(
        `the ${action} claim in ${projectId} took ${run?.taskId ?? "nothing"}, not ${pull.taskId}`,
      );
    return run;
  };
  const execute = await claimed("execute");
  await applyTransition(db, projectId, {
    kind: "submit",
    runId: execute.id,
    message: "work",
    commitSha: pull.head,
    branchHead: pull.head,
  });
  const review = await claimed("review");
  await applyTransition(db, projectId, {
    kind: "approve",
    runId: review.id,
    landedSha: null,
    landedBranch: null,
    reviewedHead: pull.head,
    pullRequest: { base: "main", headSha: pull.head },
  });
  await applyTransition(db, projectId, {
    kind: "pr-opened",
    taskId: execute.taskId,
    number: pull.number,
    url: pull.url,
    headSha: pull.head,
  });
  return execute.taskId;
}
