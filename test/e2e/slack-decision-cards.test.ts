/**
 * Slack decision cards end to end, every part real and in its own process (gateway, coordinator,
 * worker with bwrap, Postgres, Redis) against the Slack double (chat.postMessage / chat.update
 * arguments and Block Kit as Slack documents them, clicks signed with Slack's v0 scheme):
 * - a task's question becomes a card in the subscribed channel, one button per option;
 * - a button click POSTed to the gateway's interactivity route resolves the card exactly once,
 *   clicked twice at once and once more later;
 * - a click replayed with a timestamp older than 5 minutes is refused (401), and so is a Slack
 *   user not mapped in OVERSEER_SLACK_OPERATORS (403): the card stays pending;
 * - the card's message is updated (chat.update, through the outbox) to say who chose what;
 * - a card resolved from the HTTP route has its message updated too.
 */
import { createApiToken, getDecision, listDeliveries, listEvents } from "@overseer/db";
import { SlackDouble } from "@overseer/test-support";
import { describe, expect, it } from "vitest";
import { scriptedTask, useTestResources } from "../support/cluster-fixture.ts";
import { startGatewayProcess } from "../support/gateway-process.ts";
import { waitFor } from "../support/wait-for.ts";

const resources = useTestResources();
const CHANNEL = "C0DECISIONS";
const ALICE = "U0ALICE01";
const MALLORY = "U0MALLORY";

/** A task whose agent asks the operator to choose a database (two options). */
const asking = (id: string) =>
  scriptedTask(
    id,
    'execute: ask "Which database should we use?" use_postgres:Postgres use_sqlite:SQLite\nexecute#2: write src/db.txt "chosen\\n"; submit "Record the choice"\nreview: approve',
  );

interface Card {
  readonly ts: string;
  readonly decisionId: string;
  /** Option id → the button's value, as the message carries it. */
  readonly buttons: Map<string, string>;
}

