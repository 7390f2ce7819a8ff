import { readEventStream, type ServerSentEvent } from "./event-stream-reader.ts";

/**
 * Defaults of `followEventStream`. The reconnection delay is the server's to set (`retry:`);
 * this one holds until it does (the WHATWG EventSource leaves the initial value to the client).
 */
export const EVENT_STREAM_DEFAULTS = Object.freeze({
  /** Milliseconds before reconnecting, until the server sends `retry:`. */
  retryMs: 2000,
  /** Failed connections in a row (no event in between) before following gives up. */
  maxReconnects: Number.POSITIVE_INFINITY,
});

/** HTTP statuses that mean "come back later" (a busy or restarting server): reconnect, not fail. */
const RECONNECT_STATUSES: ReadonlySet<number> = new Set([429, 502, 503, 504]);

export interface FollowEventStreamOptions {
  /** Request headers of each connection (asked again on every reconnect, e.g. for a fresh token). */
  readonly headers?: () => Readonly<Record<string, string>>;
  /** Resume after this event id (sent as Last-Event-ID on the first connection). */
  readonly lastEventId?: string;
  readonly retryMs?: number;
  readonly maxReconnects?: number;
  /** Ends following (the generator returns). */
  readonly signal?: AbortSignal;
  /** `open` on each answered connection; `reconnecting` (with why) before each wait to reconnect. */
  readonly onState?: (state: "open" | "reconnecting", detail: string) => void;
}

/** The server refused the stream with a status reconnecting would not change (401, 403, 404, 400, 500…). */
export class EventStreamHttpError extends Error {
  override readonly name = "EventStreamHttpError";
  constructor(
    readonly status: number,
    /** The response body, parsed as JSON when it is JSON, else null. */
    readonly body: unknown,
    /** The response body as text. */
    readonly text: string,
  ) {
    super(`the event stream answered HTTP ${status}: ${text.trim().slice(0, 300)}`);
  }
}

/** `maxReconnects` connections in a row failed; `cause` is the last failure. */
export class EventStreamLostError extends Error {
  override readonly name = "EventStreamLostError";
  constructor(
    readonly attempts: number,
    options: { cause: unknown },
  ) {
    super(`lost the event stream ${attempts} times in a row (${describe(options.cause)})`, options);
  }
}

/**
 * Follows a server-sent event stream across connections, as EventSource does but over fetch (so
 * a bearer token travels in a header) and with the caller deciding when it is over: yields every
 * event until the caller leaves the loop (on its own terminal event) or `signal` aborts. When a
 * connection fails, ends, or is answered 429/502/503/504, it waits the server's `retry:`
 * interval (or Retry-After, when longer) and reconnects with Last-Event-ID set to the last `id:`
 * received, so nothing is lost or repeated. Any other non-2xx answer throws
 * EventStreamHttpError; `maxReconnects` failures in a row throw EventStreamLostError.
 */
export async function* followEventStream(
  url: string,
  options: FollowEventStreamOptions = {},
): AsyncGenerator<ServerSentEvent> {
  const { signal } = options;
  const maxReconnects = options.maxReconnects ?? EVENT_STREAM_DEFAULTS.maxReconnects;
  let retryMs = options.retryMs ?? EVENT_STREAM_DEFAULTS.retryMs;
  let lastEventId = options.lastEventId;
  let failures = 0;
  while (!signal?.aborted) {
    let failure: unknown;
    let waitMs = retryMs;
    try {
      const headers: Record<string, string> = { ...options.headers?.(), Accept: "text/event-stream" };
      if (lastEventId !== undefined) headers["Last-Event-ID"] = lastEventId;
      const res = await fetch(url, { headers, signal });
      if (!res.ok || !res.body) {
        const text = await res.text().catch(() => "");
        const error = new EventStreamHttpError(res.status, parseJson(text), text);
        if (!RECONNECT_STATUSES.has(res.status)) throw error;
        failure = error;
        waitMs = Math.max(retryMs, retryAfterMs(res.headers.get("Retry-After")));
      } else {
        options.onState?.("open", "");
        for await (const part of readEventStream(res.body)) {
          if (part.kind === "retry") retryMs = waitMs = part.ms;
          if (part.kind !== "event") continue;
          failures = 0;
          if (part.event.id !== undefined) lastEventId = part.event.id;
          yield part.event;
        }
        failure = new Error("the server ended the stream");
      }
    } catch (error) {
      if (signal?.aborted) return;
      if (error instanceof EventStreamHttpError) throw error;
      failure = error;
    }
    failures++;
    if (failures > maxReconnects) throw new EventStreamLostError(failures, { cause: failure });
    options.onState?.("reconnecting", describe(failure));
    await pause(waitMs, signal);
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/** Retry-After in seconds (the gateway's form); an HTTP date or nothing counts as 0. */
function retryAfterMs(value: string | null): number {
  const seconds = Number(value);
  return value && Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : 0;
}

/** A failure's own words: fetch's "fetch failed" names its cause (ECONNREFUSED…) only there. */
function describe(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const why = cause?.code ?? cause?.message;
  const message = error instanceof Error ? error.message : String(error);
  return why ? `${message}: ${why}` : message;
}

/** Waits `ms`, or less when `signal` aborts. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}
