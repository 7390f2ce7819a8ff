import { readEventStream, type ServerSentEvent } from "@overseer/event-stream";

/**
 * One SSE connection for tests (no reconnection: tests look at each connection the gateway
 * answers), parsed by @overseer/event-stream like the CLI and the web app: collects events,
 * comments and `retry:` intervals, and waits for them with a bound.
 */
export type SseEvent = ServerSentEvent;

export interface SseConnection {
  readonly status: number;
  readonly events: SseEvent[];
  readonly comments: string[];
  /** The `retry:` intervals the server sent, in ms. */
  readonly retries: number[];
  /** Resolves when the server ended the stream. */
  readonly ended: Promise<void>;
  /** Waits until `count` events matching `predicate` arrived (default: any), within `timeoutMs`. */
  waitFor(predicate: (e: SseEvent) => boolean, count?: number, timeoutMs?: number): Promise<SseEvent[]>;
  waitForComment(text: string, timeoutMs?: number): Promise<void>;
  close(): void;
}

export async function openSse(url: string, headers: Record<string, string> = {}): Promise<SseConnection> {
  const controller = new AbortController();
  const res = await fetch(url, {
    headers: { Accept: "text/event-stream", ...headers },
    signal: controller.signal,
  });
  const events: SseEvent[] = [];
  const comments: string[] = [];
  const retries: number[] = [];
  const waiters = new Set<() => void>();
  const notify = () => {
    for (const w of [...waiters]) w();
  };
  let done = false;
  const ended = (async () => {
    if (!res.body) return;
    try {
      for await (const part of readEventStream(res.body)) {
        if (part.kind === "event") events.push(part.event);
        else if (part.kind === "comment") comments.push(part.text.trim());
        else retries.push(part.ms);
        notify();
      }
    } catch {
      // aborted by close()
    } finally {
      done = true;
      notify();
    }
  })();

  const waitUntil = (check: () => boolean, what: string, timeoutMs: number) =>
    new Promise<void>((resolve, reject) => {
      const test = () => {
        if (check()) {
          cleanup();
          resolve();
        } else if (done) {
          cleanup();
          reject(new Error(`stream ended before ${what}`));
        }
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
      }, timeoutMs);
      const cleanup = () => {
        clearTimeout(timer);
        waiters.delete(test);
      };
      waiters.add(test);
      test();
    });

  return {
    status: res.status,
    events,
    comments,
    retries,
    ended,
    async waitFor(predicate, count = 1, timeoutMs = 10_000) {
      await waitUntil(
        () => events.filter(predicate).length >= count,
        `${count} matching event(s)`,
        timeoutMs,
      );
      return events.filter(predicate);
    },
    async waitForComment(text, timeoutMs = 10_000) {
      await waitUntil(() => comments.some((c) => c.includes(text)), `comment "${text}"`, timeoutMs);
    },
    close: () => controller.abort(),
  };
}
