/**
 * Pull requests in Postgres (migration 0010): the record the state machine keeps on a task
 * round-trips through applyTransition and every task read, and the forge runner's polling
 * state (ETags, poll time, API calls) survives transitions, restarting only for a new head.
 */
import { taskCard } from "@overseer/test-support";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  applyTransition,
  createProject,
  createScratchDatabase,
  findPullRequestByBranch,
  getPullRequestRow,
  getTask,
  getWaitingPullRequestRow,
  listOpenPullRequests,
  listTasks,
  loadProjectState,
  pullRequestApiCalls,
  recordPullRequestPoll,
  type ScratchDatabase,
  sql,
  taskRunLines,
} from "../src/index.ts";

let scratch: ScratchDatabase;

beforeAll(async () => {
  scratch = await createScratchDatabase();
});
afterAll(async () => {
  await scratch?.drop();
});

/** A project whose task S00-001 is approved in pull_request mode at `head`: pr_open. */
async function prOpenProject(id: string, head = "c0ffee"): Promise<void> {
  await createProject(scratch.db, { id, repo: "/tmp/none", runnerConfig: {} });
  await applyTransition(scratch.db, id, {
    kind: "import-tasks",
    tasks: [taskCard("S00-001"), taskCard("S00-002", ["S00-001"])],
    by: "test",
  });
  await applyTransition(scratch.db, id, {
    kind: "start-project",
    by: "test",
    stage: null,
    sessionsLimit: null,
  });
  const execute = (await applyTransition(scratch.db, id, { kind: "claim" })).changes.runs[0]!;
  await applyTransition(scratch.db, id, {
    kind: "submit",
    runId: execute.id,
    message: "work",
    commitSha: head,
    branchHead: head,
  });
  const review = (await applyTransition(scratch.db, id, { kind: "claim" })).changes.runs[0]!;
  await applyTransition(scratch.db, id, {
    kind: "approve",
    runId: review.id,
    feedback: "Looks right",
    landedSha: head,
    landedBranch: "overseer/pr/S00-001",
    reviewedHead: head,
    pullRequest: { base: "main" },
  });
}

