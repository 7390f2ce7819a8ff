import { existsSync, readdirSync, readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { overseerAgentPath, readControlDir } from "../src/index.ts";
import { cleanupAll, isWellFormed, makeTempDir } from "./support/harness-fixtures.ts";

afterEach(cleanupAll);

// overseer-agent builds the JSON in the shell when nothing needs escaping (the fast path) and
// with awk otherwise; OVERSEER_AGENT_JSON=awk forces awk. These tests prove both give the same
// bytes, messages and exit codes, under dash and bash, gawk and mawk, in a UTF-8 locale too.

const AWKS = ["/usr/bin/gawk", "/usr/bin/mawk"].filter((path) => existsSync(path));
const SHELLS = [["/usr/bin/dash"], ["/usr/bin/bash", "--posix"]].filter(([sh]) => existsSync(sh as string));
const LOCALES = ["C.UTF-8", "C"];

/** A dir holding only the given tools: a PATH without awk proves the fast path was taken. */
function binWith(tools: Record<string, string>): string {
  const bin = makeTempDir("overseer-agent-bin-");
  for (const [name, target] of Object.entries(tools)) symlinkSync(target, join(bin, name));
  return bin;
}

interface Outcome {
  exitCode: number | undefined;
  stdout: string;
  stderr: string;
  files: string[];
  transition: Buffer | null;
}

async function run(shell: string[], args: string[], env: Record<string, string>): Promise<Outcome> {
  const control = makeTempDir("overseer-control-");
  const result = await execa(shell[0] as string, [...shell.slice(1), overseerAgentPath(), ...args], {
    env: { ...env, OVERSEER_CONTROL_DIR: control },
    extendEnv: false,
    reject: false,
    input: "",
    stripFinalNewline: false,
  });
  const path = join(control, "transition.json");
  return {
    exitCode: result.exitCode,
    stdout: String(result.stdout),
    stderr: String(result.stderr),
    files: readdirSync(control).sort(),
    transition: existsSync(path) ? readFileSync(path) : null,
  };
}

/** What the fast path refuses to handle: the awk program would escape these bytes. */
function needsEscaping(text: string): boolean {
  return [...text].some((c) => c === '"' || c === "\\" || c.charCodeAt(0) < 0x20 || c === "\x7f");
}

/** Text of up to a few dozen characters: ASCII, spaces, UTF-8 and now and then a byte to escape. */
const piece = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.constantFrom("a", "Z", "0", " ", "  ", "é", "日本", "🚀", "%s", "$HOME", "`id`", "&", "'"),
  },
  { weight: 1, arbitrary: fc.constantFrom('"', "\\", "\t", "\n", "\r", "\x01", "\x1f", "\x7f") },
  { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 4 }) },
);
const shortText = fc
  .array(piece, { maxLength: 12 })
  .map((parts) => parts.join("").replaceAll("\0", ""))
  .filter(isWellFormed);

/** Text around a byte limit, with 2-byte characters so bytes and characters differ. */
function nearLimit(limit: number): fc.Arbitrary<string> {
  return fc
    .tuple(fc.integer({ min: limit - 2, max: limit + 2 }), fc.integer({ min: 0, max: 40 }), fc.boolean())
    .map(([bytes, wide, spaces]) => "é".repeat(wide) + (spaces ? " " : "a").repeat(bytes - 2 * wide));
}
function text(limit: number): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 5, arbitrary: shortText },
    { weight: 1, arbitrary: fc.constantFrom("", " ", "   ") },
    { weight: 1, arbitrary: nearLimit(limit) },
  );
}
const flag = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });
const digits = fc.stringMatching(/^0{0,2}[0-9]{1,6}$/);
const usage = fc.record({
  in: flag(digits),
  out: flag(digits),
  cost: flag(fc.stringMatching(/^0{0,2}[0-9]{1,3}\.[0-9]{1,4}$/)),
});
const option = fc.record({
  id: shortText.map((s) => s.replaceAll(":", "")).filter((s) => s !== ""),
  label: fc.oneof(shortText, nearLimit(256)).map((s) => s.replaceAll(":", "")),
  desc: flag(fc.oneof(shortText, nearLimit(2048))),
});

const transition = fc.oneof(
  fc.record({ verb: fc.constant("submit"), message: flag(text(65536)), summary: flag(text(4096)), usage }),
  fc.record({ verb: fc.constantFrom("approve", "reject"), feedback: flag(text(65536)), usage }),
  fc.record({
    verb: fc.constant("escalate"),
    reason: flag(text(16384)),
    human: fc.option(
      fc.record({
        question: flag(text(4096)),
        category: flag(fc.constantFrom("credentials", "payment", "other")),
        options: fc.array(option, { maxLength: 9 }),
      }),
      { nil: undefined },
    ),
    replan: fc.boolean(),
    usage,
  }),
);
type Transition = typeof transition extends fc.Arbitrary<infer T> ? T : never;

