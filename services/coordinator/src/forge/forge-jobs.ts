/**
 * The forge runner's jobs (forge-runner.ts): each reads Postgres and the forge, and reports what
 * it found as domain commands (each its own transaction through the one apply path). All are
 * idempotent: a job about another head than the approved one, or about a pull request no longer
 * open, changes nothing, and the domain ignores a report that changes nothing recorded.
 */
import {
  findPullRequestByBranch,
  getForgeDelivery,
  getPullRequestRow,
  getWaitingPullRequestRow,
  intakeIssueKeyOfTask,
  listOpenPullRequests,
  loadProjectSnapshot,
  markForgeDeliveryApplied,
  type PullRequestRow,
  taskRunLines,
} from "@overseer/db";
import type { ConditionalRead, ReviewThread as ForgeThread } from "@overseer/forge";
import { routeDelivery } from "./delivery-route.ts";
import type { ForgeJobContext } from "./forge-job-context.ts";
import { approvedHeadLabel, pullRequestText } from "./pull-request-body.ts";
import { checksGate, failingChecks, humanReview } from "./review-reading.ts";

/**
 * Opens the task's pull request for its approved head, or updates it; answers the threads the
 * head addresses. It acts on the head approved now: an ask for an older head that waited while
 * a newer one was approved (the queue keeps one `ensure` per task) does the newer one's work.
 */
export async function ensurePull(ctx: ForgeJobContext, taskId: string): Promise<void> {
  const projectId = ctx.project.id;
  const state = await loadProjectSnapshot(ctx.db, projectId);
  const task = state.tasks.get(taskId);
  const pr = task?.pullRequest;
  if (!task || !pr || (pr.status !== "opening" && pr.status !== "open")) return;
  const headSha = pr.headSha;
  // The pull request this record opened is the one to update: once a person closed or merged it
  // (an ask that waited while it opened runs after that), finding no open one must not open a
  // second; the sync reports what became of it.
  if (pr.number !== null && (await ctx.forge.getPullRequest(pr.number)).status !== "open") {
    await ctx.record(taskId);
    await ctx.queue.add({ v: 1, kind: "sync", projectId, taskId });
    return;
  }
  const runs = await taskRunLines(ctx.db, projectId, taskId);
  const submit = runs.filter((r) => r.transition === "submit").at(-1);
  const approve = runs.filter((r) => r.transition === "approve").at(-1);
  const text = pullRequestText(projectId, task, {
    summary: str(submit?.said?.summary) ?? str(submit?.said?.message),
    verdict: str(approve?.said?.feedback),
    reviewer: approve?.agentId ?? null,
    runs,
    dashboardUrl: ctx.dashboardUrl,
    headSha,
    issueKey: await intakeIssueKeyOfTask(ctx.db, projectId, taskId),
  });
  // What the executor of this head was asked: the review as it stood when the run that submitted
  // it was claimed (not a later executor's: after rule 20's retarget one runs while the head is
  // still the old one, and no thread is answered for it). The threads are answered before the
  // body names the new head: a sync reads the review only once the body names the head
  // (syncPull), so it never takes a thread this head answers for one still open and sends the
  // task back for it.
  const asked = submit?.createdAt ?? null;
  if (pr.number !== null && asked !== null) await answerThreads(ctx, pr.number, headSha, asked);
  const { pullRequest } = await ctx.forge.ensurePullRequest({
    head: pr.branch,
    // The base the domain recorded (rule 19: a stacked prerequisite's branch, or its base once
    // that one merged), so a retarget is this same update.
    base: pr.base,
    title: text.title,
    body: text.body,
    marker: text.marker,
    labels: ctx.policy.landing.pullRequest.labels,
    // The recorded pull request may have been closed or merged on the forge since this job read
    // the record (a person closing it, or the merge job, while this re-run waited): it is
    // answered as it is instead of a second one being opened, and the sync reports it.
    number: pr.number,
  });
  if (pullRequest.status !== "open") {
    await ctx.record(taskId);
    await ctx.queue.add({ v: 1, kind: "sync", projectId, taskId });
    return;
  }
  await ctx.apply({ kind: "pr-opened", taskId, number: pullRequest.number, url: pullRequest.url, headSha });
  await ctx.record(taskId);
  await ctx.queue.add({ v: 1, kind: "sync", projectId, taskId });
}

/**
 * A new approved head was pushed for review feedback: each unresolved thread whose last word is
 * a person's, written before the executor of that head was asked (`asked`), gets a reply, and
 * the conversation a comment, naming the head that answers them (the next sync then counts them
 * as answered; a person replying again reopens the question). A thread that got its last word
 * later stays open for the next round.
 */
