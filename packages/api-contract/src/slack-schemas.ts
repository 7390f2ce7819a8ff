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
      description: "Whether the message was replaced through the click's response_url to say who chose what.",
    }),
  })
  .openapi("SlackInteractionResult");
