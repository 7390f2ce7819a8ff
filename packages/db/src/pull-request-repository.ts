/**
 * Pull requests (migration 0010): the record the state machine keeps on each task
 * (`Task.pullRequest`, written by applyTransition with the task) and, beside it, the forge
 * runner's polling state (ETags, when it last read, API calls per task), which only the
 * runner writes and no transition touches.
 */
import type { Task, TaskPullRequest } from "@overseer/domain";
import { sql } from "kysely";
import type { Db } from "./connection.ts";
import type { PullRequestRow } from "./database-schema.ts";

export function pullRequestFromRow(row: PullRequestRow): TaskPullRequest {
  return {
    number: row.number,
    url: row.url,
    branch: row.branch,
    base: row.base,
    headSha: row.head_sha,
    status: row.status,
    checks: row.checks,
    review: row.review,
    approvals: row.approvals,
    ciFailures: row.ci_failures,
    mergeCommitSha: row.merge_commit_sha,
    mergedBy: row.merged_by,
  };
}

/** The pull requests of a project's tasks (all of them, or of `taskIds`), by task id. */
export async function loadPullRequests(
  db: Db,
  projectId: string,
  taskIds?: readonly string[],
): Promise<Map<string, TaskPullRequest>> {
  if (taskIds !== undefined && taskIds.length === 0) return new Map();
  let q = db.selectFrom("pull_requests").selectAll().where("project_id", "=", projectId);
  if (taskIds !== undefined) q = q.where("task_id", "in", [...taskIds]);
  const rows = await q.execute();
  return new Map(rows.map((r) => [r.task_id, pullRequestFromRow(r)]));
}

/**
 * Writes the pull request of each changed task whose record differs from `before` (inside the
 * transition's transaction). A new head or number starts the runner's conditional reads over
 * (its ETags were for the previous one); the poll time and API-call count are kept.
 */
export async function persistPullRequests(
  db: Db,
  projectId: string,
  tasks: readonly Task[],
  before: ReadonlyMap<string, Task>,
  now: Date,
): Promise<void> {
  for (const task of tasks) {
    const pr = task.pullRequest;
    if (pr === null || samePullRequest(pr, before.get(task.id)?.pullRequest ?? null)) continue;
    const values = {
      number: pr.number,
      url: pr.url,
      branch: pr.branch,
      base: pr.base,
      head_sha: pr.headSha,
      status: pr.status,
      checks: pr.checks,
      review: pr.review,
      approvals: pr.approvals,
      ci_failures: pr.ciFailures,
      merge_commit_sha: pr.mergeCommitSha,
      merged_by: pr.mergedBy,
      updated_at: now,
    };
    const fresh = sql<boolean>`pull_requests.head_sha IS DISTINCT FROM excluded.head_sha OR pull_requests.number IS DISTINCT FROM excluded.number`;
    await db
      .insertInto("pull_requests")
      .values({ project_id: projectId, task_id: task.id, ...values, created_at: now })
      .onConflict((oc) =>
        oc.columns(["project_id", "task_id"]).doUpdateSet({
          ...values,
          etag_pull: sql`CASE WHEN ${fresh} THEN NULL ELSE pull_requests.etag_pull END`,
          etag_checks: sql`CASE WHEN ${fresh} THEN NULL ELSE pull_requests.etag_checks END`,
          etag_reviews: sql`CASE WHEN ${fresh} THEN NULL ELSE pull_requests.etag_reviews END`,
        }),
      )
      .execute();
  }
}

function samePullRequest(a: TaskPullRequest, b: TaskPullRequest | null): boolean {
  if (b === null) return false;
  return (Object.keys(a) as (keyof TaskPullRequest)[]).every((key) => a[key] === b[key]);
}

/** The row (record and polling state) of a task's pull request, if it has one. */
export function getPullRequestRow(
  db: Db,
  projectId: string,
  taskId: string,
): Promise<PullRequestRow | undefined> {
  return db
    .selectFrom("pull_requests")
    .selectAll()
    .where("project_id", "=", projectId)
    .where("task_id", "=", taskId)
    .executeTakeFirst();
}

/**
 * The task's pull request while the task waits on it (`pr_open`): the only state in which a
 * merge may be asked for. A task sent back to an executor (red checks, changes requested) keeps
 * its open pull request, but nothing of it may be merged or queued until its next approval.
 */
export function getWaitingPullRequestRow(
  db: Db,
  projectId: string,
  taskId: string,
): Promise<PullRequestRow | undefined> {
  return db
    .selectFrom("pull_requests")
    .innerJoin("tasks", (join) =>
      join
        .onRef("tasks.project_id", "=", "pull_requests.project_id")
        .onRef("tasks.id", "=", "pull_requests.task_id"),
    )
    .selectAll("pull_requests")
    .where("pull_requests.project_id", "=", projectId)
    .where("pull_requests.task_id", "=", taskId)
    .where("tasks.status", "=", "pr_open")
    .executeTakeFirst();
}

/** The pull request whose head is `branch` (routing a webhook delivery to its task). */
export function findPullRequestByBranch(
  db: Db,
  projectId: string,
  branch: string,
): Promise<PullRequestRow | undefined> {
  return db
    .selectFrom("pull_requests")
    .selectAll()
    .where("project_id", "=", projectId)
    .where("branch", "=", branch)
    .executeTakeFirst();
}