async function answerThreads(
  ctx: ForgeJobContext,
  number: number,
  headSha: string,
  asked: Date,
): Promise<void> {
  const login = await ctx.login();
  const threads = await ctx.forge.listReviewThreads(number);
  const unanswered = threads.filter((t) => {
    const last = t.comments.at(-1);
    if (t.resolved || last === undefined || last.author.toLowerCase() === login.toLowerCase()) return false;
    return new Date(last.createdAt) < asked;
  });
  for (const thread of unanswered) {
    await ctx.forge.replyToThread(
      number,
      thread,
      `Addressed in ${headSha} (reviewed and approved by Overseer).`,
    );
  }
  const comments = await ctx.forge.readComments(number, null);
  const before = comments.changed ? comments.value.filter((c) => new Date(c.createdAt) < asked) : [];
  const review = humanReview(login, headSha, [], [], before);
  if (unanswered.length > 0 || review.comments.length > 0) {
    await ctx.forge.addComment(number, `Overseer pushed ${headSha}, which answers the review so far.`);
  }
}

/** Reads the pull request, its checks and its review (conditionally) and reports each. */
export async function syncPull(ctx: ForgeJobContext, taskId: string): Promise<void> {
  const row = await getPullRequestRow(ctx.db, ctx.project.id, taskId);
  if (!row || row.number === null || row.status !== "open") return;
  const number = row.number;
  const settings = ctx.policy.landing.pullRequest;
  const maxAttempts = ctx.policy.retry.maxAttempts;
  const pull = await ctx.forge.readPullRequest(number, row.etag_pull);
  const etags: { pull?: string | null; checks?: string | null; reviews?: string | null } = {};
  if (pull.changed) {
    const seen = pull.value;
    etags.pull = pull.etag;
    if (seen.status === "merged") {
      await ctx.apply({
        kind: "pr-merged",
        taskId,
        mergeCommitSha: seen.mergeCommitSha ?? seen.headSha,
        mergedBy: seen.mergedBy,
      });
      await ctx.record(taskId, etags);
      return syncStacked(ctx, taskId);
    }
    if (seen.status === "closed") {
      await ctx.apply({ kind: "pr-closed", taskId, onClosed: settings.onClosed, closedBy: null });
      return ctx.record(taskId, etags);
    }
    // Another head than the approved one (someone pushed to the PR branch, or a newer approved
    // head is on its way): nothing about it is Overseer's to report.
    if (seen.headSha !== row.head_sha) return ctx.record(taskId, etags);
    // The approved head is new to the pull request (its body names the head it was opened or
    // updated for): `ensure` updates it and answers the threads first, so no review is read
    // against a pull request that has not said what changed.
    if (!seen.body.includes(approvedHeadLabel(row.head_sha))) {
      await ctx.queue.add({ v: 1, kind: "ensure", projectId: ctx.project.id, taskId, headSha: row.head_sha });
      return ctx.record(taskId);
    }
    // The domain moved the base (a stacked prerequisite merged, rule 19): `ensure` retargets it
    // before anything is read against the old base.
    if (seen.base !== row.base) {
      await ctx.queue.add({ v: 1, kind: "ensure", projectId: ctx.project.id, taskId, headSha: row.head_sha });
      return ctx.record(taskId);
    }
    if (seen.mergeable === false) {
      await ctx.apply({
        kind: "pr-conflict",
        taskId,
        headSha: row.head_sha,
        files: [],
        details: `${seen.base} moved and pull request #${number} no longer merges: merge ${seen.base} into the task branch and resolve the conflicts.`,
        maxAttempts,
      });
      return ctx.record(taskId, etags);
    }
  }
  const checks = await ctx.forge.readChecks(row.head_sha, row.etag_checks);
  if (checks.changed) {
    etags.checks = checks.etag;
    const gate = checksGate(checks.value, settings.requiredChecks);
    // A red round already recorded for this head went out with its logs: the domain ignores the
    // same report again (rule 16), so the logs are not read again on every poll (GitLab has no ETag).
    const recorded = row.checks === "failure" && gate.state === "failure";
    const tails = recorded
      ? []
      : await Promise.all(gate.failing.map((c) => ctx.forge.failingLogTail(c, settings.logTailBytes)));
    await ctx.apply({
      kind: "pr-checks",
      taskId,
      headSha: row.head_sha,
      state: gate.state,
      failing: failingChecks(gate.failing, tails),
      maxAttempts,
    });
  }
  const reviewTag = await syncReview(ctx, row, number, pull.changed);
  if (reviewTag !== undefined) etags.reviews = reviewTag;
  await ctx.record(taskId, etags);
  await askMerge(ctx, taskId);
}