function argv(t: Transition): string[] {
  const args: string[] = [t.verb];
  const add = (name: string, value: string | undefined) => {
    if (value !== undefined) args.push(`--${name}`, value);
  };
  if ("message" in t) add("message", t.message);
  if ("summary" in t) add("summary", t.summary);
  if ("feedback" in t) add("feedback", t.feedback);
  if ("reason" in t) {
    add("reason", t.reason);
    if (t.replan) args.push("--replan");
    if (t.human) {
      args.push("--needs-user");
      add("question", t.human.question);
      add("category", t.human.category);
      for (const o of t.human.options)
        add("option", `${o.id}:${o.label}${o.desc === undefined ? "" : `:${o.desc}`}`);
    }
  }
  add("tokens-in", t.usage.in);
  add("tokens-out", t.usage.out);
  add("cost-usd", t.usage.cost);
  return args;
}

describe.each(AWKS)("overseer-agent's shell-built JSON against awk's (%s)", (awk) => {
  it("writes the same bytes, messages and exit code for every generated call (property)", async () => {
    const awkBin = binWith({ awk, mv: "/usr/bin/mv", rm: "/usr/bin/rm" });
    const mvOnly = binWith({ mv: "/usr/bin/mv", rm: "/usr/bin/rm" });
    let fast = 0;
    await fc.assert(
      fc.asyncProperty(
        transition,
        fc.constantFrom(...SHELLS),
        fc.constantFrom(...LOCALES),
        async (t, shell, locale) => {
          const args = argv(t);
          const plain = !args.some(needsEscaping);
          if (plain) fast++;
          const env = { LC_ALL: locale, LANG: locale };
          const byShell = await run(shell, args, { ...env, PATH: plain ? mvOnly : awkBin });
          const byAwk = await run(shell, args, { ...env, PATH: awkBin, OVERSEER_AGENT_JSON: "awk" });
          expect(byShell).toEqual(byAwk);
          if (byShell.exitCode === 0) expect(JSON.parse(String(byShell.transition)).kind).toBe(t.verb);
        },
      ),
      { numRuns: 120 },
    );
    expect(fast).toBeGreaterThan(30);
  });

  it("hands every byte that needs escaping to awk", async () => {
    const awkBin = binWith({ awk, mv: "/usr/bin/mv", rm: "/usr/bin/rm" });
    const bytes = ['"', "\\", "\x7f", ...Array.from({ length: 31 }, (_, i) => String.fromCharCode(i + 1))];
    for (const shell of SHELLS) {
      for (const byte of bytes) {
        const args = [
          "escalate",
          "--reason",
          `r${byte}`,
          "--needs-user",
          "--question",
          "q",
          "--option",
          `a:b:c${byte}`,
        ];
        const byDefault = await run(shell, args, { PATH: awkBin });
        expect(byDefault).toEqual(await run(shell, args, { PATH: awkBin, OVERSEER_AGENT_JSON: "awk" }));
        expect(byDefault.exitCode).toBe(0);
        const noAwk = await run(shell, args, { PATH: binWith({ mv: "/usr/bin/mv" }) });
        expect(noAwk.exitCode, `${JSON.stringify(byte)} took the fast path`).not.toBe(0);
      }
    }
  });
});

describe("overseer-agent's lock", () => {
  it.each(SHELLS)(
    "lets exactly one of many concurrent calls win under %s, by either path",
    async (...shell) => {
      for (let round = 0; round < 4; round++) {
        const control = makeTempDir("overseer-control-");
        const racers = Array.from({ length: 10 }, (_, i) => (i % 2 ? `racer ${i}` : `racer "${i}"`));
        const runs = await Promise.all(
          racers.map((feedback) =>
            execa(
              shell[0] as string,
              [...shell.slice(1), overseerAgentPath(), "reject", "--feedback", feedback],
              {
                env: { PATH: "/usr/bin:/bin", OVERSEER_CONTROL_DIR: control },
                extendEnv: false,
                reject: false,
              },
            ),
          ),
        );
        const winners = runs.flatMap((r, i) => (r.exitCode === 0 ? [racers[i]] : []));
        expect(winners).toHaveLength(1);
        for (const r of runs.filter((r) => r.exitCode !== 0)) {
          expect(r.exitCode).toBe(2);
          expect(String(r.stderr)).toMatch(/a transition was already recorded/);
        }
        const read = await readControlDir(control);
        expect(read.ok && read.transition).toEqual({ version: 1, kind: "reject", feedback: winners[0] });
        expect(readdirSync(control).filter((name) => !name.startsWith("."))).toEqual(["transition.json"]);
      }
    },
  );
});
