import { z } from "zod";

/**
 * Block Kit as Slack documents it ("Reference: blocks", "composition objects", "block elements"),
 * the part Overseer's messages use, with Slack's published limits: a double refuses what Slack
 * would refuse (`invalid_blocks`).
 */
const plainText = (max: number) =>
  z
    .object({
      type: z.literal("plain_text"),
      text: z.string().min(1).max(max),
      emoji: z.boolean().optional(),
    })
    .strict();
const text = (max: number) =>
  z.union([
    plainText(max),
    z
      .object({
        type: z.literal("mrkdwn"),
        text: z.string().min(1).max(max),
        verbatim: z.boolean().optional(),
      })
      .strict(),
  ]);
const blockId = z.string().max(255).optional();

export const ButtonElementSchema = z
  .object({
    type: z.literal("button"),
    text: plainText(75),
    action_id: z.string().max(255),
    value: z.string().max(2000).optional(),
    style: z.enum(["primary", "danger"]).optional(),
    url: z.string().max(3000).optional(),
  })
  .strict();

export const BlockSchema = z.discriminatedUnion("type", [
  z
    .object({
      type: z.literal("section"),
      text: text(3000).optional(),
      fields: z.array(text(2000)).max(10).optional(),
      block_id: blockId,
    })
    .strict()
    .refine((b) => b.text !== undefined || b.fields !== undefined, {
      error: "a section needs text or fields",
    }),
  z.object({ type: z.literal("header"), text: plainText(150), block_id: blockId }).strict(),
  z.object({ type: z.literal("divider"), block_id: blockId }).strict(),
  z
    .object({ type: z.literal("context"), elements: z.array(text(3000)).min(1).max(10), block_id: blockId })
    .strict(),
  z
    .object({
      type: z.literal("input"),
      label: plainText(2000),
      element: z
        .object({
          type: z.literal("plain_text_input"),
          action_id: z.string().max(255),
          multiline: z.boolean().optional(),
          min_length: z.number().int().min(0).max(3000).optional(),
          max_length: z.number().int().min(1).max(3000).optional(),
          placeholder: plainText(150).optional(),
          initial_value: z.string().optional(),
        })
        .strict(),
      optional: z.boolean().optional(),
      dispatch_action: z.boolean().optional(),
      hint: plainText(2000).optional(),
      block_id: blockId,
    })
    .strict(),
  z
    .object({
      type: z.literal("actions"),
      elements: z.array(ButtonElementSchema).min(1).max(25),
      block_id: blockId,
    })
    .strict(),
]);

/** A message's blocks: at most 50 (Slack: "up to 50 blocks in each message"). */
export const BlocksSchema = z.array(BlockSchema).max(50);

/**
 * The body a response_url accepts ("Handling user interaction": "Responding to interactions"):
 * a message (`text` and/or `blocks`) with `replace_original`, `delete_original`,
 * `response_type` and `thread_ts`.
 */
export const ResponseUrlMessageSchema = z
  .object({
    text: z.string().max(40_000).optional(),
    blocks: BlocksSchema.optional(),
    replace_original: z.boolean().optional(),
    delete_original: z.boolean().optional(),
    response_type: z.enum(["in_channel", "ephemeral"]).optional(),
    thread_ts: z.string().optional(),
  })
  .strict()
  .refine((m) => m.delete_original || m.text !== undefined || m.blocks !== undefined, {
    error: "a message needs text or blocks",
  });
export type ResponseUrlMessage = z.infer<typeof ResponseUrlMessageSchema>;