/** Reads reviews and comments (threads too when any changed) and reports the human review; its validator. */
async function syncReview(
  ctx: ForgeJobContext,
  row: PullRequestRow,
  number: number,
  pullChanged: boolean,
): Promise<string | null | undefined> {
  const [reviewTag = null, commentTag = null] = splitTags(row.etag_reviews);
  const [reviews, comments] = await Promise.all([
    ctx.forge.readReviews(number, reviewTag),
    ctx.forge.readComments(number, commentTag),
  ]);
  if (!reviews.changed && !comments.changed && !pullChanged) return undefined;
  const fullReviews = await full(reviews, () => ctx.forge.readReviews(number, null));
  const fullComments = await full(comments, () => ctx.forge.readComments(number, null));
  const threads: readonly ForgeThread[] = await ctx.forge.listReviewThreads(number);
  const review = humanReview(await ctx.login(), row.head_sha, fullReviews.value, threads, fullComments.value);
  await ctx.apply({
    kind: "pr-review",
    taskId: row.task_id,
    headSha: row.head_sha,
    approvals: review.approvals,
    changesRequested: review.changesRequested,
    threads: review.threads,
    comments: review.comments,
    requiredApprovals: ctx.policy.landing.pullRequest.requiredApprovals,
  });
  return joinTags(fullReviews.etag, fullComments.etag);
}

/**
 * Under `merge: auto | queue`, an approved (and, for auto, green) head is handed to a `merge`
 * job. A stacked pull request (its base a prerequisite's PR branch) is never merged into that
 * branch: it waits until the prerequisite merges and it is retargeted onto the landing branch.
 */
async function askMerge(ctx: ForgeJobContext, taskId: string): Promise<void> {
  const policy = ctx.policy.landing.pullRequest.merge;
  if (policy === "manual") return;
  const row = await getWaitingPullRequestRow(ctx.db, ctx.project.id, taskId);
  if (row?.status !== "open" || row.number === null || row.base !== ctx.policy.landing.branch) return;
  if (row.approvals < ctx.policy.landing.pullRequest.requiredApprovals || row.review === "changes_requested")
    return;
  if (policy === "auto" && row.checks !== "success") return;
  await ctx.queue.add({ v: 1, kind: "merge", projectId: ctx.project.id, taskId, headSha: row.head_sha });
}

/**
 * Merges the approved, green head with its sha (`auto`), or hands it to the forge's queue
 * (`queue`). It reads the record now and acts on the head approved now (one `merge` per task
 * waits at a time, whichever head asked); the forge refuses the sha if the branch moved since.
 */
export async function mergePull(ctx: ForgeJobContext, taskId: string): Promise<void> {
  const row = await getWaitingPullRequestRow(ctx.db, ctx.project.id, taskId);
  if (row?.status !== "open" || row.number === null) return;
  if (row.base !== ctx.policy.landing.branch) return;
  const headSha = row.head_sha;
  const settings = ctx.policy.landing.pullRequest;
  if (row.approvals < settings.requiredApprovals || row.review === "changes_requested") return;
  // A pull request retargeted onto the landing branch (rule 19) may still target its merged
  // prerequisite's branch on the forge: `ensure` moves it first, and the sync after it asks again.
  const seen = await ctx.forge.readPullRequest(row.number, null);
  if (seen.changed && seen.value.base !== row.base) {
    await ctx.queue.add({ v: 1, kind: "ensure", projectId: ctx.project.id, taskId, headSha });
    return ctx.record(taskId);
  }
  const request = { method: settings.mergeMethod, sha: headSha };
  if (settings.merge === "queue") {
    const queued = await ctx.forge.enableAutoMerge(row.number, request);
    ctx.logger.info(
      { taskId, number: row.number, outcome: queued },
      "handed the pull request to the forge's queue",
    );
    return ctx.record(taskId);
  }
  if (row.checks !== "success") return;
  const merged = await ctx.forge.merge(row.number, request);
  if (merged.kind === "merged") {
    await ctx.apply({ kind: "pr-merged", taskId, mergeCommitSha: merged.sha, mergedBy: await ctx.login() });
    await syncStacked(ctx, taskId);
  } else {
    ctx.logger.warn(
      { taskId, number: row.number, outcome: merged },
      "the forge did not merge the pull request",
    );
    await ctx.queue.add({ v: 1, kind: "sync", projectId: ctx.project.id, taskId });
  }
  await ctx.record(taskId);
}

/**
 * After a merge: each other open pull request is read once, unconditionally (a conditional
 * read may well be a 304, since nothing changed on it), and one whose forge base differs from
 * the recorded one (stacked on the merged one, which the domain moved onto its base, rule 19)
 * is retargeted by `ensure` at once rather than at its next change.
 */
