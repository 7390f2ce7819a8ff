/**
 * Two-way status, tracker side, against real Postgres and Redis (BullMQ) and the GitHub double
 * (every request and answer checked against @octokit/openapi): an intake-made task moving
 * through started → PR opened → merged writes one `tracker_updates` row per moment in the
 * transaction of its event, and the runner turns each into exactly one comment (the PR's with
 * its URL), the labels of the status map, and a close on merge; a redelivered job or a lost
 * answer posts nothing twice; a tracker 5xx is retried with backoff and then delivered; a
 * "Needs you" stop writes a `blocked` update with its reason; a token variable that is not set
 * makes the update a dead letter at once, its error naming the variable; a pause at a bound is a
 * `project.paused` outbox row and a `blocked` update of each issue under way. (Octokit's throttling spaces
 * comment writes about 3 s apart, as GitHub asks, so a case with three comments takes ~8 s.)
 */
import { applyTransition, createProject, listTrackerUpdates } from "@overseer/db";
import { TrackerStatusQueue } from "@overseer/queue";
import { until } from "@overseer/test-support";
import { startProject } from "@overseer/transitions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TrackerStatusRunner } from "../src/intake/tracker-status-runner.ts";
import { claimAndStart, githubSource, intakeRunner, REPO, useIntakeCase } from "./intake-case.ts";

const c = useIntakeCase("tracker-status");
let statusQueue: TrackerStatusQueue;

beforeAll(() => {
  statusQueue = new TrackerStatusQueue(c.redis, { prefix: c.prefix, attempts: 3, backoffMs: 50 });
});

afterAll(async () => {
  await statusQueue?.close();
});

function statusRunner(tokens: Record<string, string | undefined> = c.env): TrackerStatusRunner {
  return new TrackerStatusRunner(
    {
      db: c.scratch.db,
      queue: statusQueue,
      notifications: c.scratch.notifications,
      workerConnection: c.redis,
      logger: c.logger,
      env: tokens,
    },
    // GitHub writes unpaced (OVERSEER_GITHUB_WRITE_INTERVAL_MS=0): the double sets no limit.
    {
      prefix: c.prefix,
      notifyConcurrency: 2,
      notifyAttempts: 3,
      reconcileIntervalMs: 60_000,
      githubWriteIntervalMs: 0,
    },
  );
}

/** A project with a GitHub intake source and one issue taken as a task; the issue number and task id. */
async function intakeTask(projectId: string): Promise<{ number: number; taskId: string }> {
  await createProject(c.scratch.db, { id: projectId, repo: "/tmp/none", runnerConfig: {}, objective: "o" });
  await githubSource(c, `gh-${projectId}`, projectId);
  const number = c.github.openIssue(REPO, {
    title: `Work for ${projectId}`,
    labels: ["overseer"],
    assignees: [c.bot.login],
  });
  const intake = intakeRunner(c);
  await intake.process({ v: 1, kind: "read", sourceId: `gh-${projectId}`, issueId: String(number) });
  await startProject(c.transitions, projectId);
  return { number, taskId: `acme-app-${number}` };
}

/** The task is executed, reviewed and approved in pull_request mode, its PR opened (#7). */
async function throughPullRequest(projectId: string, taskId: string, url: string): Promise<void> {
  const execute = await claimAndStart(c.scratch.db, projectId);
  await applyTransition(c.scratch.db, projectId, {
    kind: "submit",
    runId: execute,
    message: "work",
    commitSha: "c0ffee",
    branchHead: "c0ffee",
  });
  const review = await claimAndStart(c.scratch.db, projectId); // a second run.started: still one "started"
  await applyTransition(c.scratch.db, projectId, {
    kind: "approve",
    runId: review,
    feedback: "Looks right",
    landedSha: "c0ffee",
    landedBranch: `overseer/pr/${taskId}`,
    reviewedHead: "c0ffee",
    pullRequest: { base: "main" },
  });
  await applyTransition(c.scratch.db, projectId, {
    kind: "pr-opened",
    taskId,
    number: 7,
    url,
    headSha: "c0ffee",
  });
}

const allDelivered = (projectId: string, count: number) => async () => {
  const rows = await listTrackerUpdates(c.scratch.db, { projectId });
  return rows.length === count && rows.every((r) => r.status === "delivered") ? rows : undefined;
};

