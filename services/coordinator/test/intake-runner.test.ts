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
  createProject,
  getDecision,
  getIntakeSource,
  getTask,
  listTasks,
  recordIntakePoll,
} from "@overseer/db";
import { until } from "@overseer/test-support";
import { startProject } from "@overseer/transitions";
import { UnrecoverableError } from "bullmq";
import { describe, expect, it } from "vitest";
import type { IntakeRunner } from "../src/intake/intake-runner.ts";
import { githubSource, intakeRunner, REPO, useIntakeCase } from "./intake-case.ts";

const c = useIntakeCase("intake");

function runner(): IntakeRunner {
  return intakeRunner(c, {}, 2);
}

async function source(id: string, projectId: string, tokenEnv?: string) {
  await createProject(c.scratch.db, { id: projectId, repo: "/tmp/none", runnerConfig: {}, objective: "o" });
  return githubSource(c, id, projectId, tokenEnv);
}

describe("intake runner (GitHub Issues)", () => {
  it("turns a matching issue into one task, however often it is polled and read", async () => {
    await source("gh-take", "take");
    const number = c.github.openIssue(REPO, {
      title: "Add a health route",
      body: "GET /health answers 200.\n\n- [ ] returns ok\n- [ ] has a test",
      labels: ["overseer", "role:backend"],
      assignees: [c.bot.login],
    });
    c.github.openIssue(REPO, { title: "Not assigned", labels: ["overseer"] });
    const first = runner();
    const second = runner();
    await Promise.all([first.start(), second.start()]);
    try {
      // A poll through the queue (what the scheduler adds), then the same reads again directly.
      await c.intakeQueue.queue.add("poll", { v: 1, kind: "poll", sourceId: "gh-take" });
      const task = await until("the task", async () => (await listTasks(c.scratch.db, "take")).tasks[0]);
      await first.process({ v: 1, kind: "read", sourceId: "gh-take", issueId: String(number) });
      await second.process({ v: 1, kind: "read", sourceId: "gh-take", issueId: String(number) });
      const { tasks } = await listTasks(c.scratch.db, "take");
      expect(tasks.map((t) => t.id)).toEqual([`acme-app-${number}`]);
      expect(task).toMatchObject({
        title: "Add a health route",
        role: "backend",
        acceptance: ["returns ok", "has a test"],
      });
      expect(task.body).toContain(`From acme/app#${number}`);
      expect((await getIntakeSource(c.scratch.db, "gh-take"))?.polled_at).not.toBeNull();
    } finally {
      await Promise.all([first.stop(), second.stop()]);
    }
  });

  it("two runners reading one new issue at the same moment take it once, and neither fails", async () => {
    await source("gh-race", "race");
    const number = c.github.openIssue(REPO, {
      title: "Race",
      labels: ["overseer"],
      assignees: [c.bot.login],
    });
    const job = { v: 1, kind: "read", sourceId: "gh-race", issueId: String(number) };
    for (let round = 0; round < 3; round++) {
      await Promise.all([runner().process(job), runner().process(job), runner().process(job)]);
    }
    const { tasks } = await listTasks(c.scratch.db, "race");
    expect(tasks.map((t) => t.id)).toEqual([`acme-app-${number}`]);
    expect((await getIntakeSource(c.scratch.db, "gh-race"))?.last_error ?? null).toBeNull();
  });

  it("answers the task's pending card with a person's comment, through the resolve command", async () => {
    await source("gh-answer", "answer");
    const number = c.github.openIssue(REPO, {
      title: "Pick a database",
      labels: ["overseer"],
      assignees: [c.bot.login],
    });
    c.github.commentOnIssue(REPO, number, "alice", "Context written before the task existed.");
    const intake = runner();
    const read = () => intake.process({ v: 1, kind: "read", sourceId: "gh-answer", issueId: String(number) });
    await read();
    const taskId = `acme-app-${number}`;
    await startProject(c.transitions, "answer");
    const claimed = await applyTransition(c.scratch.db, "answer", { kind: "claim" });
    const run = claimed.changes.runs[0];
    if (!run) throw new Error("nothing claimed");
    await applyTransition(c.scratch.db, "answer", {
      kind: "escalate",
      runId: run.id,
      reason: "A product decision.",
      needsUser: true,
      question: "Which database?",
      options: [{ id: "postgres", label: "Postgres" }],
    });
    await read(); // nothing new on the issue: the card stays pending
    expect((await getDecision(c.scratch.db, "answer", `decision-${taskId}.R1`))?.status).toBe("pending");
    c.github.commentOnIssue(REPO, number, "alice", "SQLite, it is a demo.");
    await read();
    await read(); // read twice: the cursor says the comment was read
    const decision = await getDecision(c.scratch.db, "answer", `decision-${taskId}.R1`);
    expect(decision).toMatchObject({ status: "resolved", selectedOption: "custom" });
    expect(decision?.note).toContain("SQLite, it is a demo.");
    // The card is the resolver's (the task is blocked by it); its answer is the resolver's too.
    const resolver = await getTask(c.scratch.db, "answer", `${taskId}.R1`);
    expect(resolver?.answers.map((a) => a.answer)).toEqual([expect.stringContaining("SQLite")]);
  });

  it("cancels the task of an issue closed in the tracker", async () => {
    await source("gh-close", "close");
    const number = c.github.openIssue(REPO, {
      title: "Will be closed",
      labels: ["overseer"],
      assignees: [c.bot.login],
    });
    const intake = runner();
    const read = () => intake.process({ v: 1, kind: "read", sourceId: "gh-close", issueId: String(number) });
    await read();
    await c.github.changeIssue(REPO, number, { state: "closed" });
    await read();
    expect((await getTask(c.scratch.db, "close", `acme-app-${number}`))?.status).toBe("cancelled");
  });

  it("a missing token fails a read and a poll at once (never retried), the source's last error naming the variable", async () => {
    await source("gh-notoken", "notoken", "OVERSEER_TEST_NO_SUCH_TOKEN");
    const missing = /the environment variable OVERSEER_TEST_NO_SUCH_TOKEN is not set \(or is empty\)/;
    const lastError = async () => (await getIntakeSource(c.scratch.db, "gh-notoken"))?.last_error;
    await expect(runner().process({ v: 1, kind: "poll", sourceId: "gh-notoken" })).rejects.toThrow(
      UnrecoverableError,
    );
    expect(await lastError()).toMatch(missing);
    await recordIntakePoll(c.scratch.db, "gh-notoken", { polledAt: null, error: null });
    await expect(
      runner().process({ v: 1, kind: "read", sourceId: "gh-notoken", issueId: "1" }),
    ).rejects.toThrow(missing);
    expect(await lastError()).toMatch(missing);

    // Through BullMQ (2 attempts with backoff): the read fails once and for good.
    const running = runner();
    await running.start();
    try {
      await c.intakeQueue.read("gh-notoken", "2");
      // The state first, then the job: a job read before it failed would have no failedReason.
      const id = "intake-gh-notoken-2";
      const failed = await until("the read to fail", async () =>
        (await c.intakeQueue.queue.getJobState(id)) === "failed" ? c.intakeQueue.queue.getJob(id) : undefined,
      );
      expect(failed.attemptsStarted).toBe(1);
      expect(failed.failedReason).toMatch(missing);
    } finally {
      await running.stop();
    }
    // An empty value counts as missing.
    const empty = intakeRunner(c, { env: { OVERSEER_TEST_NO_SUCH_TOKEN: "" } });
    await expect(empty.process({ v: 1, kind: "poll", sourceId: "gh-notoken" })).rejects.toThrow(missing);
  });
});
