/**
 * Slack subscriptions through the notification outbox, against real Postgres and Redis and a
 * Slack Web API double that checks chat.postMessage's documented arguments and Block Kit: a
 * decision card opened in a project becomes a message with one button per option in the
 * subscription's channel; once resolved (here through the resolve route's command) that message
 * is updated with chat.update to say who chose what, through its own delivery; a channel the bot
 * is not in is a failed attempt with Slack's reason.
 */
import {
  applyTransition,
  createProject,
  createScratchDatabase,
  createSubscription,
  listDeliveries,
  redeliver,
  type ScratchDatabase,
} from "@overseer/db";
import { type Redis, RunQueues, resolveQueueOptions } from "@overseer/queue";
import { createLogger } from "@overseer/runtime";
import {
  createTestRedis,
  deleteRedisKeys,
  SlackDouble,
  taskCard,
  uniqueRedisPrefix,
  until,
} from "@overseer/test-support";
import { importTasks, startProject, TransitionApplier } from "@overseer/transitions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveCoordinatorOptions } from "../src/coordinator-options.ts";
import { NotificationRunner } from "../src/notify/notification-runner.ts";

const prefix = uniqueRedisPrefix("slacknotify");
const logger = createLogger({ name: "slack-notify-test", level: "silent" });
let scratch: ScratchDatabase;
let redis: Redis;
let queues: RunQueues;
let slack: SlackDouble;
let runner: NotificationRunner;

beforeAll(async () => {
  scratch = await createScratchDatabase();
  redis = createTestRedis();
  queues = new RunQueues(redis, resolveQueueOptions({ prefix }));
  slack = await SlackDouble.start();
  runner = new NotificationRunner(
    {
      db: scratch.db,
      queue: queues.notify,
      notifications: scratch.notifications,
      workerConnection: redis,
      logger,
    },
    resolveCoordinatorOptions({
      prefix,
      slackBotToken: slack.botToken,
      slackApiUrl: slack.apiUrl,
      notifyAttempts: 1,
      dashboardUrl: "https://overseer.example.com",
    }),
  );
  await runner.start();
});

afterAll(async () => {
  await runner?.stop();
  await queues?.close();
  if (redis) await deleteRedisKeys(redis, prefix);
  redis?.disconnect();
  await scratch?.drop();
  await slack?.close();
});

async function newProject(projectId: string): Promise<void> {
  await createProject(scratch.db, { id: projectId, repo: "/tmp/none", runnerConfig: {}, objective: "o" });
}

/** The project's first task asks a question with two options (one needing a note). */
async function askInProject(projectId: string): Promise<void> {
  const applier = new TransitionApplier({ db: scratch.db });
  await importTasks(applier, projectId, [taskCard("S00-001")]);
  await startProject(applier, projectId);
  const claimed = await applyTransition(scratch.db, projectId, { kind: "claim" });
  const run = claimed.changes.runs[0];
  if (!run) throw new Error("nothing claimed");
  await applyTransition(scratch.db, projectId, {
    kind: "escalate",
    runId: run.id,
    reason: "The database choice is a product decision.",
    needsUser: true,
    question: "Which database should we use?",
    options: [
      { id: "use_postgres", label: "Use Postgres" },
      { id: "use_sqlite", label: "Use SQLite", requires_note: true },
    ],
  });
}

