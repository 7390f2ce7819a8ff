import { DecisionButtonValueSchema, type WebhookPayload, WebhookPayloadSchema } from "@overseer/api-contract";
import { SlackDouble } from "@overseer/test-support";
import { afterAll, describe, expect, it } from "vitest";
import { postSlackMessage, slackMessageOf } from "../src/index.ts";

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
    expect(await send(card)).toEqual({ ok: true, status: 200, error: null });
    expect(slack.refusedPosts).toEqual([]);
    const posted = slack.posted.at(-1);
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

  it("fails an attempt with Slack's reason: unknown channel, bad token, no token", async () => {
    expect(await send(card, "C0ELSEWHERE")).toMatchObject({
      ok: false,
      error: expect.stringContaining("channel_not_found"),
    });
    expect(await send(card, "C0DECISIONS", "xoxb-wrong")).toMatchObject({
      ok: false,
      error: expect.stringContaining("invalid_auth"),
    });
    expect(await send(card, "C0DECISIONS", "")).toMatchObject({
      ok: false,
      error: expect.stringContaining("OVERSEER_SLACK_BOT_TOKEN"),
    });
  });
});
