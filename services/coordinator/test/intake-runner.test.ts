/**
 * The coordinator's intake runner against real Postgres and Redis (BullMQ) and the GitHub double
 * (every request and answer checked against @octokit/openapi): a labelled, assigned issue becomes
 * a task once however often it is read (polls, redelivered jobs, a second runner); a person's
 * comment answers the task's pending "Needs you" card through the resolve command; an issue
 * closed in the tracker cancels its task; a missing token fails at once (no retries) with an error
 * naming the variable, shown as the source's last error.
 */
import {
  applyTransition,
  createIntakeSource,
  createProject,
  createScratchDatabase,
  getDecision,
  getIntakeSource,
  getTask,
  listTasks,
  recordIntakePoll,
  type ScratchDatabase,
} from "@overseer/db";
import { IntakeQueue, type Redis } from "@overseer/queue";
import { createLogger } from "@overseer/runtime";
import { createTestRedis, deleteRedisKeys, GitHubDouble, uniqueRedisPrefix } from "@overseer/test-support";
import { startProject, TransitionApplier } from "@overseer/transitions";
import { UnrecoverableError } from "bullmq";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { IntakeRunner } from "../src/intake/intake-runner.ts";

const REPO = "acme/app";
const BOT = { login: "overseer-bot", token: "ghp_intake_bot" };
const prefix = uniqueRedisPrefix("intake");
const logger = createLogger({ name: "intake-test", level: "silent" });
const env = { OVERSEER_TEST_GITHUB_TOKEN: BOT.token };

let scratch: ScratchDatabase;
let redis: Redis;
let queue: IntakeQueue;
let github: GitHubDouble;
let transitions: TransitionApplier;

function runner(): IntakeRunner {
  return new IntakeRunner(
    { db: scratch.db, queue, transitions, workerConnection: redis, logger, env },
    { prefix, intakePollMs: 60_000, intakeConcurrency: 2 },
  );
}

async function source(id: string, projectId: string, tokenEnv = "OVERSEER_TEST_GITHUB_TOKEN") {
  await createProject(scratch.db, { id: projectId, repo: "/tmp/none", runnerConfig: {}, objective: "o" });
  return createIntakeSource(scratch.db, {
    id,
    projectId,
    kind: "github",
    baseUrl: github.url,
    query: { container: REPO, labels: ["overseer"], assignee: BOT.login },
    config: {},
    tokenEnv,
    webhookSecretEnv: null,
    createdBy: "test",
  });
}

beforeAll(async () => {
  scratch = await createScratchDatabase();
  redis = createTestRedis();
  queue = new IntakeQueue(redis, { prefix, attempts: 2, backoffMs: 50 });
  transitions = new TransitionApplier({ db: scratch.db });
  github = await GitHubDouble.start();
  github.addUser(BOT);
  await github.createRepository(REPO);
}, 60_000);

afterAll(async () => {
  await queue?.close();
  if (redis) await deleteRedisKeys(redis, prefix);
  redis?.disconnect();
  await scratch?.drop();
  await github?.close();
});

