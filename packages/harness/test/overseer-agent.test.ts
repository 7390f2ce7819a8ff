import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CONTROL_LIMITS, type ControlTransition, parseControlTransition } from "@overseer/run-contract";
import { execa } from "execa";
import fc from "fast-check";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { overseerAgentPath, readControlDir } from "../src/index.ts";
import { cleanupAll, isWellFormed, makeTempDir } from "./support/harness-fixtures.ts";

afterEach(cleanupAll);

/** Debian base images ship mawk, this machine's default awk is gawk: test the script with both. */
const AWKS = ["/usr/bin/gawk", "/usr/bin/mawk"].filter((path) => existsSync(path));

/** A dir whose `awk` is the given implementation; lives for a whole describe block. */
function useAwk(awk: string): { path: string } {
  const state = { path: "", dir: "" };
  beforeAll(() => {
    state.dir = mkdtempSync(join(tmpdir(), "overseer-awk-"));
    symlinkSync(awk, join(state.dir, "awk"));
    state.path = `${state.dir}:/usr/bin:/bin`;
  });
  afterAll(() => rmSync(state.dir, { recursive: true, force: true }));
  return {
    get path() {
      return state.path;
    },
  };
}

interface AgentRun {
  exitCode: number | undefined;
  stdout: string;
  stderr: string;
  control: string;
}

async function agent(
  args: string[],
  options: { path?: string; input?: string | Buffer; control?: string; env?: Record<string, string> } = {},
): Promise<AgentRun> {
  const control = options.control ?? makeTempDir("overseer-control-");
  const result = await execa(overseerAgentPath(), args, {
    env: { PATH: options.path ?? "/usr/bin:/bin", OVERSEER_CONTROL_DIR: control, ...options.env },
    extendEnv: false,
    reject: false,
    input: options.input ?? "",
    stripFinalNewline: false,
  });
  return { exitCode: result.exitCode, stdout: String(result.stdout), stderr: String(result.stderr), control };
}

/** Reads the control file both ways: plain JSON.parse and the worker's reader (zod). */
async function recorded(
  control: string,
): Promise<{ raw: Record<string, unknown>; transition: ControlTransition }> {
  const raw = JSON.parse(readFileSync(join(control, "transition.json"), "utf8")) as Record<string, unknown>;
  const read = await readControlDir(control);
  if (!read.ok) throw new Error(read.error);
  return { raw, transition: read.transition };
}

const CONTROL_CHARS = Array.from({ length: 31 }, (_, i) => String.fromCharCode(i + 1)).join("");
const NASTY = [
  'quotes " and \\" and \\\\ backslashes \\',
  "line one\nline two\n\nline four\n",
  "\n\nleading and trailing newlines\n\n",
  "tabs\tand\r\ncrlf and \x7f del",
  `every control char: ${CONTROL_CHARS} end`,
  "UTF-8: é ß 日本語 🚀👩‍👩‍👧 ‮rtl‬ combining é",
  // biome-ignore lint/suspicious/noTemplateCurlyInString: literal shell syntax is the point
  "shell-ish: $(rm -rf /) `id` $HOME ${PATH} ; | & > < * ?",
  "printf-ish: %s %d %% %n \\n \\t \\u0000 \\x41",
  "awk-ish: & \\& \\\\& -v x=1 ENVIRON",
  "--feedback --looks-like-a-flag",
  "x=y",
];

