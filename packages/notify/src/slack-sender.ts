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

/**
 * One `chat.postMessage` with `@slack/web-api`. The client does not retry (the delivery job does,
 * with its backoff) and a rate-limited answer is a failed attempt like any other. `ok: true` is
 * success; Slack's `error` (`channel_not_found`, `not_in_channel`, `invalid_auth`…) is the
 * failure's reason.
 */
export async function postSlackMessage(attempt: SlackAttempt): Promise<AttemptOutcome> {
  if (!attempt.token) {
    return {
      ok: false,
      status: null,
      error: "no Slack bot token: set OVERSEER_SLACK_BOT_TOKEN on the coordinator (the app's xoxb- token)",
    };
  }
  const client = new WebClient(attempt.token, {
    slackApiUrl: attempt.apiUrl,
    timeout: attempt.timeoutMs,
    retryConfig: { retries: 0 },
    rejectRateLimitedCalls: true,
  });
  try {
    const answer = await client.chat.postMessage({
      channel: attempt.channel,
      text: attempt.message.text,
      blocks: attempt.message.blocks as never,
      unfurl_links: false,
    });
    if (answer.ok) return { ok: true, status: 200, error: null };
    return { ok: false, status: 200, error: `Slack chat.postMessage: ${answer.error ?? "not ok"}` };
  } catch (error) {
    const data = (error as { data?: { error?: string } }).data;
    const reason = data?.error ?? (error as Error).message;
    return {
      ok: false,
      status: null,
      error: `Slack chat.postMessage to ${attempt.channel} failed: ${reason}`,
    };
  }
}
