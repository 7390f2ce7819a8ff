import { z } from "./openapi-zod.ts";

/** The answer to a Slack button click on a decision card (Slack itself only needs the 200). */
export const SlackInteractionResultSchema = z
  .object({
    outcome: z.enum(["resolved", "already_resolved"]).openapi({
      description:
        "resolved: this click resolved the card; already_resolved: it was resolved before (by this or another click, or another surface) and nothing changed.",
    }),
    project_id: z.string(),
    decision_id: z.string(),
    selected_option: z.string().nullable(),
    resolved_by: z.string().nullable(),
    message_updated: z.boolean().openapi({
      description:
        "Whether the click's response_url took the answer: on `resolved` the message replaced to say who chose what; on `already_resolved` who chose it, told to the clicker alone. Either way the outbox then updates the card's message with chat.update.",
    }),
  })
  .openapi("SlackInteractionResult");

/**
 * What a decision card's button carries in its `value` (Block Kit: at most 2000 characters):
 * which card of which project, and which option. Written by the Slack sender
 * (`@overseer/notify`), read back by the gateway's interactivity route.
 */
export const DecisionButtonValueSchema = z.object({
  project_id: z.string().min(1),
  decision_id: z.string().min(1),
  option_id: z.string().min(1),
});
export type DecisionButtonValue = z.infer<typeof DecisionButtonValueSchema>;

/** The `action_id` of a decision button is this prefix and the option id. */
export const DECISION_ACTION_PREFIX = "overseer_resolve:";

/** The `action_id` of a decision card's note field (a `plain_text_input`); its text is the resolution's note. */
export const DECISION_NOTE_ACTION_ID = "overseer_note";

/** A decision button's `value`. */
export function decisionButtonValue(value: DecisionButtonValue): string {
  return JSON.stringify(value);
}
