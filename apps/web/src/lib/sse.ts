import { getToken } from "./token-store.ts";

/**
 * Server-sent events over fetch, so the token travels as a bearer header (EventSource can
 * only put it in the URL). Reconnects after `retryMs` with Last-Event-ID, until closed.
 */
export interface SseMessage {
  event: string;
  id: string | null;
  data: string;
}

export interface SseOptions {
  onMessage(message: SseMessage): void;
  onState?(state: "open" | "retrying" | "closed", detail?: string): void;
  /** Resume after this id. */
  lastEventId?: string | null;
  retryMs?: number;
}

export function openSse(path: string, options: SseOptions): () => void {
  const controller = new AbortController();
  let lastId = options.lastEventId ?? null;
  let closed = false;
  const retryMs = options.retryMs ?? 2000;

  const connect = async (): Promise<void> => {
    while (!closed) {
      try {
        const headers: Record<string, string> = {
          Accept: "text/event-stream",
          Authorization: `Bearer ${getToken()}`,
        };
        if (lastId) headers["Last-Event-ID"] = lastId;
        const res = await fetch(path, { headers, signal: controller.signal });
        if (!res.ok || !res.body) {
          const body = (await res.json().catch(() => null)) as { error?: { message?: string } } | null;
          options.onState?.("retrying", body?.error?.message ?? `HTTP ${res.status}`);
          if (res.status === 401 || res.status === 403 || res.status === 404) {
            options.onState?.("closed", body?.error?.message ?? `HTTP ${res.status}`);
            return;
          }
        } else {
          options.onState?.("open");
          const ended = await readStream(res.body, (m) => {
            if (m.id) lastId = m.id;
            options.onMessage(m);
          });
          if (ended === "end") {
            options.onState?.("closed");
            return;
          }
        }
      } catch (error) {
        if (closed) return;
        options.onState?.("retrying", (error as Error).message);
      }
      await new Promise((r) => setTimeout(r, retryMs));
    }
  };
  void connect();
  return () => {
    closed = true;
    controller.abort();
  };
}

/** Parses the text/event-stream framing; returns "end" after an `end` event. */
async function readStream(
  body: ReadableStream<Uint8Array>,
  onMessage: (m: SseMessage) => void,
): Promise<"end" | "eof"> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let event = "message";
  let id: string | null = null;
  let data: string[] = [];
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return "eof";
    buffer += decoder.decode(value, { stream: true });
    let newline = buffer.indexOf("\n");
    while (newline >= 0) {
      const line = buffer.slice(0, newline).replace(/\r$/, "");
      buffer = buffer.slice(newline + 1);
      newline = buffer.indexOf("\n");
      if (line === "") {
        if (data.length > 0) {
          const message = { event, id, data: data.join("\n") };
          onMessage(message);
          if (event === "end") {
            await reader.cancel().catch(() => undefined);
            return "end";
          }
        }
        event = "message";
        id = null;
        data = [];
        continue;
      }
      if (line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      const text = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
      if (field === "data") data.push(text);
      else if (field === "event") event = text;
      else if (field === "id") id = text;
    }
  }
}