describe.each(AWKS)("overseer-agent with %s", (awk) => {
  const awkEnv = useAwk(awk);
  let path = "";
  beforeEach(() => {
    path = awkEnv.path;
  });

  it("really runs this awk", async () => {
    const version = await execa("sh", ["-c", "awk -W version 2>&1 | head -1"], {
      env: { PATH: path },
      extendEnv: false,
    });
    expect(String(version.stdout).toLowerCase()).toContain(awk.endsWith("mawk") ? "mawk" : "gnu awk");
  });

  it.each(NASTY)("round-trips %j through every text flag", async (text) => {
    const submit = await agent(["submit", "--message", `subject ${text}`, "--summary", text], { path });
    expect(submit.stderr).toBe("");
    expect(submit.exitCode).toBe(0);
    const { raw, transition } = await recorded(submit.control);
    expect(raw).toEqual({ version: 1, kind: "submit", message: `subject ${text}`, summary: text });
    expect(transition).toEqual(raw);

    const approve = await agent(["approve", `--feedback=${text}`], { path });
    expect(approve.exitCode).toBe(0);
    expect((await recorded(approve.control)).raw).toEqual({ version: 1, kind: "approve", feedback: text });

    const escalate = await agent(
      [
        "escalate",
        "--reason",
        `r ${text}`,
        "--needs-user",
        "--question",
        `q ${text}`,
        "--option",
        `a:label ${text.replaceAll(":", ";")}:desc: ${text}`,
      ],
      { path },
    );
    expect(escalate.stderr).toBe("");
    const esc = await recorded(escalate.control);
    expect(esc.raw).toMatchObject({
      reason: `r ${text}`,
      question: `q ${text}`,
      options: [{ id: "a", label: `label ${text.replaceAll(":", ";")}`, description: `desc: ${text}` }],
    });
    expect(esc.transition).toMatchObject({ kind: "escalate", needs_user: true });
  });

  it("round-trips arbitrary Unicode text (property)", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ unit: "binary", maxLength: 200 }).filter((s) => !s.includes("\0") && isWellFormed(s)),
        async (text) => {
          const run = await agent(["approve", "--feedback", text], { path });
          expect(run.exitCode).toBe(0);
          const { raw, transition } = await recorded(run.control);
          expect(raw.feedback).toBe(text);
          expect(transition).toEqual({ version: 1, kind: "approve", feedback: text });
        },
      ),
      { numRuns: 40 },
    );
  });

  it("round-trips message files byte for byte, including the final newlines", async () => {
    const dir = makeTempDir();
    for (const content of [...NASTY, "no final newline", "one\n", "crlf\r\n\r\n", `"${"\\".repeat(1000)}"`]) {
      const file = join(dir, "msg.txt");
      writeFileSync(file, `Subject\n${content}`);
      const run = await agent(["submit", "--message-file", file], { path });
      expect(run.exitCode, run.stderr).toBe(0);
      expect((await recorded(run.control)).transition).toEqual({
        version: 1,
        kind: "submit",
        message: `Subject\n${content}`,
      });
    }
  });

  it("reads a file from stdin with -", async () => {
    const run = await agent(["reject", "--feedback-file", "-"], {
      path,
      input: 'missing "tests"\n\tand docs\n',
    });
    expect(run.exitCode).toBe(0);
    expect((await recorded(run.control)).transition).toEqual({
      version: 1,
      kind: "reject",
      feedback: 'missing "tests"\n\tand docs\n',
    });
  });

  it("accepts a 64 KiB line of quotes (escaping is linear) and refuses one byte more", async () => {
    const dir = makeTempDir();
    const file = join(dir, "msg.txt");
    writeFileSync(file, '"'.repeat(CONTROL_LIMITS.messageBytes));
    const ok = await agent(["submit", "--message-file", file], { path });
    expect(ok.exitCode, ok.stderr).toBe(0);
    expect((await recorded(ok.control)).transition).toMatchObject({
      message: '"'.repeat(CONTROL_LIMITS.messageBytes),
    });

    writeFileSync(file, "x".repeat(CONTROL_LIMITS.messageBytes + 1));
    const tooBig = await agent(["submit", "--message-file", file], { path });
    expect(tooBig.exitCode).toBe(2);
    expect(tooBig.stderr).toMatch(/message file is 65537 bytes; the limit is 65536 bytes/);
    expect(readdirSync(tooBig.control)).toEqual([]);
  });

  it("writes usage numbers as JSON numbers", async () => {
    const run = await agent(["approve", "--tokens-in", "0012", "--tokens-out", "0", "--cost-usd", "00.250"], {
      path,
    });
    expect(run.exitCode).toBe(0);
    expect((await recorded(run.control)).transition).toEqual({
      version: 1,
      kind: "approve",
      usage: { tokens_in: 12, tokens_out: 0, cost_usd: 0.25 },
    });
  });
});