describe("Slack decision cards, all processes real", () => {
  it("a click resolves its card once; replays and strangers are refused; every resolution updates the message", async () => {
    const cluster = await resources.cluster();
    const db = cluster.scratch.db;
    const slack = await SlackDouble.start();
    resources.onRelease(() => slack.close());
    await cluster.addProject({
      id: "sk",
      tasks: [asking("S00-001"), asking("S00-002")],
      concurrency: 2,
      start: false,
    });
    const admin = (await createApiToken(db, { name: "admin", scope: "admin" })).token;
    const alice = await createApiToken(db, { name: "alice", scope: "operate" });
    const env = cluster.env({
      LOG_LEVEL: "info",
      OVERSEER_DASHBOARD_URL: "https://overseer.example.com",
      OVERSEER_SLACK_BOT_TOKEN: slack.botToken,
      OVERSEER_SLACK_API_URL: slack.apiUrl,
      OVERSEER_SLACK_SIGNING_SECRET: slack.signingSecret,
      OVERSEER_SLACK_OPERATORS: `${ALICE}=${alice.id}`,
      OVERSEER_SLACK_RESPONSE_ORIGIN: slack.origin,
    });
    resources.service("coordinator", env);
    resources.service("worker", env);
    const gateway = await startGatewayProcess(env);
    resources.onRelease(async () => void (await gateway.service.kill("SIGTERM")));

    const api = async (token: string, method: string, path: string, body?: unknown) => {
      const res = await fetch(`${gateway.url}${path}`, {
        method,
        headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    // Only cards: each resolution still reaches its card's message, as an update.
    const subscribed = await api(admin, "POST", "/api/v1/notifications/subscriptions", {
      slack_channel: CHANNEL,
      project_id: "sk",
      event_types: ["decision.opened"],
    });
    expect(subscribed.status, JSON.stringify(subscribed.body)).toBe(201);
    const started = await api(admin, "POST", "/api/v1/projects/sk/start", {});
    expect(started.status, JSON.stringify(started.body)).toBe(200);

    const cards = await waitFor(
      "two cards posted to the channel",
      () => (slack.posted.length === 2 ? slack.posted.map(cardOf) : undefined),
      90_000,
    );
    expect(slack.refusedPosts).toEqual([]);
    expect(cards.map((c) => [...c.buttons.keys()])).toEqual([
      ["use_postgres", "use_sqlite"],
      ["use_postgres", "use_sqlite"],
    ]);
    const [first, second] = cards as [Card, Card];

    const click = async (card: Card, option: string, userId: string, timestamp?: number) => {
      const request = slack.click({
        userId,
        actionId: `overseer_resolve:${option}`,
        value: card.buttons.get(option) ?? "",
        ...(timestamp === undefined ? {} : { timestamp }),
      });
      const res = await fetch(`${gateway.url}/api/v1/slack/interactions`, {
        method: "POST",
        headers: request.headers,
        body: request.body,
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    const errorOf = (answer: { body: Record<string, unknown> }) =>
      answer.body.error as { code: string; message: string };

    // Refused, nothing changed: a replay signed 6 minutes ago, and a Slack user nobody mapped.
    const replay = await click(second, "use_postgres", ALICE, Math.floor(Date.now() / 1000) - 360);
    expect(replay.status).toBe(401);
    expect(errorOf(replay).code).toBe("stale_request");
    expect(errorOf(replay).message).toMatch(
      /more than 300 s from the gateway's clock: refused as a possible replay/,
    );
    const stranger = await click(second, "use_postgres", MALLORY);
    expect(stranger.status).toBe(403);
    expect(errorOf(stranger).code).toBe("unknown_slack_user");
    expect(errorOf(stranger).message).toContain(`add ${MALLORY}=<API token id> to OVERSEER_SLACK_OPERATORS`);
    expect(await getDecision(db, "sk", second.decisionId)).toMatchObject({ status: "pending" });

    // Clicked twice at once, then once more: resolved by exactly one of them.
    const clicks = await Promise.all([
      click(first, "use_postgres", ALICE),
      click(first, "use_postgres", ALICE),
    ]);
    clicks.push(await click(first, "use_sqlite", ALICE));
    expect(clicks.map((c) => c.status)).toEqual([200, 200, 200]);
    expect(clicks.map((c) => c.body.outcome).sort()).toEqual([
      "already_resolved",
      "already_resolved",
      "resolved",
    ]);
    for (const c of clicks) {
      expect(c.body).toMatchObject({ selected_option: "use_postgres", resolved_by: "slack:alice" });
    }
    const resolvedEvents = await listEvents(db, { projectId: "sk", types: ["decision.resolved"] });
    expect(resolvedEvents.filter((e) => e.data.decisionId === first.decisionId)).toHaveLength(1);

    // The message says who chose what, buttons and note field gone (chat.update from the outbox).
    const updated = await waitFor("the first card's message updated", () => {
      const now = slack.messageAt(CHANNEL, first.ts);
      return now && slack.updates.some((u) => u.ts === first.ts) ? now : undefined;
    });
    expect(updated.text).toBe("Answered in sk: slack:alice chose Postgres (Which database should we use?)");
    expect(JSON.stringify(updated.blocks)).toContain("*slack:alice* chose *Postgres*");
    expect(updated.blocks?.map((b) => b.type)).not.toContain("actions");

    // The second card resolved over the HTTP route, as alice's token: its message is updated too.
    const viaRoute = await api(
      alice.token,
      "POST",
      `/api/projects/sk/decisions/${second.decisionId}/resolve`,
      {
        option_id: "use_sqlite",
        note: "Only for the demo.",
      },
    );
    expect(viaRoute.status, JSON.stringify(viaRoute.body)).toBe(200);
    const resolvedBy = (await getDecision(db, "sk", second.decisionId))?.resolvedBy ?? "";
    const secondUpdated = await waitFor("the second card's message updated", () => {
      const now = slack.messageAt(CHANNEL, second.ts);
      return now && slack.updates.some((u) => u.ts === second.ts) ? now : undefined;
    });
    expect(JSON.stringify(secondUpdated.blocks)).toContain(`*${resolvedBy}* chose *SQLite*`);
    expect(JSON.stringify(secondUpdated.blocks)).toContain("> Only for the demo.");
    expect(secondUpdated.blocks?.map((b) => b.type)).not.toContain("actions");

    // Two messages, each updated through one delivered delivery of its own; nothing refused.
    const deliveries = await waitFor("every delivery delivered", async () => {
      const rows = await listDeliveries(db, { projectId: "sk", limit: 20 });
      return rows.length === 4 && rows.every((r) => r.status === "delivered") ? rows : undefined;
    });
    expect(deliveries.map((d) => d.type).sort()).toEqual([
      "decision.opened",
      "decision.opened",
      "decision.resolved",
      "decision.resolved",
    ]);
    expect(new Set(deliveries.map((d) => d.webhook_id)).size).toBe(4);
    expect(slack.posted).toHaveLength(2);
    expect(slack.refusedUpdates).toEqual([]);
    expect(slack.refusedResponses).toEqual([]);
  });
});

/** A posted card: its ts, the decision its buttons name, and each option's button value. */
function cardOf(message: SlackDouble["posted"][number]): Card {
  const actions = message.blocks?.find((b) => b.type === "actions");
  const elements = actions && "elements" in actions ? actions.elements : [];
  const buttons = new Map<string, string>();
  let decisionId = "";
  for (const button of elements) {
    const value = JSON.parse(button.value ?? "{}") as { decision_id: string; option_id: string };
    buttons.set(value.option_id, button.value ?? "");
    decisionId = value.decision_id;
  }
  return { ts: message.ts, decisionId, buttons };
}
