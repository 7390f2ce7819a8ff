/**
 * What a forge said about a token's rate limit, shared by every adapter of that token in the
 * process (one gate per forge API URL and token, `rateGateFor`). The forge runner makes an
 * adapter per job, so without it each job would learn a rate limit on its own and keep
 * spending the quota the forge asked to leave alone. A rate-limit answer that names its end
 * (`Retry-After`, or `x-ratelimit-remaining: 0` with `x-ratelimit-reset` / `RateLimit-Reset`,
 * as GitHub, GitLab and Gitea document them) holds every later request of the token until
 * then; a request that would wait longer than its adapter's longest wait is not sent, and is
 * answered 429 with the seconds left, so the adapter reports `rate_limited` without spending a
 * call.
 */
import { createHash } from "node:crypto";

/** The longest hold a forge's answer may impose (a garbled reset far ahead must not stop a token for good). */
const MAX_HOLD_MS = 3_600_000;

/**
 * GitHub counts REST (`core`), GraphQL and search in separate windows and names the one an
 * answer is about (`x-ratelimit-resource`): an exhausted window holds only the requests of its
 * own resource. Every other hold (a `Retry-After`: GitHub's secondary limits span all requests;
 * GitLab's and Gitea's one window) holds them all (`ALL`).
 */
const SEPARATE_RESOURCES = new Set(["core", "graphql", "search"]);
const ALL = "*";

/** The rate-limit resource a request to `url` counts against on GitHub (`core` for anything else). */
export function requestResource(url: string): string {
  const path = new URL(url, "http://forge.invalid").pathname;
  if (path.endsWith("/graphql")) return "graphql";
  if (/\/search\//.test(path)) return "search";
  return "core";
}

export class ForgeRateGate {
  readonly #until = new Map<string, number>();

  /** Until when (ms since the epoch) the forge asked this token to wait, for any resource; 0 when it did not. */
  get heldUntil(): number {
    const until = Math.max(0, ...this.#until.values());
    return until > Date.now() ? until : 0;
  }

  /**
   * Waits until the token may send a request of `resource` again; returns 0 then. A hold
   * longer than `maxWaitMs` is not waited: its ms left are returned at once.
   */
  async pass(maxWaitMs: number, resource = "core"): Promise<number> {
    for (;;) {
      const until = Math.max(this.#until.get(ALL) ?? 0, this.#until.get(resource) ?? 0);
      const left = until - Date.now();
      if (left <= 0) return 0;
      if (left > maxWaitMs) return left;
      await new Promise((resolve) => setTimeout(resolve, left));
    }
  }

  /** Holds the token when `response` is a rate limit (or the last call of the window) naming its end. */
  observe(response: Response, now = Date.now()): void {
    const wait = rateLimitWaitMs(response, now);
    if (wait === null || wait <= 0) return;
    const named = response.headers.get("x-ratelimit-resource");
    const key =
      response.headers.get("retry-after") === null && named !== null && SEPARATE_RESOURCES.has(named)
        ? named
        : ALL;
    this.#until.set(key, Math.max(this.#until.get(key) ?? 0, now + Math.min(wait, MAX_HOLD_MS)));
  }
}

/**
 * The wait, in ms, a forge's answer asks for before the token's next request: `Retry-After`
 * on a 429 or a 403 (seconds or an HTTP date), else the reset time when no request is left in
 * the window (`x-ratelimit-remaining: 0` / `RateLimit-Remaining: 0`, on any answer: the next
 * request would be refused). `null` when the answer asks for no wait.
 */
export function rateLimitWaitMs(response: Response, now: number): number | null {
  const { status, headers } = response;
  const retryAfter = headers.get("retry-after");
  if (retryAfter !== null && (status === 429 || status === 403 || status === 503)) {
    const seconds = Number(retryAfter);
    if (retryAfter.trim() !== "" && Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
    const date = Date.parse(retryAfter);
    if (!Number.isNaN(date)) return Math.max(0, date - now);
  }
  const exhausted =
    headers.get("x-ratelimit-remaining") === "0" || headers.get("ratelimit-remaining") === "0";
  const reset = headers.get("x-ratelimit-reset") ?? headers.get("ratelimit-reset");
  if (exhausted && reset !== null && Number.isFinite(Number(reset))) {
    // Epoch seconds; one more second so the request goes after the reset, as GitHub advises.
    return Math.max(0, Number(reset) * 1000 - now + 1000);
  }
  return null;
}

/**
 * A `fetch` that passes `gate` before each request (answering 429 itself, unsent, when the
 * hold is longer than `maxWaitMs`) and tells it what each answer said.
 */
export function gatedFetch(
  gate: ForgeRateGate,
  maxWaitMs: number,
  inner: typeof fetch = fetch,
): typeof fetch {
  return async (input, init) => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    const left = await gate.pass(maxWaitMs, requestResource(url));
    if (left > 0) return heldAnswer(left);
    const response = await inner(input, init);
    gate.observe(response);
    return response;
  };
}

/** The answer to a request the gate did not send: 429 with the seconds left, like the forge's own. */
export function heldAnswer(leftMs: number): Response {
  const seconds = Math.ceil(leftMs / 1000);
  return new Response(
    JSON.stringify({
      message: `API rate limit exceeded: the forge asked this token to wait ${seconds} s more (an earlier answer's Retry-After or rate-limit reset); the request was not sent.`,
    }),
    { status: 429, headers: { "content-type": "application/json", "retry-after": String(seconds) } },
  );
}

const gates = new Map<string, ForgeRateGate>();

/**
 * The process's gate of one token on one forge API (`credential`: the token, or a GitHub App
 * installation's id). Keyed by a hash, so no token is kept as a key.
 */
export function rateGateFor(apiUrl: string, credential: string): ForgeRateGate {
  const key = rateGateKey(apiUrl, credential);
  let gate = gates.get(key);
  if (!gate) {
    gate = new ForgeRateGate();
    gates.set(key, gate);
  }
  return gate;
}

/** The opaque identity of (API URL, credential): the gate's key, and Octokit's throttling id. */
export function rateGateKey(apiUrl: string, credential: string): string {
  return createHash("sha256")
    .update(`${apiUrl.replace(/\/+$/, "")}\n${credential}`)
    .digest("hex")
    .slice(0, 32);
}
