import { execFileSync } from "node:child_process";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  CONTROL_LIMITS,
  DEFAULT_CONTROL_MAX_BYTES,
  parseControlTransition,
  readControlDir,
} from "../src/index.ts";
import { cleanupAll, makeTempDir } from "./support/harness-fixtures.ts";

afterEach(cleanupAll);

function controlDirWith(files: Record<string, string>): string {
  const dir = makeTempDir("overseer-control-");
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
  return dir;
}

describe("parseControlTransition", () => {
  it("accepts each kind and fills defaults", () => {
    expect(parseControlTransition({ version: 1, kind: "submit", message: "Add x", summary: "s" })).toEqual({
      ok: true,
      transition: { version: 1, kind: "submit", message: "Add x", summary: "s" },
    });
    expect(parseControlTransition({ version: 1, kind: "approve" })).toEqual({
      ok: true,
      transition: { version: 1, kind: "approve" },
    });
    expect(
      parseControlTransition({
        version: 1,
        kind: "reject",
        feedback: "no tests",
        usage: { tokens_in: 5, cost_usd: 0.1 },
      }),
    ).toEqual({
      ok: true,
      transition: {
        version: 1,
        kind: "reject",
        feedback: "no tests",
        usage: { tokens_in: 5, cost_usd: 0.1 },
      },
    });
    expect(parseControlTransition({ version: 1, kind: "escalate", reason: "flaky CI" })).toEqual({
      ok: true,
      transition: {
        version: 1,
        kind: "escalate",
        reason: "flaky CI",
        needs_user: false,
        options: [],
      },
    });
  });

  it("normalises option ids, keeps the first of colliding ids and requires a note for custom", () => {
    const result = parseControlTransition({
      version: 1,
      kind: "escalate",
      reason: "which provider?",
      needs_user: true,
      category: "payment",
      question: "Which payment provider?",
      options: [
        { id: "Use Stripe!", label: "Stripe" },
        { id: "use_stripe", label: "Duplicate" },
        { id: "CUSTOM", label: "Something else" },
        { id: "!!!", label: "Odd", description: "d" },
      ],
    });
    expect(result).toEqual({
      ok: true,
      transition: expect.objectContaining({
        needs_user: true,
        options: [
          { id: "use_stripe", label: "Stripe", requires_note: false },
          { id: "custom", label: "Something else", requires_note: true },
          { id: "option", label: "Odd", description: "d", requires_note: false },
        ],
      }),
    });
  });

  it("gives output that is itself a valid control file: the run result carries it with the same schema", () => {
    const inputs: unknown[] = [
      { version: 1, kind: "submit", message: "Add x", summary: "s", usage: { tokens_in: 3, cost_usd: 0.5 } },
      { version: 1, kind: "approve" },
      { version: 1, kind: "reject", feedback: "redo" },
      { version: 1, kind: "escalate", reason: "flaky CI" },
      {
        version: 1,
        kind: "escalate",
        reason: "which?",
        needs_user: true,
        category: "payment",
        question: "Which provider?",
        options: [
          { id: "Use Stripe!", label: "Stripe" },
          { id: "custom", label: "Other" },
        ],
      },
    ];
    for (const input of inputs) {
      const once = parseControlTransition(input);
      if (!once.ok) throw new Error(once.error);
      expect(parseControlTransition(once.transition)).toEqual(once);
    }
  });

  it("names the field, the expectation and what was received", () => {
    const cases: [unknown, RegExp][] = [
      [[], /expected a JSON object, received \[\]/],
      [{ version: 2, kind: "submit" }, /version: expected 1, received 2 /],
      [
        { version: 1, kind: "merge" },
        /kind: expected one of submit\|approve\|reject\|escalate\|plan\|complete, received "merge"/,
      ],
      [{ version: 1, kind: "submit" }, /message: expected a string, received nothing \(missing\)/],
      [{ version: 1, kind: "submit", message: "  \n" }, /message: expected non-empty text/],
      [{ version: 1, kind: "submit", message: 42 }, /message: expected a string, received 42/],
      [{ version: 1, kind: "reject" }, /feedback: expected a string/],
      [
        { version: 1, kind: "approve", feedbak: "x" },
        /feedbak: expected no such field .*\(remove it or fix its spelling\)/,
      ],
      [{ version: 1, kind: "escalate", reason: "r", needs_user: true }, /question: expected a question/],
      [
        { version: 1, kind: "escalate", reason: "r", question: "q?" },
        /needs_user: expected needs_user: true/,
      ],
      [
        { version: 1, kind: "escalate", reason: "r", needs_user: true, question: "q", category: "money" },
        /category: expected one of .*received "money"/,
      ],
      [
        { version: 1, kind: "approve", usage: { tokens_in: -1 } },
        /usage.tokens_in: expected a number >= 0, received -1/,
      ],
      [
        { version: 1, kind: "submit", message: "x".repeat(CONTROL_LIMITS.messageBytes + 1) },
        /message: expected at most 65536 bytes \(UTF-8\), received 65537 bytes/,
      ],
    ];
    for (const [input, pattern] of cases) {
      const result = parseControlTransition(input);
      expect(result.ok, JSON.stringify(input).slice(0, 80)).toBe(false);
      if (!result.ok) expect(result.error).toMatch(pattern);
    }
  });

  it("refuses more than 8 options", () => {
    const options = Array.from({ length: 9 }, (_, i) => ({ id: `o${i}`, label: `O${i}` }));
    const result = parseControlTransition({
      version: 1,
      kind: "escalate",
      reason: "r",
      needs_user: true,
      question: "q",
      options,
    });
    expect(result.ok).toBe(false);
  });
});

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
