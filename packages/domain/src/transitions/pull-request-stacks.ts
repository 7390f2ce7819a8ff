/**
 * Stacked pull requests (docs/state-machine.md rules 19 and 20): the base a task's pull request
 * targets and its runs build on, and what becomes of a pull request stacked on a prerequisite
 * whose own pull request was closed unmerged for good.
 */
import type { Decision, DecisionOption } from "../decision.ts";
import type { ProjectState } from "../project-state.ts";
import { openPullRequest, type TaskPullRequest } from "../pull-request.ts";
import { isActiveRun } from "../run.ts";
import { type Task, TERMINAL_TASK_STATUSES } from "../task.ts";
import { awaitInput, releaseWithAnswer } from "./decision-cards.ts";
import type { Draft } from "./draft.ts";

/** The option of rule 20's card that retargets a stacked pull request whose base is gone. */
export const RETARGET_OPTION_ID = "retarget";

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
    if (prerequisite && aliveStack(prerequisite)) return prerequisite;
  }
  return undefined;
}

/** A task whose PR branch others may stack on: not finished, with a pull request not merged. */
function aliveStack(task: Task | undefined): boolean {
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

/**
 * Rule 20: `closed`'s pull request was closed unmerged and the task is cancelled, so its PR
 * branch is dead. Every task waiting with an open pull request stacked on that branch (pr_open,
 * or todo between rounds) carries the closed work in its branch: it waits for an operator on a
 * card naming the closed pull request (`pr.base_closed`), rather than landing it unasked.
 */
export function orphanStacked(draft: Draft, closed: Task, only?: string): void {
  const dead = closed.pullRequest;
  if (dead === null || dead.status !== "closed" || !TERMINAL_TASK_STATUSES.has(closed.status)) return;
  for (const dependent of draft.tasks.values()) {
    const open = openPullRequest(dependent.pullRequest);
    if (dependent.id === closed.id || !open || open.base !== dead.branch) continue;
    if (only !== undefined && dependent.id !== only) continue;
    if (dependent.status !== "pr_open" && dependent.status !== "todo") continue;
    // A run still working on it is asked at its approve (`deadStack`), the one calling here.
    const running = [...draft.runs.values()].some((r) => r.taskId === dependent.id && isActiveRun(r));
    if (running && only === undefined) continue;
    const to = survivingBase(draft.tasks, dead.base);
    const reason = `${dependent.id}'s pull request ${label(open)} targets ${dead.branch}, the branch of ${closed.id}'s pull request ${label(dead)}, which was closed unmerged (${closed.id} is cancelled). ${dependent.id}'s branch was built on that work and still carries it.`;
    awaitInput(draft, dependent, "todo", "other", {
      title: "Stacked pull request lost its base",
      reason,
      question: `${reason} Retarget its pull request onto ${to}: ${dependent.id} no longer waits for ${closed.id}, and a new executor and a fresh reviewer take it up from its branch, so the pull request proposes ${closed.id}'s work with its own unless they remove it. An answer does the same and goes into the executor's prompt. Or stop ${dependent.id} (its pull request is closed).`,
      options: orphanOptions(to),
      evidence: [open, dead].flatMap((pr) =>
        pr.url
          ? [{ label: `Pull request #${pr.number}`, path: pr.url, summary: `${pr.branch} → ${pr.base}` }]
          : [],
      ),
    });
    draft.event(
      "pr.base_closed",
      { taskId: dependent.id, id: null },
      {
        number: open.number,
        base: dead.branch,
        prerequisite: closed.id,
        prerequisiteNumber: dead.number,
        to,
      },
    );
  }
}

/**
 * Rule 20 at an approve in stacked mode: the dead stacked branch the task was built on, if
 * any — its open pull request's base, or a prerequisite cancelled with its pull request closed
 * unmerged (it was `pr_open` when the task was claimed, as rule 19 asks, so the task built on it).
 */
export function deadStack(state: ProjectState, task: Task): Task | undefined {
  const own = openPullRequest(task.pullRequest);
  const candidates = own
    ? [stackOwner(state.tasks.values(), own.base)]
    : task.prerequisites.map((id) => state.tasks.get(id));
  return candidates.find((t) => t?.status === "cancelled" && t.pullRequest?.status === "closed");
}

/** Whether `card`, being answered, is rule 20's (its answer, other than stop, retargets). */
export function awaitsRetarget(task: Task, card: Decision | undefined): boolean {
  return (
    task.status === "awaiting_input" && (card?.options.some((o) => o.id === RETARGET_OPTION_ID) ?? false)
  );
}

/**
 * Rule 20's answer: the pull request targets the dead branch's surviving base
 * (`pr.retarget_requested`) and the task goes to an executor with the operator's words; its
 * own open pull request is what lets it run past the cancelled prerequisite (rule 1). The record
 * is `opening` again (number kept) until the forge says it targets that base: the coordinator
 * asks for the update at once, as for every `opening` record, rather than at the next approve,
 * and nothing of it is read or merged against the old base meanwhile.
 */
export function retargetOrphan(draft: Draft, task: Task, question: string, answer: string, by: string): void {
  const open = openPullRequest(task.pullRequest);
  releaseWithAnswer(draft, task, question, answer, by);
  if (!open) return;
  const to = survivingBase(draft.tasks, open.base);
  const released = draft.task(task.id);
  draft.putTask({
    ...released,
    pullRequest: { ...open, status: "opening", base: to, checks: "pending", review: "none", approvals: 0 },
    feedback: `The pull request ${label(open)} was stacked on ${open.base}, whose pull request was closed unmerged; it now targets ${to}. The task branch still carries that closed work: keep what this task needs, then submit, and a fresh reviewer reviews everything the pull request proposes against ${to}.`,
  });
  draft.event(
    "pr.retarget_requested",
    { taskId: task.id, id: null },
    { number: open.number, from: open.base, to, reason: "stacked base closed unmerged" },
  );
}

/** Follows dead or merged stack owners down to a base that is alive or the landing branch. */
function survivingBase(tasks: ReadonlyMap<string, Task>, base: string): string {
  let current = base;
  for (let hops = 0; hops <= tasks.size; hops++) {
    const owner = stackOwner(tasks.values(), current);
    if (!owner?.pullRequest || aliveStack(owner)) return current;
    current = owner.pullRequest.base;
  }
  return current;
}

function orphanOptions(to: string): DecisionOption[] {
  return [
    {
      id: RETARGET_OPTION_ID,
      label: `Retarget onto ${to}`,
      description:
        "An executor and a fresh reviewer take it up from its branch; the pull request then targets it.",
      requires_note: false,
    },
    {
      id: "stop",
      label: "Stop",
      description: "Cancel this task and close its pull request; its work stays on its branch.",
      requires_note: false,
    },
  ];
}

function label(pr: TaskPullRequest): string {
  return pr.number === null ? `from ${pr.branch}` : `#${pr.number}${pr.url ? ` (${pr.url})` : ""}`;
}
