import { z } from "@hono/zod-openapi";
import {
  DECISION_ACTION_PREFIX,
  DECISION_NOTE_ACTION_ID,
  type DecisionButtonValue,
  DecisionButtonValueSchema,
} from "@overseer/api-contract";
import type { Decision } from "@overseer/domain";
import { slackResolvedCardMessage } from "@overseer/notify";

/**
 * The part of Slack's `block_actions` interaction payload (sent form-encoded as `payload=<JSON>`)
 * the gateway reads: who clicked, which button, and where to answer. Slack sends more fields;
 * they are ignored.
 */
export const BlockActionsPayloadSchema = z.object({
  type: z.literal("block_actions", { error: "a block_actions interaction (a button click)" }),
  user: z.object({ id: z.string().min(1), username: z.string().optional(), name: z.string().optional() }),
  team: z.object({ id: z.string() }).nullable().optional(),
  response_url: z.string().url({ error: "the interaction's response_url" }),
  actions: z
    .array(
      z.object({
        type: z.string(),
        action_id: z.string(),
        block_id: z.string().optional(),
        value: z.string().optional(),
      }),
    )
    .min(1, { error: "at least one action" }),
  /** The message's input fields at the click: block id → action id → `{ type, value }`. */
  state: z
    .object({
      values: z.record(
        z.string(),
        z.record(z.string(), z.object({ type: z.string(), value: z.string().nullable().optional() })),
      ),
    })
    .optional(),
});
export type BlockActionsPayload = z.infer<typeof BlockActionsPayloadSchema>;

/** The decision button among the payload's actions, or undefined when it carries none. */
export function decisionAction(payload: BlockActionsPayload): DecisionButtonValue | undefined {
  for (const action of payload.actions) {
    if (action.type !== "button" || !action.action_id.startsWith(DECISION_ACTION_PREFIX)) continue;
    try {
      const parsed = DecisionButtonValueSchema.safeParse(JSON.parse(action.value ?? ""));
      if (parsed.success) return parsed.data;
    } catch {
      // not JSON: not one of ours
    }
  }
  return undefined;
}

/** The card's note field at the click (`overseer_note`), trimmed; undefined when empty or absent. */
export function decisionNote(payload: BlockActionsPayload): string | undefined {
  for (const block of Object.values(payload.state?.values ?? {})) {
    const value = block[DECISION_NOTE_ACTION_ID]?.value?.trim();
    if (value) return value;
  }
  return undefined;
}

/**
 * What the click's `response_url` gets once the card is resolved. A fresh resolution replaces
 * the message with who chose what (the same message chat.update writes from the outbox, for a
 * card resolved anywhere); a click on a card already resolved tells the clicker alone who chose
 * what, and leaves the message as it is.
 */
export function resolvedMessage(decision: Decision, fresh: boolean): Record<string, unknown> {
  const option = decision.options.find((o) => o.id === decision.selectedOption);
  const chosen = option?.label ?? decision.selectedOption ?? "?";
  const by = decision.resolvedBy ?? "?";
  if (!fresh) {
    return {
      response_type: "ephemeral",
      replace_original: false,
      text: `Already resolved by ${mrkdwn(by)}: *${mrkdwn(chosen)}*. Your click changed nothing.`,
    };
  }
  const message = slackResolvedCardMessage({
    projectId: decision.projectId,
    taskId: decision.itemId,
    title: decision.title,
    question: decision.question,
    chosen,
    by,
    note: decision.note,
    url: null,
  });
  return { replace_original: true, ...message };
}

/** Slack's mrkdwn escaping: `&`, `<` and `>` only. */
function mrkdwn(text: string): string {
  return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
}
