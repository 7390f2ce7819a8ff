import { once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import {
  EventStreamHttpError,
  EventStreamLostError,
  followEventStream,
  type ServerSentEvent,
} from "../src/index.ts";

/** A real HTTP server whose n-th connection (from 0) is answered by `answers[n]` (the last one repeats). */
async function serve(
  ...answers: ((req: IncomingMessage, res: ServerResponse) => void)[]
): Promise<{ url: string; requests: IncomingMessage[] }> {
  const requests: IncomingMessage[] = [];
  server = createServer((req, res) => {
    requests.push(req);
    const answer = answers[Math.min(requests.length - 1, answers.length - 1)];
    answer?.(req, res);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/stream`, requests };
}

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  if (server) await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

const sse = (res: ServerResponse, text: string, end = true) => {
  res.writeHead(200, { "Content-Type": "text/event-stream" });
  if (end) res.end(text);
  else res.write(text);
};

async function take(stream: AsyncGenerator<ServerSentEvent>, count: number): Promise<ServerSentEvent[]> {
  const events: ServerSentEvent[] = [];
  for await (const e of stream) {
    events.push(e);
    if (events.length === count) break;
  }
  return events;
}

describe("followEventStream", () => {
  it("reconnects after the server's retry: interval with Last-Event-ID of the last id received", async () => {
    const { url, requests } = await serve(
      (_req, res) => sse(res, "retry: 50\n\nid: 1-0\nevent: log\ndata: a\n\nevent: usage\ndata: u\n\n"),
      (_req, res) => sse(res, "id: 2-0\nevent: log\ndata: b\n\n", false),
    );
    const states: string[] = [];
    const events = await take(
      followEventStream(url, {
        headers: () => ({ Authorization: "Bearer t" }),
        retryMs: 60_000,
        onState: (s) => states.push(s),
      }),
      3,
    );
    expect(events.map((e) => [e.event, e.id, e.data])).toEqual([
      ["log", "1-0", "a"],
      ["usage", undefined, "u"],
      ["log", "2-0", "b"],
    ]);
    expect(requests.map((r) => r.headers["last-event-id"])).toEqual([undefined, "1-0"]);
    expect(
      requests.every(
        (r) => r.headers.authorization === "Bearer t" && r.headers.accept === "text/event-stream",
      ),
    ).toBe(true);
    expect(states).toEqual(["open", "reconnecting", "open"]);
  });

  it("resumes after the caller's Last-Event-ID from the first connection", async () => {
    const { url, requests } = await serve((_req, res) => sse(res, "id: 8\ndata: next\n\n", false));
    expect(await take(followEventStream(url, { lastEventId: "7" }), 1)).toEqual([
      { event: "message", id: "8", data: "next" },
    ]);
    expect(requests[0]?.headers["last-event-id"]).toBe("7");
  });

  it("waits out a 503 and reconnects; any other refusal throws with the server's body", async () => {
    const { url, requests } = await serve(
      (_req, res) => res.writeHead(503, { "Retry-After": "0" }).end('{"error":{"message":"shutting down"}}'),
      (_req, res) =>
        res.writeHead(401, { "Content-Type": "application/json" }).end('{"error":{"message":"bad token"}}'),
    );
    const states: [string, string][] = [];
    const following = take(
      followEventStream(url, { retryMs: 10, onState: (s, d) => states.push([s, d]) }),
      1,
    );
    const error = await following.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EventStreamHttpError);
    expect(error).toMatchObject({ status: 401, body: { error: { message: "bad token" } } });
    expect(requests).toHaveLength(2);
    expect(states).toEqual([["reconnecting", expect.stringContaining("HTTP 503")]]);
  });

  it("gives up after maxReconnects failures in a row, naming the last one", async () => {
    const { url, requests } = await serve((_req, res) => sse(res, ": connected\n\n"));
    const error = await take(followEventStream(url, { retryMs: 5, maxReconnects: 2 }), 1).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(EventStreamLostError);
    expect((error as Error).message).toBe(
      "lost the event stream 3 times in a row (the server ended the stream)",
    );
    expect(requests).toHaveLength(3);
  });

  it("counts an unreachable server as a failed connection", async () => {
    const { url } = await serve(() => undefined);
    await new Promise((resolve) => server?.close(resolve));
    const error = await take(followEventStream(url, { retryMs: 5, maxReconnects: 0 }), 1).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(EventStreamLostError);
    expect((error as Error).message).toMatch(/ECONNREFUSED/);
  });

  it("returns when the signal aborts, during a connection and during the wait to reconnect", async () => {
    const { url } = await serve((_req, res) => sse(res, "data: one\n\n", false));
    const streaming = new AbortController();
    const seen: string[] = [];
    for await (const e of followEventStream(url, { signal: streaming.signal })) {
      seen.push(e.data);
      streaming.abort();
    }
    expect(seen).toEqual(["one"]);

    const waiting = new AbortController();
    const following = followEventStream(url.replace("/stream", "/gone"), {
      retryMs: 60_000,
      signal: waiting.signal,
      onState: (state) => state === "reconnecting" && waiting.abort(),
    });
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    expect(await following.next()).toEqual({ done: true, value: undefined });
  });
});
