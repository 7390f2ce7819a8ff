/**
 * Retries for the tracker adapters' calls: a rate limit (429) or a server error (5xx, a dropped
 * connection) is tried again after the tracker's `Retry-After` or an exponential backoff; a
 * refused credential fails at once with an error that names what to fix; anything else fails at
 * once as it came.
 */

export interface RetryPolicy {
  /** Tries after the first (default 4). */
  readonly retries: number;
  /** The first backoff; doubles each time (default 250 ms). */
  readonly baseDelayMs: number;
  /** The longest wait, `Retry-After` included (default 30 s). */
  readonly maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { retries: 4, baseDelayMs: 250, maxDelayMs: 30_000 };

/** How a failed call is classified by the adapter that made it. */
export type Failure =
  | { readonly kind: "retry"; readonly retryAfterMs?: number }
  | { readonly kind: "credentials"; readonly message: string }
  | { readonly kind: "fatal" };

/** A tracker refused the credentials: the message says which to fix and how. */
export class TrackerCredentialsError extends Error {
  override readonly name: string = "TrackerCredentialsError";
}

export async function withRetry<T>(
  policy: RetryPolicy,
  classify: (error: unknown) => Failure,
  call: () => Promise<T>,
): Promise<T> {
  for (let attempt = 0; ; attempt += 1) {
    try {
      return await call();
    } catch (error) {
      const failure = classify(error);
      if (failure.kind === "credentials")
        throw new TrackerCredentialsError(failure.message, { cause: error });
      if (failure.kind === "fatal" || attempt >= policy.retries) throw error;
      const backoff = policy.baseDelayMs * 2 ** attempt;
      const wait = Math.min(policy.maxDelayMs, Math.max(backoff, failure.retryAfterMs ?? 0));
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}