async function syncStacked(ctx: ForgeJobContext, mergedTaskId: string): Promise<void> {
  for (const open of await listOpenPullRequests(ctx.db, ctx.project.id)) {
    if (open.task_id === mergedTaskId || open.number === null || open.status !== "open") continue;
    const read = await ctx.forge.readPullRequest(open.number, null);
    if (read.changed && read.value.status === "open" && read.value.base !== open.base) {
      await ctx.queue.add({
        v: 1,
        kind: "ensure",
        projectId: ctx.project.id,
        taskId: open.task_id,
        headSha: open.head_sha,
      });
    }
    await ctx.record(open.task_id);
  }
}

/**
 * Whether the task's open pull request already merged on the forge, read now (unconditionally:
 * the next poll may be minutes away); a merge found is recorded as a sync would (`pr-merged`,
 * then the pull requests stacked on it). Intake asks before it cancels the task of a closed
 * issue: a person who merges and then closes the issue by hand closed it after the merge.
 */
export async function recordMergeIfMerged(ctx: ForgeJobContext, taskId: string): Promise<boolean> {
  const row = await getPullRequestRow(ctx.db, ctx.project.id, taskId);
  if (!row || row.number === null || row.status !== "open") return false;
  const seen = await ctx.forge.getPullRequest(row.number);
  if (seen.status !== "merged") return false;
  await ctx.apply({
    kind: "pr-merged",
    taskId,
    mergeCommitSha: seen.mergeCommitSha ?? seen.headSha,
    mergedBy: seen.mergedBy,
  });
  await ctx.record(taskId);
  await syncStacked(ctx, taskId);
  return true;
}

/**
 * Closes the pull request of a cancelled task; the domain then records it closed. One that merged
 * meanwhile (a person merged it just before the cancel) is recorded as merged, never as closed
 * unmerged (rule 18: the cancelled task only records the merge).
 */
export async function closePull(ctx: ForgeJobContext, taskId: string, number: number): Promise<void> {
  const row = await getPullRequestRow(ctx.db, ctx.project.id, taskId);
  if (row?.status !== "open" || row.number !== number) return;
  if (await recordMergeIfMerged(ctx, taskId)) return;
  await ctx.forge.closePullRequest(number);
  await ctx.apply({
    kind: "pr-closed",
    taskId,
    onClosed: ctx.policy.landing.pullRequest.onClosed,
    closedBy: null,
  });
  await ctx.record(taskId);
}

/** Routes a stored webhook delivery to its task and asks for its sync; marks the delivery applied. */
export async function applyDelivery(
  ctx: ForgeJobContext,
  forge: "github" | "gitlab" | "gitea",
  deliveryId: string,
): Promise<void> {
  const delivery = await getForgeDelivery(ctx.db, forge, deliveryId);
  if (!delivery || delivery.applied_at !== null || delivery.project_id !== ctx.project.id) return;
  const route =
    forge === ctx.policy.forge?.kind
      ? routeDelivery(forge, delivery.payload, ctx.policy.forge.repository)
      : null;
  let taskId: string | null = null;
  if (route?.by === "branch") {
    taskId = (await findPullRequestByBranch(ctx.db, ctx.project.id, route.branch))?.task_id ?? null;
  } else if (route) {
    const open = await listOpenPullRequests(ctx.db, ctx.project.id);
    const match = open.find((pr) =>
      route.by === "number" ? pr.number === route.number : pr.head_sha === route.sha,
    );
    taskId = match?.task_id ?? null;
  }
  // The sync runs as the task's own job, never alongside another sync of the task.
  if (taskId !== null) await ctx.queue.add({ v: 1, kind: "sync", projectId: ctx.project.id, taskId });
  await markForgeDeliveryApplied(ctx.db, forge, deliveryId);
}

async function full<T>(
  read: ConditionalRead<T>,
  again: () => Promise<ConditionalRead<T>>,
): Promise<{ value: T; etag: string | null }> {
  const value = read.changed ? read : await again();
  if (!value.changed) throw new Error("an unconditional read answered unchanged");
  return { value: value.value, etag: value.etag };
}

function joinTags(...tags: (string | null)[]): string | null {
  return tags.every((t) => t === null) ? null : tags.map((t) => t ?? "").join("\n");
}

function splitTags(tag: string | null): (string | null)[] {
  return tag === null ? [] : tag.split("\n").map((t) => t || null);
}

function str(value: unknown): string | null {
  return typeof value === "string" && value.trim() !== "" ? value : null;
}
