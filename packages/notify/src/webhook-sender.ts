import { randomBytes } from "node:crypto";
import { Webhook } from "standardwebhooks";

/** A fresh Standard Webhooks signing secret: `whsec_` and 32 random bytes in base64. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString("base64")}`;
}

/**
 * The Standard Webhooks headers of one message: `webhook-signature` carries one `v1,…`
 * signature per secret (newest first), so during a rotation a receiver holding either the new or
 * the previous secret verifies it (the spec's space-separated list).
 */
export function signedHeaders(
  secrets: readonly string[],
  webhookId: string,
  body: string,
  at: Date,
): Record<string, string> {
  if (secrets.length === 0) throw new Error(`webhook ${webhookId}: no signing secret`);
  const signatures = secrets.map((secret) => new Webhook(secret).sign(webhookId, at, body));
  return {
    "webhook-id": webhookId,
    "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
    "webhook-signature": signatures.join(" "),
  };
}

export interface WebhookAttempt {
  readonly url: string;
  readonly secrets: readonly string[];
  /** The delivery's idempotency key: the same on every attempt. */
  readonly webhookId: string;
  readonly body: string;
  readonly timeoutMs: number;
  readonly userAgent?: string;
}

export interface AttemptOutcome {
  /** A 2xx answer. */
  readonly ok: boolean;
  readonly status: number | null;
  /** Why it failed, for the delivery's `last_error`; null when ok. */
  readonly error: string | null;
  /** No retry can mend it (a missing or refused credential): a dead letter at once. */
  readonly final?: boolean;
}

/**
 * One POST of a signed message. Signed at send time, so the timestamp is fresh on every retry
 * (a receiver refuses stale ones). A 2xx is success; anything else, a redirect (never followed),
 * a timeout or a connection error is a failure to retry.
 */
export async function postWebhook(attempt: WebhookAttempt, now = new Date()): Promise<AttemptOutcome> {
  const headers = {
    ...signedHeaders(attempt.secrets, attempt.webhookId, attempt.body, now),
    "content-type": "application/json",
    "user-agent": attempt.userAgent ?? "Overseer-Webhooks/1",
  };
  try {
    const response = await fetch(attempt.url, {
      method: "POST",
      headers,
      body: attempt.body,
      redirect: "manual",
      signal: AbortSignal.timeout(attempt.timeoutMs),
    });
    await response.body?.cancel().catch(() => undefined);
    if (response.status >= 200 && response.status < 300)
      return { ok: true, status: response.status, error: null };
    return { ok: false, status: response.status, error: `the receiver answered HTTP ${response.status}` };
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code;
    const name = (error as Error).name;
    const what =
      name === "TimeoutError"
        ? `no answer within ${attempt.timeoutMs} ms`
        : `${(error as Error).message}${cause ? ` (${cause})` : ""}`;
    return { ok: false, status: null, error: `POST ${attempt.url} failed: ${what}` };
  }
}
