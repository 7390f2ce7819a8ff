/**
 * The `fetch` the GitLab and Gitea adapters send through (GitHub's goes through Octokit's own
 * throttling and retry plugins): it counts every attempt, and retries a 5xx, a 429, a 403 that
 * says the rate limit is exhausted, or a request that got no answer, waiting what the forge
 * asks (`Retry-After`, or the reset time of `RateLimit-Reset` / `X-RateLimit-Reset`) or else an
 * exponential backoff. A wait longer than `maxDelayMs` is not waited: the response is returned
 * and the adapter reports `rate_limited`.
 *
 * Non-idempotent requests are retried too: the adapters make each write safe to repeat (a
 * pull request is created only after looking for it, and a conflict on create looks again).
 * With a `gate` (the token's, shared by every adapter of it in the process: forge-rate-gate.ts),
 * each attempt first waits out a rate limit another adapter of the token was told about.
 */
import type { ForgeCallCounter } from "./forge-call-counter.ts";
import { type ForgeRateGate, heldAnswer } from "./forge-rate-gate.ts";

export interface RetryPolicy {
  /** Retries after the first attempt. Default 4. */
  readonly retries: number;
  /** First backoff when the forge names no wait; doubled each retry. Default 500 ms. */
  readonly baseDelayMs: number;
  /** The longest single wait; a longer `Retry-After` fails instead. Default 60 000 ms. */
  readonly maxDelayMs: number;
  /** The token's rate-limit gate, shared per (forge, token) in the process. Default none. */
  readonly gate?: ForgeRateGate;
}

export const RETRY_POLICY_DEFAULTS: RetryPolicy = Object.freeze({
  retries: 4,
  baseDelayMs: 500,
  maxDelayMs: 60_000,
});

/** The wait a throttled or failing response asks for, in ms; `null` when it is not worth retrying. */
export function retryDelayMs(
  response: Response,
  attempt: number,
  policy: RetryPolicy,
  now: number,
): number | null {
  const { status, headers } = response;
  const exhausted =
    headers.get("x-ratelimit-remaining") === "0" || headers.get("ratelimit-remaining") === "0";
  const retriable =
    status === 429 || status >= 500 || (status === 403 && (exhausted || headers.has("retry-after")));
  if (!retriable) return null;
  const retryAfter = headers.get("retry-after");
  if (retryAfter !== null) {
    const seconds = Number(retryAfter);
    if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
    const date = Date.parse(retryAfter);
    if (!Number.isNaN(date)) return Math.max(0, date - now);
  }
  const reset = headers.get("ratelimit-reset") ?? headers.get("x-ratelimit-reset");
  if (exhausted && reset !== null && Number.isFinite(Number(reset))) {
    return Math.max(0, Number(reset) * 1000 - now + 1000);
  }
  return policy.baseDelayMs * 2 ** attempt;
}

export function retryingFetch(
  counter: ForgeCallCounter,
  policy: RetryPolicy,
  inner: typeof fetch = fetch,
): typeof fetch {
  return async (input, init) => {
    const template = new Request(input, init);
    for (let attempt = 0; ; attempt++) {
      const held = (await policy.gate?.pass(policy.maxDelayMs)) ?? 0;
      if (held > 0) return heldAnswer(held);
      counter.record();
      let response: Response;
      try {
        response = await inner(template.clone());
        policy.gate?.observe(response);
        if (response.status === 304) counter.recordNotModified();
      } catch (error) {
        if (attempt >= policy.retries) throw error;
        await delay(Math.min(policy.baseDelayMs * 2 ** attempt, policy.maxDelayMs));
        continue;
      }
      const wait = retryDelayMs(response, attempt, policy, Date.now());
      if (wait === null || attempt >= policy.retries || wait > policy.maxDelayMs) return response;
      await response.body?.cancel();
      await delay(wait);
    }
  };
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
