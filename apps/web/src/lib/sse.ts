import { EventStreamHttpError, followEventStream, type ServerSentEvent } from "@overseer/event-stream";
import { getToken } from "./token-store.ts";

/**
 * Server-sent events over fetch (@overseer/event-stream, the parser the CLI and the tests use),
 * so the token travels as a bearer header (EventSource can only put it in the URL). Reconnects
 * after the gateway's `retry:` interval with Last-Event-ID, until closed, until an `end` event,
 * or until the gateway refuses the stream (401, 403, 404…: reconnecting would not change that).
 */
export type SseMessage = ServerSentEvent;

export interface SseOptions {
  onMessage(message: SseMessage): void;
  onState?(state: "open" | "retrying" | "closed", detail?: string): void;
  /** Resume after this id. */
  lastEventId?: string;
}

export function openSse(path: string, options: SseOptions): () => void {
  const controller = new AbortController();
  const follow = async (): Promise<void> => {
    try {
      for await (const message of followEventStream(path, {
        headers: () => ({ Authorization: `Bearer ${getToken()}` }),
        lastEventId: options.lastEventId,
        signal: controller.signal,
        onState: (state, detail) => options.onState?.(state === "open" ? "open" : "retrying", detail),
      })) {
        options.onMessage(message);
        if (message.event === "end") {
          options.onState?.("closed");
          return;
        }
      }
    } catch (error) {
      options.onState?.("closed", refusal(error));
    }
  };
  void follow();
  return () => controller.abort();
}

/** The gateway's own words for a refused stream (`error.message`), else the failure's. */
function refusal(error: unknown): string {
  if (error instanceof EventStreamHttpError) {
    const body = error.body as { error?: { message?: string } } | null;
    return body?.error?.message ?? `HTTP ${error.status}`;
  }
  return error instanceof Error ? error.message : String(error);
}
