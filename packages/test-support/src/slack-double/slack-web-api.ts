import type { IncomingHttpHeaders } from "node:http";
import { z } from "zod";
import { BlocksSchema } from "./slack-block-kit.ts";

/** A message chat.postMessage accepted. */
export interface PostedMessage {
  readonly channel: string;
  readonly ts: string;
  readonly text: string | undefined;
  readonly blocks: z.infer<typeof BlocksSchema> | undefined;
}

/**
 * chat.postMessage's arguments as Slack documents them (docs.slack.dev/reference/methods/
 * chat.postMessage): `channel` required, one of `text`, `blocks` or `attachments`, and the
 * optional formatting fields. Sent as a form (what `@slack/web-api` does: objects as JSON text)
 * or as JSON.
 */
const PostMessageArgs = z
  .object({
    token: z.string().optional(),
    channel: z.string().min(1),
    text: z.string().max(40_000).optional(),
    blocks: BlocksSchema.optional(),
    attachments: z.array(z.unknown()).optional(),
    thread_ts: z.string().optional(),
    reply_broadcast: z.boolean().optional(),
    mrkdwn: z.boolean().optional(),
    unfurl_links: z.boolean().optional(),
    unfurl_media: z.boolean().optional(),
    metadata: z.unknown().optional(),
    icon_emoji: z.string().optional(),
    icon_url: z.string().optional(),
    username: z.string().optional(),
    parse: z.enum(["full", "none"]).optional(),
    link_names: z.boolean().optional(),
  })
  .strict();

/**
 * chat.update's arguments as Slack documents them (docs.slack.dev/reference/methods/chat.update):
 * `channel` and `ts` of the message required; `text`, `blocks`, `attachments` replace its content.
 */
const UpdateArgs = z
  .object({
    token: z.string().optional(),
    channel: z.string().min(1),
    ts: z.string().regex(/^\d+\.\d+$/),
    text: z.string().max(40_000).optional(),
    blocks: BlocksSchema.optional(),
    attachments: z.array(z.unknown()).optional(),
    as_user: z.boolean().optional(),
    file_ids: z.array(z.string()).optional(),
    link_names: z.boolean().optional(),
    markdown_text: z.string().optional(),
    metadata: z.unknown().optional(),
    parse: z.enum(["full", "none"]).optional(),
    reply_broadcast: z.boolean().optional(),
  })
  .strict();

type Answer =
  | { ok: true; channel: string; ts: string; message: PostedMessage }
  | { ok: false; error: string };

interface WebApiState {
  readonly botToken: string;
  readonly channels: ReadonlySet<string>;
  readonly posted: readonly PostedMessage[];
}

/** The call's arguments (form or JSON) once its token is the bot's, or Slack's error. */
function authorisedArgs(
  state: WebApiState,
  headers: IncomingHttpHeaders,
  body: string,
): { raw: Record<string, unknown> } | { ok: false; error: string } {
  const json = /json/i.test(headers["content-type"] ?? "");
  let raw: Record<string, unknown>;
  try {
    raw = json ? JSON.parse(body) : formArgs(body);
  } catch {
    return { ok: false, error: "invalid_json" };
  }
  const bearer = /^Bearer (\S+)$/.exec(headers.authorization ?? "")?.[1];
  const token = bearer ?? (typeof raw.token === "string" ? raw.token : undefined);
  if (!token) return { ok: false, error: "not_authed" };
  if (token !== state.botToken) return { ok: false, error: "invalid_auth" };
  return { raw };
}

function argumentError(error: z.ZodError): { ok: false; error: string } {
  const field = String(error.issues[0]?.path[0] ?? "");
  return { ok: false, error: field === "blocks" ? "invalid_blocks" : "invalid_arguments" };
}

/** Slack's answer to one chat.postMessage call (always HTTP 200; `ok: false` with Slack's error code). */
export function postMessageAnswer(state: WebApiState, headers: IncomingHttpHeaders, body: string): Answer {
  const authorised = authorisedArgs(state, headers, body);
  if (!("raw" in authorised)) return authorised;
  const parsed = PostMessageArgs.safeParse(authorised.raw);
  if (!parsed.success) return argumentError(parsed.error);
  const args = parsed.data;
  if (args.text === undefined && args.blocks === undefined && args.attachments === undefined)
    return { ok: false, error: "no_text" };
  if (!state.channels.has(args.channel)) return { ok: false, error: "channel_not_found" };
  const ts = `${Math.floor(Date.now() / 1000)}.${String(state.posted.length + 1).padStart(6, "0")}`;
  const message = { channel: args.channel, ts, text: args.text, blocks: args.blocks };
  return { ok: true, channel: args.channel, ts, message };
}

/**
 * Slack's answer to one chat.update call: the message at `channel` and `ts` must be one the bot
 * posted (`message_not_found` otherwise), and gets the new text and blocks.
 */
export function updateMessageAnswer(state: WebApiState, headers: IncomingHttpHeaders, body: string): Answer {
  const authorised = authorisedArgs(state, headers, body);
  if (!("raw" in authorised)) return authorised;
  const parsed = UpdateArgs.safeParse(authorised.raw);
  if (!parsed.success) return argumentError(parsed.error);
  const args = parsed.data;
  if (args.text === undefined && args.blocks === undefined && args.attachments === undefined)
    return { ok: false, error: "no_text" };
  if (!state.channels.has(args.channel)) return { ok: false, error: "channel_not_found" };
  if (!state.posted.some((m) => m.channel === args.channel && m.ts === args.ts))
    return { ok: false, error: "message_not_found" };
  const message = { channel: args.channel, ts: args.ts, text: args.text, blocks: args.blocks };
  return { ok: true, channel: args.channel, ts: args.ts, message };
}

/** A form body's fields; `blocks`/`attachments`/`metadata` and booleans are JSON text in a form. */
function formArgs(body: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of new URLSearchParams(body)) {
    if (["blocks", "attachments", "metadata"].includes(key)) out[key] = JSON.parse(value);
    else if (value === "true" || value === "false") out[key] = value === "true";
    else out[key] = value;
  }
  return out;
}
