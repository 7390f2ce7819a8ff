import { DecisionButtonValueSchema, type WebhookPayload, WebhookPayloadSchema } from "@overseer/api-contract";
import { SlackDouble } from "@overseer/test-support";
import { afterAll, describe, expect, it } from "vitest";
import {
  postSlackMessage,
  slackMessageOf,
  slackResolvedCardMessage,
  updateSlackMessage,
} from "../src/index.ts";

const slack = await SlackDouble.start();
afterAll(() => slack.close());

const subject = {
  project_id: "demo",
  task_id: "S00-001.R1",
  event_id: "7",
  url: "https://overseer.example.com/#/project/demo",
};
const card: WebhookPayload = WebhookPayloadSchema.parse({
  type: "decision.opened",
  version: 1,
  timestamp: "2026-01-01T12:00:00.000Z",
  data: {
    ...subject,
    severity: "warning",
    decision_id: "decision-S00-001.R1",
    revision: 1,
    title: "Database choice",
    reason: "The database choice is a product decision.",
    question: "Which database should we use?",
    options: [
      { id: "use_postgres", label: "Use Postgres", description: "", requires_note: false },
      { id: "use_sqlite", label: "Use SQLite", description: "", requires_note: true },
      { id: "stop", label: "Stop", description: "", requires_note: false },
    ],
  },
});

const send = (payload: WebhookPayload, channel = "C0DECISIONS", token = slack.botToken) =>
  postSlackMessage({
    token,
    apiUrl: slack.apiUrl,
    channel,
    message: slackMessageOf(payload),
    timeoutMs: 5000,
  });

describe("Slack messages with @slack/web-api", () => {
  it("posts a decision card with a note field and one button per option, each naming card and option", async () => {
    const sent = await send(card);
    expect(slack.refusedPosts).toEqual([]);
    const posted = slack.posted.at(-1);
    expect(sent).toEqual({
      ok: true,
      status: 200,
      error: null,
      message: { channel: "C0DECISIONS", ts: posted?.ts },
    });
    expect(posted?.channel).toBe("C0DECISIONS");
    expect(posted?.text).toBe("Needs you in demo: Which database should we use?");
    const actions = posted?.blocks?.find((b) => b.type === "actions");
    const buttons = actions && "elements" in actions ? actions.elements : [];
    expect(buttons.map((b) => [b.action_id, b.text.text])).toEqual([
      ["overseer_resolve:use_postgres", "Use Postgres"],
      ["overseer_resolve:use_sqlite", "Use SQLite (note)"],
      ["overseer_resolve:stop", "Stop"],
    ]);
    expect(buttons.map((b) => DecisionButtonValueSchema.parse(JSON.parse(b.value ?? "")))).toEqual([
      { project_id: "demo", decision_id: "decision-S00-001.R1", option_id: "use_postgres" },
      { project_id: "demo", decision_id: "decision-S00-001.R1", option_id: "use_sqlite" },
      { project_id: "demo", decision_id: "decision-S00-001.R1", option_id: "stop" },
    ]);
    expect(posted?.blocks?.map((b) => b.type)).toEqual(["section", "context", "input", "actions", "section"]);
    const input = posted?.blocks?.find((b) => b.type === "input");
    expect(input && "element" in input ? input.element.action_id : undefined).toBe("overseer_note");
    const texts = JSON.stringify(posted?.blocks);
    expect(texts).toContain("<https://overseer.example.com/#/project/demo|Open in Overseer>");
  });

  it("posts an incident as a plain message", async () => {
    const incident = WebhookPayloadSchema.parse({
      type: "incident.recorded",
      version: 1,
      timestamp: "2026-01-01T12:00:00.000Z",
      data: { ...subject, severity: "critical", kind: "scope_violation", message: "wrote outside src/** <3" },
    });
    expect(await send(incident)).toMatchObject({ ok: true });
    const posted = slack.posted.at(-1);
    expect(posted?.text).toBe(
      ":rotating_light: Incident in demo (scope_violation): wrote outside src/** &lt;3",
    );
    expect(posted?.blocks?.map((b) => b.type)).toEqual(["section"]);
  });

  it("updates a posted card to say who chose what, buttons and note field gone; the same update twice changes nothing", async () => {
    const sent = await send(card);
    const ts = sent.message?.ts ?? "";
    const resolved = slackResolvedCardMessage({
      projectId: "demo",
      taskId: "S00-001.R1",
      title: "Database choice",
      question: "Which database should we use?",
      chosen: "Use SQLite",
      by: "slack:alice",
      note: "Only for the demo.\nNot for production.",
      url: "https://overseer.example.com/#/project/demo/task/S00-001.R1",
    });
    const update = () =>
      updateSlackMessage({
        token: slack.botToken,
        apiUrl: slack.apiUrl,
        channel: "C0DECISIONS",
        ts,
        message: resolved,
        timeoutMs: 5000,
      });
    expect(await update()).toEqual({
      ok: true,
      status: 200,
      error: null,
      message: { channel: "C0DECISIONS", ts },
    });
    expect(await update()).toMatchObject({ ok: true });
    expect(slack.refusedUpdates).toEqual([]);
    const now = slack.messageAt("C0DECISIONS", ts);
    expect(now?.blocks?.map((b) => b.type)).toEqual(["section", "section", "section"]);
    const texts = JSON.stringify(now?.blocks);
    expect(texts).toContain(":white_check_mark: *slack:alice* chose *Use SQLite*");
    expect(texts).toContain("> Only for the demo.\\n> Not for production.");
    expect(texts).not.toContain("overseer_resolve");
    expect(slack.updates.slice(-2).map((m) => m.ts)).toEqual([ts, ts]);

    const missing = await updateSlackMessage({
      token: slack.botToken,
      apiUrl: slack.apiUrl,
      channel: "C0DECISIONS",
      ts: "1.000001",
      message: resolved,
      timeoutMs: 5000,
    });
    expect(missing).toMatchObject({ ok: false, error: expect.stringContaining("message_not_found") });
  });

  it("fails an attempt with Slack's reason: unknown channel, bad token, no token", async () => {
    // A channel can be mended (the bot invited) while the delivery still retries.
    const lost = await send(card, "C0ELSEWHERE");
    expect(lost).toMatchObject({ ok: false, error: expect.stringContaining("channel_not_found") });
    expect(lost.final).toBeUndefined();
    // A token Slack refuses, or none at all, is final: a dead letter at once, not after every retry.
    expect(await send(card, "C0DECISIONS", "xoxb-wrong")).toMatchObject({
      ok: false,
      error: expect.stringContaining("invalid_auth"),
      final: true,
    });
    expect(await send(card, "C0DECISIONS", "")).toMatchObject({
      ok: false,
      error: expect.stringContaining("OVERSEER_SLACK_BOT_TOKEN"),
      final: true,
    });
  });
});
