import { createParser } from "eventsource-parser";

/** One dispatched server-sent event. `event` is `message` when the server named none. */
export interface ServerSentEvent {
  readonly event: string;
  /** The event's `id:` field, when it had one (the Last-Event-ID to resume after it). */
  readonly id: string | undefined;
  readonly data: string;
}

/** What one connection's body carries: events, comments (keep-alives) and `retry:` intervals. */
export type EventStreamPart =
  | { readonly kind: "event"; readonly event: ServerSentEvent }
  | { readonly kind: "comment"; readonly text: string }
  | { readonly kind: "retry"; readonly ms: number };

/**
 * Reads one `text/event-stream` response body with eventsource-parser, yielding its parts in
 * order until the body ends. The framing is the WHATWG one: lines end in CRLF, CR or LF, chunks
 * may split a line (or a UTF-8 character) anywhere, a leading BOM is skipped, and an event left
 * incomplete when the body ends is dropped. Leaving the loop early cancels the body.
 */
export async function* readEventStream(body: ReadableStream<Uint8Array>): AsyncGenerator<EventStreamPart> {
  const parsed: EventStreamPart[] = [];
  const parser = createParser({
    onEvent: ({ event, id, data }) =>
      parsed.push({ kind: "event", event: { event: event ?? "message", id, data } }),
    onComment: (text) => parsed.push({ kind: "comment", text }),
    onRetry: (ms) => parsed.push({ kind: "retry", ms }),
  });
  const decoder = new TextDecoder();
  const reader = body.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      parser.feed(decoder.decode(value, { stream: true }));
      yield* parsed.splice(0);
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}