describe("overseer-agent publication", () => {
  it("prints one line, exits 0 and leaves only transition.json and its lock", async () => {
    const run = await agent(["approve"]);
    expect(run.exitCode).toBe(0);
    expect(run.stdout.trim().split("\n")).toHaveLength(1);
    expect(run.stdout).toMatch(/recorded approve/);
    expect(readdirSync(run.control).sort()).toEqual([".transition.lock", "transition.json"]);
  });

  it("starts no process but mv, and awk only to escape (no mktemp): each costs a fork and exec on every run", async () => {
    const bin = makeTempDir("overseer-agent-bin-");
    symlinkSync("/usr/bin/mv", join(bin, "mv"));
    const plain = await agent(["submit", "--message", "only mv", "--tokens-in", "07"], { path: bin });
    expect(plain.stderr).toBe("");
    expect(plain.exitCode).toBe(0);
    expect((await recorded(plain.control)).transition).toMatchObject({
      message: "only mv",
      usage: { tokens_in: 7 },
    });
    expect(readdirSync(plain.control).sort()).toEqual([".transition.lock", "transition.json"]);

    symlinkSync("/usr/bin/awk", join(bin, "awk"));
    const escaped = await agent(["submit", "--message", 'awk and "mv"'], { path: bin });
    expect(escaped.stderr).toBe("");
    expect(escaped.exitCode).toBe(0);
    expect((await recorded(escaped.control)).transition).toMatchObject({ message: 'awk and "mv"' });
  });

  it("refuses a second transition", async () => {
    const first = await agent(["submit", "--message", "one"]);
    const second = await agent(["approve"], { control: first.control });
    expect(second.exitCode).toBe(2);
    expect(second.stderr).toMatch(/a transition was already recorded/);
    expect(second.stderr).toMatch(/Stop working now/);
    expect((await recorded(first.control)).transition).toMatchObject({ kind: "submit", message: "one" });
  });

  it("lets exactly one of several concurrent calls win", async () => {
    const control = makeTempDir("overseer-control-");
    const runs = await Promise.all(
      Array.from({ length: 6 }, (_, i) => agent(["reject", "--feedback", `racer ${i}`], { control })),
    );
    expect(runs.filter((r) => r.exitCode === 0)).toHaveLength(1);
    expect(runs.filter((r) => r.exitCode === 2)).toHaveLength(5);
    const read = await readControlDir(control);
    expect(read.ok).toBe(true);
    expect(readdirSync(control).filter((name) => !name.startsWith("."))).toEqual(["transition.json"]);
  });

  it.each([
    [[], /Usage:/],
    [["merge"], /unknown verb 'merge'/],
    [["approve", "--bogus"], /unknown flag '--bogus' for 'approve'/],
    [["approve", "--feedback"], /--feedback needs a value/],
    [["approve", "--feedback", "a", "--feedback", "b"], /--feedback given twice/],
    [["approve", "stray"], /unexpected argument 'stray'/],
    [["submit"], /submit needs --message-file FILE/],
    [["submit", "--message-file", "/nonexistent/msg"], /no such file/],
    [["submit", "--message", "   "], /message is empty/],
    [["reject"], /reject needs --feedback TEXT or --feedback-file FILE/],
    [["escalate"], /escalate needs --reason TEXT/],
    [["escalate", "--reason", "r", "--needs-user"], /--needs-user needs --question TEXT/],
    [["escalate", "--reason", "r", "--question", "q"], /Add --needs-user/],
    [["escalate", "--reason", "r", "--needs-user", "--question", "q", "--option", "nolabel"], /has no label/],
    [
      ["escalate", "--reason", "r", "--needs-user", "--question", "q", "--category", "money"],
      /not a category/,
    ],
    [["approve", "--tokens-in", "12k"], /not a whole number/],
    [["approve", "--cost-usd", "1e3"], /not a decimal number/],
    [["approve", "--needs-user"], /unknown flag '--needs-user' for 'approve'/],
  ])("refuses %j with exit 2 and says what to do", async (args, pattern) => {
    const run = await agent(args as string[]);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toMatch(pattern as RegExp);
    expect(readdirSync(run.control)).toEqual([]);
  });

  it("refuses more than 8 options", async () => {
    const options = Array.from({ length: 9 }, (_, i) => ["--option", `o${i}:Option ${i}`]).flat();
    const run = await agent(["escalate", "--reason", "r", "--needs-user", "--question", "q", ...options]);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toMatch(/at most 8 options/);
  });

  it("refuses to run without OVERSEER_CONTROL_DIR, or with a missing one", async () => {
    const unset = await execa(overseerAgentPath(), ["approve"], {
      env: { PATH: "/usr/bin:/bin" },
      extendEnv: false,
      reject: false,
    });
    expect(unset.exitCode).toBe(2);
    expect(unset.stderr).toMatch(/OVERSEER_CONTROL_DIR is not set/);
    const missing = await agent(["approve"], { control: join(makeTempDir(), "gone") });
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toMatch(/does not exist/);
  });

  it("ignores look-alike variables inherited from the environment", async () => {
    const run = await agent(["approve"], {
      env: { _OA_OPT_N: "1", _OA_OPT_ID_1: "x", _OA_FEEDBACK: "smuggled", message_file: "/etc/passwd" },
    });
    expect(run.exitCode).toBe(0);
    expect((await recorded(run.control)).raw).toEqual({ version: 1, kind: "approve" });
  });

  it("prints help with exit 0", async () => {
    const run = await agent(["--help"]);
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toMatch(/overseer-agent submit {3}--message-file FILE/);
    const verbHelp = await agent(["escalate", "--help"]);
    expect(verbHelp.exitCode).toBe(0);
  });

  it("always produces a file the schema accepts when it exits 0", async () => {
    const run = await agent([
      "escalate",
      "--reason",
      "need a key",
      "--needs-user",
      "--category",
      "credentials",
      "--question",
      "Where is the key?",
      "--option",
      "Vault Path:In Vault",
      "--option",
      "custom:Tell me",
      "--tokens-in",
      "1",
    ]);
    expect(run.exitCode).toBe(0);
    const { raw, transition } = await recorded(run.control);
    expect(parseControlTransition(raw).ok).toBe(true);
    expect(transition).toEqual({
      version: 1,
      kind: "escalate",
      reason: "need a key",
      needs_user: true,
      category: "credentials",
      question: "Where is the key?",
      options: [
        { id: "vault_path", label: "In Vault", requires_note: false },
        { id: "custom", label: "Tell me", requires_note: true },
      ],
      usage: { tokens_in: 1 },
    });
  });
});
