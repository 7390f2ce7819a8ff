import { describe, expect, it } from "vitest";
import { type EventStreamPart, readEventStream } from "../src/index.ts";

/** A response body that delivers `chunks` as separate reads (strings are UTF-8 encoded). */
function bodyOf(...chunks: (string | Uint8Array)[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks)
        controller.enqueue(typeof chunk === "string" ? encoder.encode(chunk) : chunk);
      controller.close();
    },
  });
}

async function partsOf(body: ReadableStream<Uint8Array>): Promise<EventStreamPart[]> {
  const parts: EventStreamPart[] = [];
  for await (const part of readEventStream(body)) parts.push(part);
  return parts;
}

const event = (name: string, data: string, id?: string): EventStreamPart => ({
  kind: "event",
  event: { event: name, id, data },
});

describe("readEventStream", () => {
  it.each([
    ["LF", "\n"],
    ["CRLF", "\r\n"],
    ["CR", "\r"],
  ])("frames events whose lines end in %s", async (_name, eol) => {
    // A comment last: a CR the body ends on may yet be followed by LF, so its line stays open.
    const lines = [
      "event: log",
      "id: 1-0",
      "data: first",
      "data: second",
      "",
      "data: plain",
      "",
      ": bye",
      "",
    ];
    const parts = await partsOf(bodyOf(lines.join(eol)));
    expect(parts.filter((part) => part.kind === "event")).toEqual([
      event("log", "first\nsecond", "1-0"),
      event("message", "plain"),
    ]);
  });

  it("reassembles lines split anywhere across chunks, a CRLF and a UTF-8 character included", async () => {
    const bytes = new TextEncoder().encode('id: 7\r\nevent: log\r\ndata: {"text":"héllo ✓"}\r\n\r\n');
    // One read per byte: every line, the CR/LF pair and the multi-byte characters are split.
    const chunks = [...bytes].map((byte) => Uint8Array.of(byte));
    expect(await partsOf(bodyOf(...chunks))).toEqual([event("log", '{"text":"héllo ✓"}', "7")]);
  });

  it("reports comments and retry intervals in order with the events", async () => {
    const text = "retry: 1500\n: connected\n\ndata: a\n\n: keep-alive\n\nretry: soon\ndata: b\n\n";
    expect(await partsOf(bodyOf(text))).toEqual([
      { kind: "retry", ms: 1500 },
      { kind: "comment", text: "connected" },
      event("message", "a"),
      { kind: "comment", text: "keep-alive" },
      // A retry that is not a number of milliseconds is ignored, as EventSource does.
      event("message", "b"),
    ]);
  });

  it("keeps one leading space of a value, ignores unknown fields and events without data", async () => {
    const text = "data:  two spaces\nfoo: bar\n\nevent: ping\nid: 3\n\ndata\n\n";
    expect(await partsOf(bodyOf(text))).toEqual([event("message", " two spaces"), event("message", "")]);
  });

  it("drops an event the body ended in the middle of", async () => {
    expect(await partsOf(bodyOf("data: whole\n\ndata: cut off\n"))).toEqual([event("message", "whole")]);
  });

  it("cancels the body when the reader leaves early", async () => {
    let cancelled = false;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode("data: one\n\ndata: two\n\n"));
      },
      cancel() {
        cancelled = true;
      },
    });
    for await (const part of readEventStream(body)) {
      expect(part).toEqual(event("message", "one"));
      break;
    }
    expect(cancelled).toBe(true);
  });
});
