import { execFileSync } from "node:child_process";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_CONTROL_MAX_BYTES, readControlDir } from "../src/index.ts";
import { cleanupAll, makeTempDir } from "./support/harness-fixtures.ts";

afterEach(cleanupAll);

function controlDirWith(files: Record<string, string>): string {
  const dir = makeTempDir("overseer-control-");
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
  return dir;
}

describe("readControlDir", () => {
  it("reads a valid transition.json and ignores dotfiles (in-progress writes, the lock)", async () => {
    const dir = controlDirWith({
      "transition.json": JSON.stringify({ version: 1, kind: "approve", feedback: "ok" }),
      ".transition.abc123": "{partial",
      ".transition.lock": "",
    });
    expect(await readControlDir(dir)).toEqual({
      ok: true,
      transition: { version: 1, kind: "approve", feedback: "ok" },
    });
  });

  it("reports a missing file as no_file", async () => {
    const result = await readControlDir(controlDirWith({}));
    expect(result).toMatchObject({ ok: false, code: "no_file" });
    if (!result.ok) expect(result.error).toMatch(/overseer-agent submit\|approve\|reject\|escalate/);
  });

  it("reports a missing dir as unreadable", async () => {
    const result = await readControlDir(join(makeTempDir(), "nope"));
    expect(result).toMatchObject({ ok: false, code: "unreadable" });
  });

  it("refuses malformed JSON with the parser's reason", async () => {
    const result = await readControlDir(
      controlDirWith({ "transition.json": '{"version": 1, "kind": "approve"' }),
    );
    expect(result).toMatchObject({ ok: false, code: "malformed" });
    if (!result.ok) expect(result.error).toMatch(/is not valid JSON/);
  });

  it("refuses a schema error naming the field", async () => {
    const result = await readControlDir(
      controlDirWith({ "transition.json": '{"version":1,"kind":"reject","feedback":""}' }),
    );
    expect(result).toMatchObject({ ok: false, code: "invalid" });
    if (!result.ok) expect(result.error).toMatch(/transition\.json: feedback: expected non-empty text/);
  });

  it("refuses an oversized file before reading it, with both sizes; the cap is configurable", async () => {
    const big = JSON.stringify({
      version: 1,
      kind: "approve",
      feedback: "x".repeat(DEFAULT_CONTROL_MAX_BYTES),
    });
    const result = await readControlDir(controlDirWith({ "transition.json": big }));
    expect(result).toMatchObject({ ok: false, code: "oversized" });
    if (!result.ok)
      expect(result.error).toContain(
        `${Buffer.byteLength(big)} bytes; the limit is ${DEFAULT_CONTROL_MAX_BYTES} bytes`,
      );

    const small = controlDirWith({ "transition.json": JSON.stringify({ version: 1, kind: "approve" }) });
    expect(await readControlDir(small, { maxBytes: 10 })).toMatchObject({ ok: false, code: "oversized" });
    expect(await readControlDir(small, { maxBytes: 1000 })).toMatchObject({ ok: true });
  });

  it("refuses two transition files: never two transitions", async () => {
    const approve = JSON.stringify({ version: 1, kind: "approve" });
    const reject = JSON.stringify({ version: 1, kind: "reject", feedback: "no" });
    const result = await readControlDir(
      controlDirWith({ "transition.json": approve, "transition-2.json": reject }),
    );
    expect(result).toMatchObject({ ok: false, code: "duplicate" });
    if (!result.ok)
      expect(result.error).toMatch(/found 2 transition files \(transition-2\.json, transition\.json\)/);
  });

  it("refuses a single file with another name", async () => {
    const result = await readControlDir(
      controlDirWith({ "result.json": JSON.stringify({ version: 1, kind: "approve" }) }),
    );
    expect(result).toMatchObject({ ok: false, code: "unexpected_name" });
  });

  it("refuses a symlink, even to a valid transition (O_NOFOLLOW)", async () => {
    const elsewhere = controlDirWith({ "real.json": JSON.stringify({ version: 1, kind: "approve" }) });
    const dir = makeTempDir("overseer-control-");
    symlinkSync(join(elsewhere, "real.json"), join(dir, "transition.json"));
    const result = await readControlDir(dir);
    expect(result).toMatchObject({ ok: false, code: "not_regular" });
    if (!result.ok) expect(result.error).toMatch(/symbolic link; refusing to follow it/);
  });

  it("refuses a FIFO or a directory without blocking", async () => {
    const fifoDir = makeTempDir("overseer-control-");
    execFileSync("mkfifo", [join(fifoDir, "transition.json")]);
    expect(await readControlDir(fifoDir)).toMatchObject({ ok: false, code: "not_regular" });

    const dirDir = makeTempDir("overseer-control-");
    mkdirSync(join(dirDir, "transition.json"));
    expect(await readControlDir(dirDir)).toMatchObject({ ok: false, code: "not_regular" });
  });

  it("decodes invalid UTF-8 as U+FFFD instead of losing the transition", async () => {
    const dir = makeTempDir("overseer-control-");
    writeFileSync(
      join(dir, "transition.json"),
      Buffer.concat([
        Buffer.from('{"version":1,"kind":"submit","message":"caf'),
        Buffer.from([0xe9]),
        Buffer.from('"}'),
      ]),
    );
    expect(await readControlDir(dir)).toEqual({
      ok: true,
      transition: { version: 1, kind: "submit", message: "caf\uFFFD" },
    });
  });
});