describe("two-way status (GitHub Issues)", () => {
  it("comments once per moment, moves labels per the map and closes the issue on merge", async () => {
    const { number, taskId } = await intakeTask("flow");
    const url = "https://c.github.test/acme/app/pull/7";
    await throughPullRequest("flow", taskId, url);
    await applyTransition(c.scratch.db, "flow", {
      kind: "pr-opened",
      taskId,
      number: 7,
      url,
      headSha: "c0ffee",
    });
    // Written with their events, before anything is sent.
    const written = await listTrackerUpdates(c.scratch.db, { projectId: "flow" });
    expect(written.map((r) => [r.moment, r.status]).reverse()).toEqual([
      ["started", "pending"],
      ["pr_opened", "pending"],
    ]);
    const runner = statusRunner();
    await runner.start();
    try {
      await until("started and PR comments", allDelivered("flow", 2));
      const issue = () => c.github.issues(REPO).find((i) => i.number === number);
      expect(issue()?.labels).toEqual(expect.arrayContaining(["overseer", "overseer:working"]));
      await applyTransition(c.scratch.db, "flow", {
        kind: "pr-merged",
        taskId,
        mergeCommitSha: "beef",
        mergedBy: "alice",
      });
      const rows = await until("the merge update", allDelivered("flow", 3));
      expect(rows.map((r) => r.moment).reverse()).toEqual(["started", "pr_opened", "merged"]);
      const bodies = c.github.comments(REPO, number).map((c) => c.body);
      expect(bodies).toHaveLength(3);
      expect(bodies[0]).toContain(`started work on this issue as task \`${taskId}\``);
      expect(bodies[1]).toContain(url);
      expect(bodies[2]).toContain("merged");
      expect(issue()?.state).toBe("closed");
      expect(issue()?.labels).not.toContain("overseer:working");

      // A redelivered job of a delivered update writes nothing.
      for (const row of rows) await runner.process({ v: 1, updateId: row.id });
      expect(c.github.comments(REPO, number)).toHaveLength(3);
    } finally {
      await runner.stop();
    }
  });

  it("posts a comment whose answer was lost only once when the write is retried", async () => {
    const { number } = await intakeTask("lost");
    c.github.fail({ status: 502, matching: /^POST .*\/issues\/\d+\/comments$/, afterEffect: true });
    await claimAndStart(c.scratch.db, "lost");
    const runner = statusRunner();
    await runner.start();
    try {
      await until("the started update", allDelivered("lost", 1));
      expect(c.github.comments(REPO, number)).toHaveLength(1);
    } finally {
      await runner.stop();
    }
  });

  it("retries a tracker 5xx with backoff, then delivers", async () => {
    const { number } = await intakeTask("flaky");
    // The comment's POST is not retried inside the adapter: the first job attempt fails, the next delivers.
    c.github.fail({ status: 503, matching: new RegExp(`^POST .*/issues/${number}/comments$`) });
    const runId = await claimAndStart(c.scratch.db, "flaky");
    const runner = statusRunner();
    await runner.start();
    try {
      const [row] = await until("the started update", allDelivered("flaky", 1));
      expect(row?.attempts).toBe(2);
      expect(row?.last_error).toBeNull();
      expect(c.github.comments(REPO, number)).toHaveLength(1);
    } finally {
      await runner.stop();
    }
    // A "Needs you" stop is a `blocked` update, written with its event and carrying why.
    await applyTransition(c.scratch.db, "flaky", {
      kind: "escalate",
      runId,
      reason: "A product decision.",
      needsUser: true,
      question: "Which database?",
      options: [{ id: "postgres", label: "Postgres" }],
    });
    const [blocked] = await listTrackerUpdates(c.scratch.db, { projectId: "flaky", status: "pending" });
    expect(blocked).toMatchObject({ moment: "blocked", data: { detail: expect.any(String) } });
  });

  it("a token variable unset or empty on the coordinator makes the update a dead letter at once, naming it", async () => {
    const { number } = await intakeTask("notoken");
    await claimAndStart(c.scratch.db, "notoken");
    const runner = statusRunner({ OVERSEER_TEST_GITHUB_TOKEN: "" });
    await runner.start();
    try {
      const [dead] = await until("the dead letter", async () => {
        const rows = await listTrackerUpdates(c.scratch.db, { projectId: "notoken" });
        return rows.length === 1 && rows[0]?.status === "dead" ? rows : undefined;
      });
      // One attempt of the three allowed: no retry can mend a missing token.
      expect(dead?.attempts).toBe(1);
      expect(dead?.last_error).toMatch(
        /the environment variable OVERSEER_TEST_GITHUB_TOKEN is not set \(or is empty\)/,
      );
      expect(c.github.comments(REPO, number)).toHaveLength(0);
    } finally {
      await runner.stop();
    }
  });

  it("a pause at a bound (sessions, not only budget) writes project.paused to the outbox and a blocked update per issue under way", async () => {
    const { number, taskId } = await intakeTask("bound");
    await claimAndStart(c.scratch.db, "bound");
    await applyTransition(c.scratch.db, "bound", {
      kind: "set-project-status",
      status: "paused",
      by: "coordinator",
      reason: "max_sessions (1) reached",
      bound: "sessions",
    });
    const outbox = await c.scratch.db
      .selectFrom("notification_outbox")
      .select(["type", "data"])
      .where("project_id", "=", "bound")
      .execute();
    expect(outbox).toEqual([
      expect.objectContaining({
        type: "project.paused",
        data: expect.objectContaining({ bound: "sessions" }),
      }),
    ]);
    const runner = statusRunner();
    await runner.start();
    try {
      const rows = await until("the started and blocked updates", allDelivered("bound", 2));
      expect(rows.map((r) => [r.task_id, r.moment]).reverse()).toEqual([
        [taskId, "started"],
        [taskId, "blocked"],
      ]);
      const bodies = c.github.comments(REPO, number).map((c) => c.body);
      expect(bodies.at(-1)).toContain(
        "is paused: its project stopped at its sessions bound (max_sessions (1) reached).",
      );
      expect(bodies.at(-1)).toContain("An operator can raise the sessions bound and start the project again");
      expect(bodies.at(-1)).not.toContain("Reply here");
      const issue = c.github.issues(REPO).find((i) => i.number === number);
      expect(issue?.labels).toContain("overseer:blocked");
    } finally {
      await runner.stop();
    }
  });
});
