import {
  DECISION_ACTION_PREFIX,
  DECISION_NOTE_ACTION_ID,
  decisionButtonValue,
  type WebhookPayload,
} from "@overseer/api-contract";

/** A Slack message: `text` (the notification's fallback and screen-reader text) and Block Kit `blocks`. */
export interface SlackMessage {
  readonly text: string;
  readonly blocks: Record<string, unknown>[];
}

/** Block Kit's limits (Slack "Reference: blocks"): section text, button label, text input. */
const SECTION_MAX = 3000;
const BUTTON_LABEL_MAX = 75;
const NOTE_MAX = 3000;

/**
 * The Slack message of a notification. A decision card (`decision.opened`) has a note field
 * (action_id `overseer_note`) and one button per option (action_id `overseer_resolve:<option>`,
 * value naming project, card and option), read back by `POST /api/v1/slack/interactions`; an
 * option that needs a note says so on its button. Every other type is a plain message with a
 * link to its page.
 */
export function slackMessageOf(payload: WebhookPayload): SlackMessage {
  const d = payload.data;
  const link = "url" in d && d.url ? `\n<${d.url}|Open in Overseer>` : "";
  if (payload.type !== "decision.opened") {
    return { text: clip(summaryOf(payload), SECTION_MAX), blocks: [section(`${summaryOf(payload)}${link}`)] };
  }
  const data = payload.data;
  const buttons = data.options.map((o) => ({
    type: "button",
    text: {
      type: "plain_text",
      text: o.requires_note
        ? `${clip(o.label, BUTTON_LABEL_MAX - 7)} (note)`
        : clip(o.label, BUTTON_LABEL_MAX),
      emoji: true,
    },
    action_id: `${DECISION_ACTION_PREFIX}${o.id}`,
    value: decisionButtonValue({
      project_id: data.project_id,
      decision_id: data.decision_id,
      option_id: o.id,
    }),
  }));
  const where = `${mrkdwn(data.project_id)}${data.task_id ? ` (${mrkdwn(data.task_id)})` : ""}`;
  const blocks: Record<string, unknown>[] = [
    section(`*Needs you* in ${where}: *${mrkdwn(data.title)}*\n${mrkdwn(data.question)}`),
    ...(data.reason
      ? [{ type: "context", elements: [{ type: "mrkdwn", text: clip(mrkdwn(data.reason), SECTION_MAX) }] }]
      : []),
    {
      type: "input",
      block_id: "note",
      optional: true,
      label: { type: "plain_text", text: "Note (sent with your choice)" },
      element: {
        type: "plain_text_input",
        action_id: DECISION_NOTE_ACTION_ID,
        multiline: true,
        max_length: NOTE_MAX,
      },
    },
    ...(buttons.length > 0
      ? [{ type: "actions", block_id: `decision:${data.decision_id}`.slice(0, 255), elements: buttons }]
      : []),
    ...(link ? [section(link.trim())] : []),
  ];
  return { text: clip(`Needs you in ${data.project_id}: ${data.question}`, SECTION_MAX), blocks };
}

/** A resolved decision card, as its Slack message says it: what was asked, who chose what. */
export interface ResolvedCard {
  readonly projectId: string;
  readonly taskId: string | null;
  readonly title: string;
  readonly question: string;
  /** The chosen option's label (its id when the card no longer names it). */
  readonly chosen: string;
  /** Who resolved it: `slack:<token name>`, a token's name, `cli:<user>`… */
  readonly by: string;
  readonly note: string | null;
  /** The task's dashboard page, when known. */
  readonly url: string | null;
}

/**
 * The message a decision card's message becomes once it is resolved, wherever it was resolved
 * (a button, the resolve route, the CLI): the question and who chose what, without buttons or
 * note field, so nobody clicks a card that is already answered.
 */
export function slackResolvedCardMessage(card: ResolvedCard): SlackMessage {
  const where = `${mrkdwn(card.projectId)}${card.taskId ? ` (${mrkdwn(card.taskId)})` : ""}`;
  const outcome = `:white_check_mark: *${mrkdwn(card.by)}* chose *${mrkdwn(card.chosen)}*`;
  const note = card.note ? `\n> ${mrkdwn(card.note).replaceAll("\n", "\n> ")}` : "";
  return {
    text: clip(
      `Answered in ${card.projectId}: ${card.by} chose ${card.chosen} (${card.question})`,
      SECTION_MAX,
    ),
    blocks: [
      section(`*Answered* in ${where}: *${mrkdwn(card.title)}*\n${mrkdwn(card.question)}`),
      section(`${outcome}${note}`),
      ...(card.url ? [section(`<${card.url}|Open in Overseer>`)] : []),
    ],
  };
}

/** One line saying what happened, per type. */
function summaryOf(payload: WebhookPayload): string {
  const p = mrkdwn(payload.data.project_id ?? "every project");
  switch (payload.type) {
    case "decision.opened":
      return `Needs you in ${p}: ${mrkdwn(payload.data.question)}`;
    case "decision.resolved":
      return `Answered in ${p}: ${mrkdwn(payload.data.option_id)} by ${mrkdwn(payload.data.by)}`;
    case "incident.recorded":
      return `:rotating_light: Incident in ${p} (${mrkdwn(payload.data.kind)}): ${mrkdwn(payload.data.message)}`;
    case "project.paused":
      return `${p} paused at its ${payload.data.bound} bound: ${mrkdwn(payload.data.reason)}`;
    case "mission.completed":
      return `:white_check_mark: Mission of ${p} completed${payload.data.reviewer ? ` (approved by ${mrkdwn(payload.data.reviewer)})` : ""}`;
    case "pr.opened":
      return `Pull request #${payload.data.number} opened in ${p}: <${payload.data.pull_request_url}>`;
    case "pr.merged":
      return `Pull request${payload.data.number === null ? "" : ` #${payload.data.number}`} merged in ${p} (${payload.data.merge_commit_sha.slice(0, 12)})`;
    case "overseer.test":
      return `Test message: ${mrkdwn(payload.data.message)}`;
  }
}

function section(text: string): Record<string, unknown> {
  return { type: "section", text: { type: "mrkdwn", text: clip(text || " ", SECTION_MAX) } };
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** Slack's mrkdwn escaping: `&`, `<` and `>` only. */
function mrkdwn(text: string): string {
  return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
}
