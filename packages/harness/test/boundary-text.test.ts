import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { readControlDir } from "../src/control-dir-reader.ts";
import { OutputCollector } from "../src/output-collector.ts";

/** Issue 9, breach 2: text from the agent never carries NUL or lone surrogates past the worker. */
const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

describe("boundary text normalisation in the harness", () => {
  it("a control file with NUL, lone surrogates and invalid UTF-8 is read with U+FFFD in their place", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "control-"));
    dirs.push(dir);
    const json = Buffer.concat([
      Buffer.from('{"version":1,"kind":"submit","message":"m\\u0000x \\udc00 '),
      Buffer.from([0xc3, 0x28]),
      Buffer.from('","summary":"a\\u0000b\\ud800c"}'),
    ]);
    await writeFile(path.join(dir, "transition.json"), json);
    const read = await readControlDir(dir);
    expect(read.ok).toBe(true);
    if (!read.ok || read.transition.kind !== "submit") throw new Error("expected a submit");
    expect(read.transition.summary).toBe("a\uFFFDb\uFFFDc");
    expect(read.transition.message).toBe("m\uFFFDx \uFFFD \uFFFD(");
  });

  it("run output with NUL bytes is stored and streamed with U+FFFD in their place", () => {
    const live: string[] = [];
    const collector = new OutputCollector({
      maxBytes: 1024,
      redact: (t) => t,
      onOutput: (chunk) => live.push(chunk),
      flushMs: 10,
    });
    const sink = collector.sink();
    sink(Buffer.from([0x61, 0x00, 0x62, 0x0a]));
    collector.flush();
    expect(collector.text()).toBe("a\uFFFDb\n");
    expect(live.join("")).toBe("a\uFFFDb\n");
  });
});