describe("Slack subscriptions", () => {
  it("post a decision card to the project's channel with one button per option", async () => {
    await newProject("sl");
    await createSubscription(scratch.db, {
      id: "slack-sl",
      projectId: "sl",
      channel: "slack",
      url: null,
      slackChannel: "C0DECISIONS",
      eventTypes: ["decision.opened"],
      minSeverity: "info",
      secret: null,
      createdBy: "test",
    });
    await askInProject("sl");
    const [delivery] = await until("the card delivered", async () => {
      const rows = await listDeliveries(scratch.db, { projectId: "sl", limit: 10 });
      return rows.length > 0 && rows.every((r) => r.status === "delivered") ? rows : undefined;
    });
    expect(delivery).toMatchObject({ type: "decision.opened", subscription_id: "slack-sl", attempts: 1 });
    expect(slack.refusedPosts).toEqual([]);
    expect(slack.posted).toHaveLength(1);
    const [posted] = slack.posted;
    expect(posted?.channel).toBe("C0DECISIONS");
    expect(posted?.text).toBe("Needs you in sl: Which database should we use?");
    const actions = posted?.blocks?.find((b) => b.type === "actions");
    const buttons = actions && "elements" in actions ? actions.elements : [];
    expect(buttons.map((b) => [b.action_id, JSON.parse(b.value ?? "")])).toEqual([
      [
        "overseer_resolve:use_postgres",
        { project_id: "sl", decision_id: "decision-S00-001.R1", option_id: "use_postgres" },
      ],
      [
        "overseer_resolve:use_sqlite",
        { project_id: "sl", decision_id: "decision-S00-001.R1", option_id: "use_sqlite" },
      ],
    ]);
    expect(JSON.stringify(posted?.blocks)).toContain(
      "<https://overseer.example.com/#/project/sl/task/S00-001.R1|Open in Overseer>",
    );
  });

  it("update the card's message with chat.update once it is resolved, through a delivery of its own", async () => {
    await newProject("up");
    await createSubscription(scratch.db, {
      id: "slack-up",
      projectId: "up",
      channel: "slack",
      url: null,
      slackChannel: "C0DECISIONS",
      // Only cards: the resolution still reaches the card's message, as an update.
      eventTypes: ["decision.opened"],
      minSeverity: "warning",
      secret: null,
      createdBy: "test",
    });
    await askInProject("up");
    const [card] = await until("the card posted", async () => {
      const rows = await listDeliveries(scratch.db, { projectId: "up", status: "delivered", limit: 10 });
      return rows.length === 1 ? rows : undefined;
    });
    const posted = slack.posted.find((m) => m.ts === card?.slack_ts);
    expect(posted?.channel).toBe("C0DECISIONS");
    expect(card?.slack_channel).toBe("C0DECISIONS");
    const postsBefore = slack.posted.length;

    // Resolved the way POST …/resolve does (not a click: no response_url to answer).
    await new TransitionApplier({ db: scratch.db }).apply("up", {
      kind: "resolve-decision",
      decisionId: "decision-S00-001.R1",
      optionId: "use_sqlite",
      note: "Only for the <demo>.",
      by: "alice",
      resolutionId: "res-up",
    });
    const update = await until("the update delivered", async () => {
      const rows = await listDeliveries(scratch.db, { projectId: "up", limit: 10 });
      const row = rows.find((r) => r.type === "decision.resolved");
      return row?.status === "delivered" ? row : undefined;
    });
    expect(update).toMatchObject({ subscription_id: "slack-up", attempts: 1, slack_ts: card?.slack_ts });
    expect(update.webhook_id).not.toBe(card?.webhook_id);
    expect(slack.posted).toHaveLength(postsBefore);
    expect(slack.refusedUpdates).toEqual([]);
    const now = slack.messageAt("C0DECISIONS", posted?.ts ?? "");
    expect(now?.text).toBe("Answered in up: alice chose Use SQLite (Which database should we use?)");
    const blocks = JSON.stringify(now?.blocks);
    expect(blocks).toContain("*alice* chose *Use SQLite*");
    expect(blocks).toContain("> Only for the &lt;demo&gt;.");
    expect(now?.blocks?.map((b) => b.type)).not.toContain("actions");
    expect(now?.blocks?.map((b) => b.type)).not.toContain("input");

    // Sent again (a redelivery): the same update once more, still no new message.
    const updates = slack.updates.length;
    await redeliver(scratch.db, update.id);
    await until("the update sent again", async () => (slack.updates.length > updates ? true : undefined));
    expect(slack.updates.at(-1)).toEqual(slack.updates.at(-2));
    expect(slack.posted).toHaveLength(postsBefore);
  });

  it("a channel the bot is not in fails the attempt with Slack's reason", async () => {
    await newProject("lost");
    await createSubscription(scratch.db, {
      id: "slack-lost",
      projectId: "lost",
      channel: "slack",
      url: null,
      slackChannel: "C0NOTJOINED",
      eventTypes: [],
      minSeverity: "info",
      secret: null,
      createdBy: "test",
    });
    await askInProject("lost");
    const rows = await until("a dead letter", async () => {
      const found = await listDeliveries(scratch.db, { projectId: "lost", limit: 10 });
      return found.length > 0 && found.every((r) => r.status === "dead") ? found : undefined;
    });
    expect(rows.every((r) => r.last_error?.includes("channel_not_found"))).toBe(true);
  });
});