describe("pull requests in Postgres", () => {
  it("the task's run lines carry each transition kind and what the run said with it (the PR body's summary and verdict)", async () => {
    await prOpenProject("pr-lines");
    const lines = await taskRunLines(scratch.db, "pr-lines", "S00-001");
    expect(lines.map((l) => [l.action, l.transition])).toEqual([
      ["execute", "submit"],
      ["review", "approve"],
    ]);
    expect(lines[0]?.said).toMatchObject({ message: "work" });
    expect(lines[1]?.said).toMatchObject({ feedback: "Looks right" });
    expect(await taskRunLines(scratch.db, "pr-lines", "S00-002")).toEqual([]);
  });

  it("offers a pull request to merge only while its task waits on it (pr_open)", async () => {
    await prOpenProject("pr-wait");
    expect((await getWaitingPullRequestRow(scratch.db, "pr-wait", "S00-001"))?.head_sha).toBe("c0ffee");
    await applyTransition(scratch.db, "pr-wait", {
      kind: "pr-opened",
      taskId: "S00-001",
      number: 3,
      url: "https://forge.test/o/r/pull/3",
      headSha: "c0ffee",
    });
    await applyTransition(scratch.db, "pr-wait", {
      kind: "pr-checks",
      taskId: "S00-001",
      headSha: "c0ffee",
      state: "failure",
      failing: [{ name: "unit", url: null, logTail: "FAIL" }],
      maxAttempts: 3,
    });
    // Back with an executor: the pull request stays open, but is no longer offered to a merge.
    expect((await getPullRequestRow(scratch.db, "pr-wait", "S00-001"))?.status).toBe("open");
    expect(await getWaitingPullRequestRow(scratch.db, "pr-wait", "S00-001")).toBeUndefined();
  });

  it("an approve in pull_request mode stores pr_open and an opening record that every read returns", async () => {
    await prOpenProject("pr-a");
    const task = await getTask(scratch.db, "pr-a", "S00-001");
    expect(task?.status).toBe("pr_open");
    const expected = {
      number: null,
      url: null,
      branch: "overseer/pr/S00-001",
      base: "main",
      headSha: "c0ffee",
      status: "opening",
      checks: "pending",
      review: "none",
      approvals: 0,
      ciFailures: 0,
      mergeCommitSha: null,
      mergedBy: null,
    };
    expect(task?.pullRequest).toEqual(expected);
    const state = await loadProjectState(scratch.db, "pr-a");
    expect(state.tasks.get("S00-001")?.pullRequest).toEqual(expected);
    expect(state.tasks.get("S00-002")?.pullRequest).toBeNull();
    const listed = await listTasks(scratch.db, "pr-a");
    expect(listed.tasks.find((t) => t.id === "S00-001")?.pullRequest).toEqual(expected);
    const events = await scratch.db
      .selectFrom("events")
      .select("type")
      .where("project_id", "=", "pr-a")
      .where("type", "=", "task.pr_requested")
      .execute();
    expect(events).toHaveLength(1);
  });

  it("forge reports update the record; a merge makes the task done with the merge commit", async () => {
    await prOpenProject("pr-b");
    await applyTransition(scratch.db, "pr-b", {
      kind: "pr-opened",
      taskId: "S00-001",
      number: 42,
      url: "https://forge.test/o/r/pull/42",
      headSha: "c0ffee",
    });
    await applyTransition(scratch.db, "pr-b", {
      kind: "pr-checks",
      taskId: "S00-001",
      headSha: "c0ffee",
      state: "success",
      failing: [],
      maxAttempts: 3,
    });
    await applyTransition(scratch.db, "pr-b", {
      kind: "pr-review",
      taskId: "S00-001",
      headSha: "c0ffee",
      approvals: 1,
      changesRequested: false,
      threads: [],
      comments: [],
      requiredApprovals: 1,
    });
    expect((await getTask(scratch.db, "pr-b", "S00-001"))?.pullRequest).toMatchObject({
      number: 42,
      status: "open",
      checks: "success",
      review: "approved",
      approvals: 1,
    });
    const found = await findPullRequestByBranch(scratch.db, "pr-b", "overseer/pr/S00-001");
    expect(found?.task_id).toBe("S00-001");
    const merged = await applyTransition(scratch.db, "pr-b", {
      kind: "pr-merged",
      taskId: "S00-001",
      mergeCommitSha: "m3rge",
      mergedBy: "alice",
    });
    expect(merged.eventRows.map((e) => e.type)).toEqual(["pr.merged", "task.approved"]);
    const done = await getTask(scratch.db, "pr-b", "S00-001");
    expect(done?.status).toBe("done");
    expect(done?.pullRequest).toMatchObject({ status: "merged", mergeCommitSha: "m3rge", mergedBy: "alice" });
    expect(await listOpenPullRequests(scratch.db, "pr-b")).toEqual([]);
    // Redelivered: nothing written.
    const again = await applyTransition(scratch.db, "pr-b", {
      kind: "pr-merged",
      taskId: "S00-001",
      mergeCommitSha: "m3rge",
      mergedBy: "alice",
    });
    expect(again.outcome).toBe("already_applied");
  });

  it("keeps the runner's ETags and call counts across transitions, and restarts the ETags for a new head", async () => {
    await prOpenProject("pr-c");
    await applyTransition(scratch.db, "pr-c", {
      kind: "pr-opened",
      taskId: "S00-001",
      number: 5,
      url: "https://forge.test/o/r/pull/5",
      headSha: "c0ffee",
    });
    expect(
      await recordPullRequestPoll(scratch.db, "pr-c", "S00-001", {
        etagPull: 'W/"p1"',
        etagChecks: 'W/"c1"',
        etagReviews: 'W/"r1"',
        apiCalls: 3,
      }),
    ).toBe(true);
    expect(
      await recordPullRequestPoll(scratch.db, "pr-c", "S00-001", { etagChecks: 'W/"c2"', apiCalls: 1 }),
    ).toBe(true);
    expect(await recordPullRequestPoll(scratch.db, "pr-c", "S00-002", { apiCalls: 1 })).toBe(false);
    await expect(recordPullRequestPoll(scratch.db, "pr-c", "S00-001", { apiCalls: -1 })).rejects.toThrow(
      RangeError,
    );
    const open = await listOpenPullRequests(scratch.db, "pr-c");
    expect(open.map((r) => [r.task_id, r.etag_pull, r.etag_checks, r.etag_reviews, r.api_calls])).toEqual([
      ["S00-001", 'W/"p1"', 'W/"c2"', 'W/"r1"', 4],
    ]);
    expect(open[0]?.polled_at).toBeInstanceOf(Date);
    // Green checks on the same head: the record changes, the polling state stays.
    await applyTransition(scratch.db, "pr-c", {
      kind: "pr-checks",
      taskId: "S00-001",
      headSha: "c0ffee",
      state: "success",
      failing: [],
      maxAttempts: 3,
    });
    let row = await getPullRequestRow(scratch.db, "pr-c", "S00-001");
    expect([row?.checks, row?.etag_pull, row?.api_calls]).toEqual(["success", 'W/"p1"', 4]);
    // A re-run turns red, then a new approved head: same pull request, ETags start over, the count stays.
    await applyTransition(scratch.db, "pr-c", {
      kind: "pr-checks",
      taskId: "S00-001",
      headSha: "c0ffee",
      state: "failure",
      failing: [{ name: "lint", url: null, logTail: "error: unused" }],
      maxAttempts: 3,
    });
    const todo = await getTask(scratch.db, "pr-c", "S00-001");
    expect(todo?.status).toBe("todo");
    expect(todo?.feedback).toContain("error: unused");
    const execute = (await applyTransition(scratch.db, "pr-c", { kind: "claim" })).changes.runs[0]!;
    await applyTransition(scratch.db, "pr-c", {
      kind: "submit",
      runId: execute.id,
      message: "fix lint",
      commitSha: "beef02",
      branchHead: "beef02",
    });
    const review = (await applyTransition(scratch.db, "pr-c", { kind: "claim" })).changes.runs[0]!;
    await applyTransition(scratch.db, "pr-c", {
      kind: "approve",
      runId: review.id,
      landedSha: "beef02",
      landedBranch: "overseer/pr/S00-001",
      reviewedHead: "beef02",
      pullRequest: { base: "main" },
    });
    row = await getPullRequestRow(scratch.db, "pr-c", "S00-001");
    expect(row).toMatchObject({
      number: 5,
      status: "open",
      head_sha: "beef02",
      checks: "pending",
      ci_failures: 1,
      etag_pull: null,
      etag_checks: null,
      etag_reviews: null,
      api_calls: 4,
    });
    expect(await pullRequestApiCalls(scratch.db, "pr-c")).toEqual({ total: 4, byTask: { "S00-001": 4 } });
  });

  it("the status check admits pr_open and nothing unknown; a PR row needs its task", async () => {
    await prOpenProject("pr-d");
    await expect(
      sql`UPDATE tasks SET status = 'pr_closed' WHERE project_id = 'pr-d'`.execute(scratch.db),
    ).rejects.toThrow(/tasks_status_check/);
    await expect(
      scratch.db
        .insertInto("pull_requests")
        .values({
          project_id: "pr-d",
          task_id: "nope",
          branch: "overseer/pr/nope",
          base: "main",
          head_sha: "x",
          status: "open",
          number: 1,
          url: null,
          merge_commit_sha: null,
          merged_by: null,
          created_at: new Date(),
          updated_at: new Date(),
        })
        .execute(),
    ).rejects.toThrow(/foreign key/);
  });
});
