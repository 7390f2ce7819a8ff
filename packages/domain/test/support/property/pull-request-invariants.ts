/**
 * Invariants of the pull-request loop (rules 14–19):
 *   (n) a task is pr_open only with an open (or opening) pull request, and enters pr_open only
 *       through a fresh reviewer's approve in pull_request mode, with task.pr_requested
 *   (o) a merged pull request's task is done (or was cancelled before), merged only by
 *       pr-merged; a task's pull request never disappears and a merged one never changes
 *   (p) a report about a stale head changes nothing
 *   (q) a red round sends the task back with every failing check named (or, at `attempts`,
 *       to an operator), a review with work with every thread and comment
 *   (r) a claim starts a todo task only when its prerequisites are done, or (stacked) all but
 *       one pr_open prerequisite with an open pull request, or it has its own open pull request
 *   (s) a pull request stacked on a branch whose task was cancelled with its pull request
 *       closed unmerged never waits pr_open or todo: its task waits on a card (rule 20)
 */
import { type Command, openPullRequest, PULL_REQUEST_COMMAND_KINDS, type Task } from "../../../src/index.ts";
import { ensure, type Step } from "./invariant-support.ts";
import { STALE_HEAD } from "./pull-request-candidates.ts";

const PR_COMMANDS = new Set<Command["kind"]>(PULL_REQUEST_COMMAND_KINDS);

/** (n), (o) and (q) for one task after the step. */
export function checkPullRequestTask(step: Step, after: Task, before: Task | undefined): void {
  const { prev, command, result, history, via } = step;
  // (n) pr_open only with an open pull request, entered only by a fresh reviewer's approve.
  if (after.status === "pr_open") {
    ensure(
      openPullRequest(after.pullRequest) !== null,
      via(`${after.id} is pr_open without an open pull request`),
    );
    if (before?.status !== "pr_open") {
      const run = command.kind === "approve" ? prev.runs.get(command.runId) : undefined;
      ensure(
        command.kind === "approve" &&
          command.pullRequest !== undefined &&
          run?.action === "review" &&
          run.taskId === after.id &&
          run.agentId !== before?.executorAgentId,
        via(`${after.id} became pr_open without a fresh reviewer's approve in pull_request mode`),
      );
      ensure(
        result.events.some((e) => e.type === "task.pr_requested" && e.taskId === after.id),
        via(`${after.id} became pr_open without task.pr_requested`),
      );
      history.stats.prOpened++;
    }
  }
  // (o) the record never disappears; merged is final; a merged pull request's task is done.
  if (before?.pullRequest) {
    ensure(after.pullRequest !== null, via(`${after.id}'s pull request disappeared`));
    if (before.pullRequest.status === "merged")
      ensure(
        JSON.stringify(after.pullRequest) === JSON.stringify(before.pullRequest),
        via(`${after.id}'s merged pull request changed`),
      );
  }
  if (after.pullRequest?.status === "merged") {
    ensure(
      after.status === "done" || (after.status === "cancelled" && before?.status === "cancelled"),
      via(`${after.id} is ${after.status} with a merged pull request`),
    );
    if (before?.pullRequest?.status !== "merged") {
      ensure(
        command.kind === "pr-merged" && command.taskId === after.id,
        via(`${after.id}'s pull request merged without pr-merged`),
      );
      if (after.status === "done") history.stats.prMerged++;
    }
  }
  if (result.outcome !== "applied" || !PR_COMMANDS.has(command.kind) || !("taskId" in command)) return;
  if (command.taskId !== after.id || before === undefined) return;
  // (q) what an executor gets back.
  if (command.kind === "pr-checks" && command.state === "failure") {
    const ciBefore = before.pullRequest?.ciFailures ?? 0;
    if (after.status === "todo") {
      ensure(
        after.pullRequest?.ciFailures === ciBefore + 1 &&
          command.failing.every(
            (c) => after.feedback?.includes(c.name) && after.feedback.includes(c.logTail),
          ),
        via(`${after.id} red round: ${JSON.stringify(after.pullRequest)}, feedback ${after.feedback}`),
      );
    } else {
      ensure(
        after.status === "awaiting_input" && after.pullRequest?.ciFailures === 0,
        via(`${after.id} red round ${ciBefore + 1} left it ${after.status}`),
      );
      history.stats.prCiLimit++;
    }
  }
  if (
    command.kind === "pr-review" &&
    (command.changesRequested || command.threads.length > 0 || command.comments.length > 0)
  ) {
    const texts = [
      ...command.threads.flatMap((t) => [t.path, ...t.comments.map((c) => c.body)]),
      ...command.comments.map((c) => c.body),
    ];
    ensure(
      after.status === "todo" && texts.every((text) => after.feedback?.includes(text)),
      via(`${after.id} review with work left it ${after.status} with feedback ${after.feedback}`),
    );
    history.stats.prReviewWork++;
  }
}

/** (p) a report about another head than the approved one is already_applied and changes nothing. */
export function checkStaleReport({ prev, command, result, history, via }: Step): void {
  if (!PR_COMMANDS.has(command.kind) || !("headSha" in command) || command.headSha !== STALE_HEAD) return;
  ensure(
    result.outcome === "already_applied" && result.state === prev && result.events.length === 0,
    via("a report about a stale head changed something"),
  );
  history.stats.prStale++;
}

/** (r) a claim starts todo work only on satisfied prerequisites (stacked: at most one open PR). */
export function checkClaimedPrerequisites({ prev, command, result, next, via }: Step): void {
  if (command.kind !== "claim") return;
  for (const runId of result.changes.createdRunIds) {
    const run = next.runs.get(runId);
    const before = run ? prev.tasks.get(run.taskId) : undefined;
    // A task with its own open pull request was built on its prerequisites already (rule 20).
    if (before?.status !== "todo" || openPullRequest(before.pullRequest) !== null) continue;
    let open = 0;
    for (const id of before.prerequisites) {
      const p = prev.tasks.get(id);
      if (p?.status === "done") continue;
      ensure(
        command.prerequisites === "stacked" &&
          p?.status === "pr_open" &&
          openPullRequest(p.pullRequest) !== null,
        via(`${before.id} claimed with prerequisite ${id} ${p?.status}`),
      );
      open++;
    }
    ensure(open <= 1, via(`${before.id} claimed on ${open} open pull requests`));
  }
}

/** (s) after every step: no pull request waits on a dead stacked base without a card. */
export function checkOrphans({ next, via, history, result }: Step): void {
  for (const t of next.tasks.values()) {
    const open = openPullRequest(t.pullRequest);
    if (!open || (t.status !== "pr_open" && t.status !== "todo")) continue;
    const owner = [...next.tasks.values()].find((o) => o.id !== t.id && o.pullRequest?.branch === open.base);
    if (owner?.status !== "cancelled" || owner.pullRequest?.status !== "closed") continue;
    const running = [...next.runs.values()].some(
      (r) => r.taskId === t.id && (r.status === "queued" || r.status === "running"),
    );
    ensure(running, via(`${t.id} is ${t.status} on ${open.base}, the branch of cancelled ${owner.id}`));
  }
  if (result.events.some((e) => e.type === "pr.base_closed")) history.stats.prOrphaned++;
}
