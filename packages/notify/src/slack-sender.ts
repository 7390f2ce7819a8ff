import type { WebClient } from "@slack/web-api";
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

/**
 * Slack's answers for a token it does not take (https://api.slack.com/methods/chat.postMessage,
 * "Errors"): no retry can mend them, only the operator (a redeliver once the token is fixed).
 */
const REFUSED_TOKEN = new Set([
  "not_authed",
  "invalid_auth",
  "account_inactive",
  "token_revoked",
  "token_expired",
]);

function failure(error: string, slackError: string | undefined, status: number | null): SlackOutcome {
  const final = slackError !== undefined && REFUSED_TOKEN.has(slackError);
  return { ok: false, status, error, message: null, ...(final ? { final } : {}) };
}

const noToken = (): SlackOutcome => ({
  ok: false,
  status: null,
  error: NO_TOKEN,
  message: null,
  final: true,
});

/**
 * `@slack/web-api` (with axios), loaded at the first message rather than at import, so a service
 * whose projects send no Slack never holds it; once loaded it is kept (a failed load is retried).
 */
let slackSdk: Promise<typeof import("@slack/web-api")> | undefined;

function loadSlackSdk(): Promise<typeof import("@slack/web-api")> {
  slackSdk ??= import("@slack/web-api");
  slackSdk.catch(() => {
    slackSdk = undefined;
  });
  return slackSdk;
}

async function clientOf(attempt: Pick<SlackAttempt, "token" | "apiUrl" | "timeoutMs">): Promise<WebClient> {
  const { WebClient } = await loadSlackSdk();
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
  if (!attempt.token) return noToken();
  try {
    const answer = await (await clientOf(attempt)).chat.postMessage({
      channel: attempt.channel,
      text: attempt.message.text,
      blocks: attempt.message.blocks as never,
      unfurl_links: false,
    });
    if (answer.ok && answer.ts) {
      const channel = answer.channel ?? attempt.channel;
      return { ok: true, status: 200, error: null, message: { channel, ts: answer.ts } };
    }
    return failure(`Slack chat.postMessage: ${answer.error ?? "not ok"}`, answer.error, 200);
  } catch (error) {
    return failure(
      `Slack chat.postMessage to ${attempt.channel} failed: ${reasonOf(error)}`,
      slackErrorOf(error),
      null,
    );
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
  if (!attempt.token) return noToken();
  try {
    const answer = await (await clientOf(attempt)).chat.update({
      channel: attempt.channel,
      ts: attempt.ts,
      text: attempt.message.text,
      blocks: attempt.message.blocks as never,
    });
    if (answer.ok)
      return { ok: true, status: 200, error: null, message: { channel: attempt.channel, ts: attempt.ts } };
    return failure(`Slack chat.update: ${answer.error ?? "not ok"}`, answer.error, 200);
  } catch (error) {
    return failure(
      `Slack chat.update of message ${attempt.ts} in ${attempt.channel} failed: ${reasonOf(error)}`,
      slackErrorOf(error),
      null,
    );
  }
}

/** Slack's `error` code of a failed Web API call (the client throws on `ok: false`). */
function slackErrorOf(error: unknown): string | undefined {
  return (error as { data?: { error?: string } }).data?.error;
}

function reasonOf(error: unknown): string {
  return slackErrorOf(error) ?? (error as Error).message;
}
