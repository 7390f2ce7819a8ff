/**
 * Stacked pull requests (docs/state-machine.md rule 19): the base a task's pull request targets
 * and its runs build on.
 */
import type { ProjectState } from "../project-state.ts";
import { openPullRequest } from "../pull-request.ts";
import { type Task, TERMINAL_TASK_STATUSES } from "../task.ts";

/**
 * The branch a task's pull request targets and its runs build on (their checkout's base, the
 * branch a conflict run merges in, the reviewer's diff base): the base its open pull request
 * already targets, while that is the landing branch or a stacked prerequisite's branch still
 * alive; else the PR branch of the one prerequisite whose pull request is alive; else the
 * landing branch.
 */
export function pullRequestBase(state: ProjectState, task: Task, landingBranch: string): string {
  const own = openPullRequest(task.pullRequest);
  if (own && (own.base === landingBranch || aliveStack(stackOwner(state.tasks.values(), own.base))))
    return own.base;
  return stackedPrerequisite(state, task)?.pullRequest?.branch ?? landingBranch;
}

/**
 * The prerequisite a stacked task builds on (rule 19): the one whose PR branch is alive — its
 * pull request open, or closed while the task goes on with an executor (`on_closed: todo`:
 * its next approved head goes to the same branch and opens a new pull request from it).
 */
export function stackedPrerequisite(state: ProjectState, task: Task): Task | undefined {
  for (const id of task.prerequisites) {
    const prerequisite = state.tasks.get(id);
    if (aliveStack(prerequisite)) return prerequisite;
  }
  return undefined;
}

/** A task whose PR branch others may stack on: not finished, with a pull request not merged. */
function aliveStack(task: Task | undefined): task is Task {
  return (
    task !== undefined &&
    !TERMINAL_TASK_STATUSES.has(task.status) &&
    task.pullRequest !== null &&
    task.pullRequest.status !== "merged"
  );
}

/** The task whose PR branch is `branch`, if any. */
function stackOwner(tasks: Iterable<Task>, branch: string): Task | undefined {
  for (const t of tasks) if (t.pullRequest?.branch === branch) return t;
  return undefined;
}
