/**
 * The notification outbox under failure (README "Intake and notifications"), with real
 * processes, Postgres and Redis: a coordinator SIGKILLed while deliveries back off, then a Redis
 * FLUSHALL, lose nothing and deliver nothing twice. The receiver verifies every message with the
 * `standardwebhooks` library and is down (503) until the end. The tracker updates of intake-made
 * tasks (two-way status) survive the same: GitHub (the double, checked against @octokit/openapi)
 * answers every comment with 503 until the end, then each update is one comment, in order per issue.
 */
import {
  createIntakeSource,
  createSubscription,
  listDeliveries,
  listTrackerUpdates,
  recordIntakeItem,
} from "@overseer/db";
import type { Command } from "@overseer/domain";
import { GitHubDouble, taskCard } from "@overseer/test-support";
import { TransitionApplier } from "@overseer/transitions";
import { describe, expect, it } from "vitest";
import { useTestResources } from "../support/cluster-fixture.ts";
import { startPrivateRedis } from "../support/private-redis.ts";
import { waitFor } from "../support/wait-for.ts";
import { WebhookReceiver } from "../support/webhook-receiver.ts";

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const resources = useTestResources();

/** A start, then a pause at the budget bound: one `project.paused` notification. */
async function budgetPause(transitions: TransitionApplier, projectId: string, n: number): Promise<void> {
  const start: Command = { kind: "start-project", by: "test", stage: null, sessionsLimit: null };
  await transitions.apply(projectId, start);
  await transitions.apply(projectId, {
    kind: "set-project-status",
    status: "paused",
    by: "test",
    reason: `budget_usd ${n} reached`,
    bound: "budget",
  });
}

