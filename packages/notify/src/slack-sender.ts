import { WebClient } from "@slack/web-api";
import type { SlackMessage } from "./slack-message.ts";
import type { AttemptOutcome } from "./webhook-sender.ts";

export interface SlackAttempt {
  /** The app's bot token (`xoxb-…`, scope chat:write). */
  readonly token: string;
  /** Slack's Web API base, `https://slack.com/api/`. */
  readonly apiUrl: string;
  readonly channel: string;
  readonly message: SlackMessage;
  readonly timeoutMs: number;
}

/** A Slack attempt's outcome; a posted message says where it is (channel and `ts`). */
export interface SlackOutcome extends AttemptOutcome {
  readonly message: { readonly channel: string; readonly ts: string } | null;
}

const NO_TOKEN =
  "no Slack bot token: set OVERSEER_SLACK_BOT_TOKEN on the coordinator (the app's xoxb- token)";

function clientOf(attempt: Pick<SlackAttempt, "token" | "apiUrl" | "timeoutMs">): WebClient {
  return new WebClient(attempt.token, {
    slackApiUrl: attempt.apiUrl,
    timeout: attempt.timeoutMs,
    retryConfig: { retries: 0 },
    rejectRateLimitedCalls: true,
  });
}

/**
 * One `chat.postMessage` with `@slack/web-api`. The client does not retry (the delivery job does,
 * with its backoff) and a rate-limited answer is a failed attempt like any other. `ok: true` is
 * success, with the message's channel and `ts` (kept to update it later); Slack's `error`
 * (`channel_not_found`, `not_in_channel`, `invalid_auth`…) is the failure's reason.
 */
export async function postSlackMessage(attempt: SlackAttempt): Promise<SlackOutcome> {
  if (!attempt.token) return { ok: false, status: null, error: NO_TOKEN, message: null };
  try {
    const answer = await clientOf(attempt).chat.postMessage({
      channel: attempt.channel,
      text: attempt.message.text,
      blocks: attempt.message.blocks as never,
      unfurl_links: false,
    });
    if (answer.ok && answer.ts) {
      const channel = answer.channel ?? attempt.channel;
      return { ok: true, status: 200, error: null, message: { channel, ts: answer.ts } };
    }
    return {
      ok: false,
      status: 200,
      error: `Slack chat.postMessage: ${answer.error ?? "not ok"}`,
      message: null,
    };
  } catch (error) {
    return {
      ok: false,
      status: null,
      error: `Slack chat.postMessage to ${attempt.channel} failed: ${reasonOf(error)}`,
      message: null,
    };
  }
}

/**
 * One `chat.update` of a message the bot posted (channel and `ts`): its text and blocks are
 * replaced. Updating twice with the same message changes nothing, so a retried or redelivered
 * attempt is harmless.
 */
export async function updateSlackMessage(
  attempt: SlackAttempt & { readonly ts: string },
): Promise<SlackOutcome> {
  if (!attempt.token) return { ok: false, status: null, error: NO_TOKEN, message: null };
  try {
    const answer = await clientOf(attempt).chat.update({
      channel: attempt.channel,
      ts: attempt.ts,
      text: attempt.message.text,
      blocks: attempt.message.blocks as never,
    });
    if (answer.ok)
      return { ok: true, status: 200, error: null, message: { channel: attempt.channel, ts: attempt.ts } };
    return { ok: false, status: 200, error: `Slack chat.update: ${answer.error ?? "not ok"}`, message: null };
  } catch (error) {
    return {
      ok: false,
      status: null,
      error: `Slack chat.update of message ${attempt.ts} in ${attempt.channel} failed: ${reasonOf(error)}`,
      message: null,
    };
  }
}

function reasonOf(error: unknown): string {
  const data = (error as { data?: { error?: string } }).data;
  return data?.error ?? (error as Error).message;
}
