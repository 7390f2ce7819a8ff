/** A minimal SSE client over fetch, for tests: collects events and comments, waits with a bound. */
export interface SseEvent {
  id: string | undefined;
  event: string;
  data: string;
}

export interface SseConnection {
  readonly status: number;
  readonly events: SseEvent[];
  readonly comments: string[];
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
  const waiters = new Set<() => void>();
  const notify = () => {
    for (const w of [...waiters]) w();
  };
  let done = false;
  const ended = (async () => {
    if (!res.body) return;
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    try {
      for (;;) {
        const { value, done: finished } = await reader.read();
        if (finished) break;
        buffer += value;
        let cut = buffer.indexOf("\n\n");
        while (cut >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          parseBlock(block, events, comments);
          cut = buffer.indexOf("\n\n");
        }
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

function parseBlock(block: string, events: SseEvent[], comments: string[]): void {
  let id: string | undefined;
  let event = "message";
  const data: string[] = [];
  let hasField = false;
  for (const line of block.split("\n")) {
    if (line.startsWith(":")) {
      comments.push(line.slice(1).trim());
      continue;
    }
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "data") {
      data.push(value);
      hasField = true;
    } else if (field === "id") {
      id = value;
      hasField = true;
    } else if (field === "event") {
      event = value;
      hasField = true;
    }
  }
  if (hasField && data.length > 0) events.push({ id, event, data: data.join("\n") });
}