/**
 * A project's pull requests still opening or open, least recently read first: what the forge
 * runner polls (cost grows with open pull requests, never with merged history).
 */
export function listOpenPullRequests(db: Db, projectId: string): Promise<PullRequestRow[]> {
  return db
    .selectFrom("pull_requests")
    .selectAll()
    .where("project_id", "=", projectId)
    .where("status", "in", ["opening", "open"])
    .orderBy(sql`polled_at NULLS FIRST`)
    .orderBy("task_id")
    .execute();
}

export interface PullRequestPoll {
  /** The validators the forge answered with; `undefined` keeps the stored one. */
  readonly etagPull?: string | null | undefined;
  readonly etagChecks?: string | null | undefined;
  readonly etagReviews?: string | null | undefined;
  /** Forge API calls this read made for the task (added to its count). */
  readonly apiCalls: number;
  /** Of those, the ones answered 304 Not Modified. Default 0. */
  readonly notModified?: number;
}

/**
 * Records one read of a task's pull request by the forge runner: the ETags to send next time,
 * the time, and the API calls it cost. `false` when the task has no pull request row.
 */
export async function recordPullRequestPoll(
  db: Db,
  projectId: string,
  taskId: string,
  poll: PullRequestPoll,
): Promise<boolean> {
  if (!Number.isInteger(poll.apiCalls) || poll.apiCalls < 0)
    throw new RangeError(`apiCalls must be a non-negative integer, not ${poll.apiCalls}`);
  const notModified = poll.notModified ?? 0;
  if (!Number.isInteger(notModified) || notModified < 0)
    throw new RangeError(`notModified must be a non-negative integer, not ${notModified}`);
  const result = await db
    .updateTable("pull_requests")
    .set({
      ...(poll.etagPull !== undefined ? { etag_pull: poll.etagPull } : {}),
      ...(poll.etagChecks !== undefined ? { etag_checks: poll.etagChecks } : {}),
      ...(poll.etagReviews !== undefined ? { etag_reviews: poll.etagReviews } : {}),
      polled_at: sql`now()`,
      api_calls: sql`api_calls + ${poll.apiCalls}`,
      api_not_modified: sql`api_not_modified + ${notModified}`,
    })
    .where("project_id", "=", projectId)
    .where("task_id", "=", taskId)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Forge API calls per task of a project's pull requests, and their total (metrics). */
export async function pullRequestApiCalls(
  db: Db,
  projectId: string,
): Promise<{ total: number; byTask: Record<string, number> }> {
  const rows = await db
    .selectFrom("pull_requests")
    .select(["task_id", "api_calls"])
    .where("project_id", "=", projectId)
    .execute();
  const byTask = Object.fromEntries(rows.map((r) => [r.task_id, r.api_calls]));
  return { total: rows.reduce((sum, r) => sum + r.api_calls, 0), byTask };
}

/** Every project's pull requests by status, with the forge API calls made for them (metrics). */
export async function countPullRequests(db: Db): Promise<
  {
    projectId: string;
    status: PullRequestRow["status"];
    count: number;
    apiCalls: number;
    apiNotModified: number;
  }[]
> {
  const rows = await db
    .selectFrom("pull_requests")
    .select([
      "project_id",
      "status",
      (eb) => eb.fn.countAll<string>().as("n"),
      (eb) => eb.fn.sum<string>("api_calls").as("calls"),
      (eb) => eb.fn.sum<string>("api_not_modified").as("not_modified"),
    ])
    .groupBy(["project_id", "status"])
    .orderBy("project_id")
    .orderBy("status")
    .execute();
  return rows.map((r) => ({
    projectId: r.project_id,
    status: r.status,
    count: Number(r.n),
    apiCalls: Number(r.calls ?? 0),
    apiNotModified: Number(r.not_modified ?? 0),
  }));
}

/** Cumulative counts of a histogram by project: `cumulative[i]` ≤ `bounds[i]`, with count and sum. */
export interface ProjectBuckets {
  readonly projectId: string;
  readonly cumulative: readonly number[];
  readonly count: number;
  readonly sum: number;
}

/**
 * Forge API calls per task, by project, over the pull requests that ended (merged or closed:
 * a task's whole cost), bucketed in SQL (`bounds`: upper bounds, ascending).
 */
export async function pullRequestApiCallBuckets(
  db: Db,
  bounds: readonly number[],
): Promise<ProjectBuckets[]> {
  const filters = bounds.map(
    (b, i) => sql`count(*) FILTER (WHERE api_calls <= ${Math.floor(b)})::int AS ${sql.ref(`b${i}`)}`,
  );
  const result = await sql<Record<string, number | string>>`
    SELECT project_id, ${sql.join([...filters, sql`count(*)::int AS n`, sql`COALESCE(sum(api_calls), 0)::float8 AS total`])}
    FROM pull_requests
    WHERE status IN ('merged', 'closed')
    GROUP BY project_id
    ORDER BY project_id`.execute(db);
  return result.rows.map((row) => ({
    projectId: String(row.project_id),
    cumulative: bounds.map((_, i) => Number(row[`b${i}`] ?? 0)),
    count: Number(row.n ?? 0),
    sum: Number(row.total ?? 0),
  }));
}