afterEach(() => {
  expect(github.takeViolations()).toEqual([]);
});

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("intake runner (GitHub Issues)", () => {
  it("turns a matching issue into one task, however often it is polled and read", async () => {
    await source("gh-take", "take");
    const number = github.openIssue(REPO, {
      title: "Add a health route",
      body: "GET /health answers 200.\n\n- [ ] returns ok\n- [ ] has a test",
      labels: ["overseer", "role:backend"],
      assignees: [BOT.login],
    });
    github.openIssue(REPO, { title: "Not assigned", labels: ["overseer"] });
    const first = runner();
    const second = runner();
    await Promise.all([first.start(), second.start()]);
    try {
      // A poll through the queue (what the scheduler adds), then the same reads again directly.
      await queue.queue.add("poll", { v: 1, kind: "poll", sourceId: "gh-take" });
      const task = await until("the task", async () => (await listTasks(scratch.db, "take")).tasks[0]);
      await first.process({ v: 1, kind: "read", sourceId: "gh-take", issueId: String(number) });
      await second.process({ v: 1, kind: "read", sourceId: "gh-take", issueId: String(number) });
      const { tasks } = await listTasks(scratch.db, "take");
      expect(tasks.map((t) => t.id)).toEqual([`acme-app-${number}`]);
      expect(task).toMatchObject({
        title: "Add a health route",
        role: "backend",
        acceptance: ["returns ok", "has a test"],
      });
      expect(task.body).toContain(`From acme/app#${number}`);
      expect((await getIntakeSource(scratch.db, "gh-take"))?.polled_at).not.toBeNull();
    } finally {
      await Promise.all([first.stop(), second.stop()]);
    }
  });

  it("two runners reading one new issue at the same moment take it once, and neither fails", async () => {
    await source("gh-race", "race");
    const number = github.openIssue(REPO, { title: "Race", labels: ["overseer"], assignees: [BOT.login] });
    const job = { v: 1, kind: "read", sourceId: "gh-race", issueId: String(number) };
    for (let round = 0; round < 3; round++) {
      await Promise.all([runner().process(job), runner().process(job), runner().process(job)]);
    }
    const { tasks } = await listTasks(scratch.db, "race");
    expect(tasks.map((t) => t.id)).toEqual([`acme-app-${number}`]);
    expect((await getIntakeSource(scratch.db, "gh-race"))?.last_error ?? null).toBeNull();
  });

  it("answers the task's pending card with a person's comment, through the resolve command", async () => {
    await source("gh-answer", "answer");
    const number = github.openIssue(REPO, {
      title: "Pick a database",
      labels: ["overseer"],
      assignees: [BOT.login],
    });
    github.commentOnIssue(REPO, number, "alice", "Context written before the task existed.");
    const intake = runner();
    const read = () => intake.process({ v: 1, kind: "read", sourceId: "gh-answer", issueId: String(number) });
    await read();
    const taskId = `acme-app-${number}`;
    await startProject(transitions, "answer");
    const claimed = await applyTransition(scratch.db, "answer", { kind: "claim" });
    const run = claimed.changes.runs[0];
    if (!run) throw new Error("nothing claimed");
    await applyTransition(scratch.db, "answer", {
      kind: "escalate",
      runId: run.id,
      reason: "A product decision.",
      needsUser: true,
      question: "Which database?",
      options: [{ id: "postgres", label: "Postgres" }],
    });
    await read(); // nothing new on the issue: the card stays pending
    expect((await getDecision(scratch.db, "answer", `decision-${taskId}.R1`))?.status).toBe("pending");
    github.commentOnIssue(REPO, number, "alice", "SQLite, it is a demo.");
    await read();
    await read(); // read twice: the cursor says the comment was read
    const decision = await getDecision(scratch.db, "answer", `decision-${taskId}.R1`);
    expect(decision).toMatchObject({ status: "resolved", selectedOption: "custom" });
    expect(decision?.note).toContain("SQLite, it is a demo.");
    // The card is the resolver's (the task is blocked by it); its answer is the resolver's too.
    const resolver = await getTask(scratch.db, "answer", `${taskId}.R1`);
    expect(resolver?.answers.map((a) => a.answer)).toEqual([expect.stringContaining("SQLite")]);
  });

  it("cancels the task of an issue closed in the tracker", async () => {
    await source("gh-close", "close");
    const number = github.openIssue(REPO, {
      title: "Will be closed",
      labels: ["overseer"],
      assignees: [BOT.login],
    });
    const intake = runner();
    const read = () => intake.process({ v: 1, kind: "read", sourceId: "gh-close", issueId: String(number) });
    await read();
    await github.changeIssue(REPO, number, { state: "closed" });
    await read();
    expect((await getTask(scratch.db, "close", `acme-app-${number}`))?.status).toBe("cancelled");
  });

  it("a missing token fails a read and a poll at once (never retried), the source's last error naming the variable", async () => {
    await source("gh-notoken", "notoken", "OVERSEER_TEST_NO_SUCH_TOKEN");
    const missing = /the environment variable OVERSEER_TEST_NO_SUCH_TOKEN is not set \(or is empty\)/;
    const lastError = async () => (await getIntakeSource(scratch.db, "gh-notoken"))?.last_error;
    await expect(runner().process({ v: 1, kind: "poll", sourceId: "gh-notoken" })).rejects.toThrow(
      UnrecoverableError,
    );
    expect(await lastError()).toMatch(missing);
    await recordIntakePoll(scratch.db, "gh-notoken", { polledAt: null, error: null });
    await expect(
      runner().process({ v: 1, kind: "read", sourceId: "gh-notoken", issueId: "1" }),
    ).rejects.toThrow(missing);
    expect(await lastError()).toMatch(missing);

    // Through BullMQ (2 attempts with backoff): the read fails once and for good.
    const running = runner();
    await running.start();
    try {
      await queue.read("gh-notoken", "2");
      const failed = await until("the read to fail", async () => {
        const job = await queue.queue.getJob("intake-gh-notoken-2");
        return job && (await job.getState()) === "failed" ? job : undefined;
      });
      expect(failed.attemptsStarted).toBe(1);
      expect(failed.failedReason).toMatch(missing);
    } finally {
      await running.stop();
    }
    // An empty value counts as missing.
    const empty = new IntakeRunner(
      {
        db: scratch.db,
        queue,
        transitions,
        workerConnection: redis,
        logger,
        env: { OVERSEER_TEST_NO_SUCH_TOKEN: "" },
      },
      { prefix, intakePollMs: 60_000, intakeConcurrency: 1 },
    );
    await expect(empty.process({ v: 1, kind: "poll", sourceId: "gh-notoken" })).rejects.toThrow(missing);
  });
});