describe("notification outbox failures", () => {
  it("a coordinator SIGKILLed mid-retry and a Redis FLUSHALL: every notification is delivered once, in order per project", async () => {
    const redis = await startPrivateRedis();
    resources.onRelease(redis.stop);
    const receiver = await WebhookReceiver.start(SECRET);
    resources.onRelease(() => receiver.stop());
    receiver.up = false;
    const cluster = await resources.cluster({ redisUrl: redis.url });
    const db = cluster.scratch.db;
    const transitions = new TransitionApplier({ db });
    for (const id of ["n1", "n2"]) await cluster.addProject({ id, tasks: [], start: false });
    await createSubscription(db, {
      id: "hook",
      projectId: null,
      channel: "webhook",
      url: receiver.url,
      slackChannel: null,
      eventTypes: [],
      minSeverity: "info",
      secret: SECRET,
      createdBy: "test",
    });
    const env = cluster.env({ OVERSEER_NOTIFY_BACKOFF_MS: "100", OVERSEER_NOTIFY_ATTEMPTS: "60" });
    const first = resources.service("coordinator", { ...env, OVERSEER_COORDINATOR_ID: "doomed" });
    for (let n = 1; n <= 3; n += 1) {
      await budgetPause(transitions, "n1", n);
      await budgetPause(transitions, "n2", n);
    }
    // Both streams' heads are being retried (the receiver answers 503) when the coordinator dies.
    await waitFor("retries under way", async () => {
      const rows = await listDeliveries(db, { limit: 50 });
      // Counted by the receiver too: an attempt is counted before its POST arrives.
      return receiver.turnedAway >= 4 && rows.filter((r) => r.attempts >= 2).length >= 2;
    });
    await first.kill("SIGKILL");
    await cluster.redis.flushall();
    for (let n = 4; n <= 5; n += 1) await budgetPause(transitions, "n1", n);
    resources.service("coordinator", { ...env, OVERSEER_COORDINATOR_ID: "survivor" });
    receiver.up = true;
    const all = await waitFor(
      "every delivery delivered",
      async () => {
        const rows = await listDeliveries(db, { limit: 50 });
        return rows.length === 8 && rows.every((r) => r.status === "delivered") ? rows : undefined;
      },
      60_000,
    );
    expect(receiver.turnedAway).toBeGreaterThanOrEqual(4);
    expect(receiver.refused).toBe(0);
    expect(receiver.duplicates).toBe(0);
    expect(receiver.accepted.map((a) => a.id).sort()).toEqual(all.map((r) => r.webhook_id).sort());
    for (const projectId of ["n1", "n2"]) {
      const got = receiver.ofProject(projectId);
      const eventIds = got.map((a) => Number(a.payload.data.event_id));
      expect(eventIds, `${projectId} in event order`).toEqual([...eventIds].sort((a, b) => a - b));
      expect(got.map((a) => a.payload.data.reason)).toEqual(
        (projectId === "n1" ? [1, 2, 3, 4, 5] : [1, 2, 3]).map((n) => `budget_usd ${n} reached`),
      );
      expect(got.every((a) => a.payload.type === "project.paused")).toBe(true);
    }
  });

  it("a coordinator SIGKILLed mid-retry and a Redis FLUSHALL: every tracker update is written once, in order per issue", async () => {
    const redis = await startPrivateRedis();
    resources.onRelease(redis.stop);
    const github = await GitHubDouble.start();
    resources.onRelease(() => github.close());
    const BOT = { login: "overseer-bot", token: "ghp_failure_suite_bot" };
    github.addUser(BOT);
    await github.createRepository("acme/app");
    const cluster = await resources.cluster({ redisUrl: redis.url });
    const db = cluster.scratch.db;
    const transitions = new TransitionApplier({ db });
    const numbers = [1, 2].map((n) =>
      github.openIssue("acme/app", { title: `Issue ${n}`, labels: ["overseer"] }),
    );
    const taskIds = numbers.map((n) => `acme-app-${n}`);
    await cluster.addProject({
      id: "t1",
      tasks: taskIds.map((id) => taskCard(id)),
      concurrency: 2,
      start: false,
    });
    await createIntakeSource(db, {
      id: "gh-failure",
      projectId: "t1",
      kind: "github",
      baseUrl: github.url,
      query: { container: "acme/app", labels: ["overseer"] },
      config: {},
      tokenEnv: "OVERSEER_TEST_FAILURE_TRACKER_TOKEN",
      webhookSecretEnv: null,
      createdBy: "test",
    });
    for (const [i, number] of numbers.entries())
      await recordIntakeItem(db, {
        sourceId: "gh-failure",
        issueId: String(number),
        issueKey: `acme/app#${number}`,
        projectId: "t1",
        taskId: taskIds[i] as string,
        commentCursor: null,
      });
    // GitHub is down for comments until the end.
    github.fail({ status: 503, matching: /^POST .*\/issues\/\d+\/comments$/, times: 1_000_000 });
    const env = cluster.env({
      OVERSEER_NOTIFY_BACKOFF_MS: "100",
      OVERSEER_NOTIFY_ATTEMPTS: "60",
      OVERSEER_TEST_FAILURE_TRACKER_TOKEN: BOT.token,
    });
    const first = resources.service("coordinator", { ...env, OVERSEER_COORDINATOR_ID: "doomed" });
    await transitions.apply("t1", { kind: "start-project", by: "test", stage: null, sessionsLimit: null });
    // No worker here: the test starts the runs the coordinator claimed, as a worker would.
    const runs = await waitFor("both tasks claimed", async () => {
      const rows = await db.selectFrom("runs").select("id").where("project_id", "=", "t1").execute();
      return rows.length === 2 ? rows : undefined;
    });
    for (const run of runs)
      await transitions.apply("t1", { kind: "run-started", runId: run.id, workerId: "w1" });
    await waitFor("both started updates retried", async () => {
      const rows = await listTrackerUpdates(db, { projectId: "t1" });
      return rows.length === 2 && rows.every((r) => r.attempts >= 2) ? rows : undefined;
    });
    await first.kill("SIGKILL");
    await cluster.redis.flushall();
    // Paused at its budget while both are under way: a blocked update per issue, behind the started one.
    await budgetPause(transitions, "t1", 1);
    resources.service("coordinator", { ...env, OVERSEER_COORDINATOR_ID: "survivor" });
    github.clearFaults();
    const all = await waitFor(
      "every tracker update written",
      async () => {
        const rows = await listTrackerUpdates(db, { projectId: "t1" });
        return rows.length >= 4 && rows.every((r) => r.status === "delivered") ? rows : undefined;
      },
      60_000,
    );
    for (const number of numbers) {
      const updates = all
        .filter((r) => r.issue_id === String(number))
        .sort((a, b) => Number(a.id) - Number(b.id));
      expect(updates.map((u) => u.moment).slice(0, 2)).toEqual(["started", "blocked"]);
      const comments = github.comments("acme/app", number).map((c) => c.body);
      // Once each (the comment's marker is the update's key), in the order of the updates.
      expect(comments).toHaveLength(updates.length);
      expect(comments.map((body, i) => body.includes(`:${updates[i]?.moment}:`))).toEqual(
        updates.map(() => true),
      );
    }
    expect(github.takeViolations()).toEqual([]);
  });
});
