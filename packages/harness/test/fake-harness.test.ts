import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { isProcessAlive } from "@overseer/process";
import { afterEach, describe, expect, it } from "vitest";
import {
  buildHarnessEnv,
  fakeHarnessPath,
  type PromptAction,
  renderPrompt,
  runHarness,
} from "../src/index.ts";
import { cleanupAll, makeRunDirs, type RunDirs, silentLogger, trackPid } from "./support/harness-fixtures.ts";

afterEach(cleanupAll);

interface FakeRunOptions {
  script?: string;
  action?: PromptAction;
  attempt?: number;
  dirs?: RunDirs;
  timeoutMs?: number;
}

/** Renders a real prompt whose task body holds `script`, then runs the fake harness on it. */
async function runFake({
  script,
  action = "execute",
  attempt = 1,
  dirs = makeRunDirs(),
  timeoutMs = 20_000,
}: FakeRunOptions) {
  const body =
    script === undefined ? "No script here." : `Do the thing.\n\n\`\`\`overseer-fake\n${script}\n\`\`\`\n`;
  const rendered = renderPrompt({
    project: { id: "demo", objective: "Exercise the fake harness." },
    task: {
      id: "S01-007",
      stage: "S01",
      title: "Fake work",
      body,
      role: "dev",
      scope: ["src/**"],
      acceptance: [],
      kind: "work",
      parentId: null,
    },
    action,
    agentId: `${action}-dev-0123456789ab`,
    answers: [],
    attempt,
    maxChars: 80_000,
  });
  if (!rendered.ok) throw rendered.error;
  const env = buildHarnessEnv({
    base: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
    projectRoot: dirs.checkout,
    taskId: "S01-007",
    role: "dev",
    agentId: `${action}-dev-0123456789ab`,
    action,
    promptFile: dirs.promptFile,
    controlDir: dirs.control,
  });
  const result = await runHarness({
    argv: [process.execPath, fakeHarnessPath()],
    cwd: dirs.checkout,
    env,
    prompt: rendered.prompt,
    controlDir: dirs.control,
    timeoutMs,
    killGraceMs: 1000,
    redact: (s) => s,
    logger: silentLogger,
  });
  return { result, dirs };
}

const read = (dirs: RunDirs, path: string) => readFileSync(join(dirs.checkout, path), "utf8");

describe("fake harness", () => {
  it("writes, appends, deletes and submits", async () => {
    const { result, dirs } = await runFake({
      script:
        'execute: write src/a.txt "hello\\n"; append src/a.txt "world \\"quoted\\"\\n"; write src/gone.txt x; delete src/gone.txt; print "done editing"; submit "Add a.txt\\n\\nWith a body."',
    });
    // exitCode is 0 or null (SIGTERM): the worker may end the group before the harness exits.
    expect(result.transition).toEqual({ version: 1, kind: "submit", message: "Add a.txt\n\nWith a body." });
    expect(read(dirs, "src/a.txt")).toBe('hello\nworld "quoted"\n');
    expect(existsSync(join(dirs.checkout, "src/gone.txt"))).toBe(false);
    expect(result.output).toContain("done editing\n");
  });

  it("expect passes on content the file holds and exits 3 without a transition otherwise", async () => {
    const held = await runFake({
      script: 'execute: write src/m.txt "a\\n<<<<<<< ours\\n"; expect src/m.txt "<<<<<<< "; submit "m"',
    });
    expect(held.result.transition).toMatchObject({ kind: "submit" });
    const missing = await runFake({
      script: 'execute: write src/m.txt "a"; expect src/m.txt "zzz"; submit "m"',
    });
    expect(missing.result.transition).toBeNull();
    expect(missing.result.exitCode).toBe(3);
    expect(missing.result.output).toMatch(/expect src\/m\.txt failed: src\/m\.txt does not contain "zzz"/);
  });

  it("defaults: execute writes a note and submits, review approves", async () => {
    const execute = await runFake({});
    expect(execute.result.transition).toEqual({ version: 1, kind: "submit", message: "Work on S01-007" });
    expect(read(execute.dirs, ".overseer/notes/S01-007.md")).toMatch(/Work on S01-007/);

    const resolve = await runFake({ action: "resolve", script: "execute: exit 9" });
    expect(resolve.result.transition).toMatchObject({ kind: "submit" });

    const review = await runFake({ action: "review" });
    expect(review.result.transition).toEqual({ version: 1, kind: "approve" });
  });

  it("picks the line for the attempt: the highest index not above it", async () => {
    const script =
      'review: reject "needs tests"\nreview#2: approve "looks good"\n# a comment\n\nexecute#2: submit "second try"';
    const first = await runFake({ action: "review", script, attempt: 1 });
    expect(first.result.transition).toEqual({ version: 1, kind: "reject", feedback: "needs tests" });
    const second = await runFake({ action: "review", script, attempt: 2 });
    expect(second.result.transition).toEqual({ version: 1, kind: "approve", feedback: "looks good" });
    const third = await runFake({ action: "review", script, attempt: 3 });
    expect(third.result.transition).toMatchObject({ kind: "approve" });
    // execute has only #2: attempt 1 falls back to the default behaviour.
    const exec1 = await runFake({ script, attempt: 1 });
    expect(exec1.result.transition).toMatchObject({ message: "Work on S01-007" });
    const exec2 = await runFake({ script, attempt: 2 });
    expect(exec2.result.transition).toMatchObject({ message: "second try" });
  });

  it("escalates, and asks the operator with options", async () => {
    const escalate = await runFake({ script: 'execute: escalate "the CI token expired"' });
    expect(escalate.result.transition).toMatchObject({
      kind: "escalate",
      reason: "the CI token expired",
      needs_user: false,
    });

    const ask = await runFake({
      script:
        'execute: ask "Which payment provider?" stripe:Stripe "Paddle Inc:Paddle (EU)" custom:"Something else"',
    });
    expect(ask.result.transition).toEqual({
      version: 1,
      kind: "escalate",
      reason: "Which payment provider?",
      needs_user: true,
      category: "product_question",
      question: "Which payment provider?",
      options: [
        { id: "stripe", label: "Stripe", requires_note: false },
        { id: "paddle_inc", label: "Paddle (EU)", requires_note: false },
        { id: "custom", label: "Something else", requires_note: true },
      ],
    });
  });

  it("exits without a transition, or crashes by a signal", async () => {
    const exit = await runFake({ script: 'execute: write src/half.txt "half"; exit 3' });
    expect(exit.result).toMatchObject({ exitCode: 3, transition: null, endReason: "exited" });
    expect(read(exit.dirs, "src/half.txt")).toBe("half");

    const crash = await runFake({ script: "execute: crash" });
    expect(crash.result.exitCode).toBeNull();
    expect(["SIGSEGV", "SIGABRT"]).toContain(crash.result.signal);
    expect(crash.result.transition).toBeNull();
  });

  it("keeps running after its transition until the worker ends it", async () => {
    const { result } = await runFake({ script: 'execute: submit "early"; sleep 300; print "never printed"' });
    expect(result).toMatchObject({ endReason: "transition", signal: "SIGTERM" });
    expect(result.output).not.toContain("never printed");
  });

  it("times out while sleeping", async () => {
    const { result } = await runFake({ script: "execute: sleep 300", timeoutMs: 1500 });
    expect(result).toMatchObject({ timedOut: true, transition: null });
  });

  it("write-outside writes out of scope and even outside the checkout; write refuses to leave it", async () => {
    const outside = await runFake({
      script: 'execute: write-outside docs/out-of-scope.md "x"; write-outside ../escaped.txt "y"; submit "m"',
    });
    expect(read(outside.dirs, "docs/out-of-scope.md")).toBe("x");
    expect(readFileSync(join(outside.dirs.root, "escaped.txt"), "utf8")).toBe("y");

    const refused = await runFake({ script: 'execute: write ../escaped.txt "y"' });
    expect(refused.result.exitCode).toBe(2);
    expect(refused.result.output).toMatch(/leaves the checkout; use write-outside/);
    expect(existsSync(join(refused.dirs.root, "escaped.txt"))).toBe(false);
  });

  it("spawn-orphan starts a sleeper outside the process group and records its pid", async () => {
    const { result, dirs } = await runFake({ script: 'execute: spawn-orphan 300; submit "m"' });
    const pid = Number(read(dirs, ".overseer/orphan.pid").trim());
    trackPid(pid);
    expect(result.transition).toMatchObject({ kind: "submit" });
    // Without a sandbox nothing can catch it: that is what the PID namespace is for.
    expect(isProcessAlive(pid)).toBe(true);
  });

  it.each([
    ["execute: write src/first.txt x; dance", /unknown step "dance"/],
    ["execute: write src/first.txt x; write only-a-path", /step "write" takes 2 argument/],
    ['execute: write src/first.txt x; submit "unterminated', /unterminated string/],
    ["execute: write src/first.txt x\ndeploy: submit x", /bad script line/],
    ["execute: write src/first.txt x; sleep soon", /sleep needs a number of seconds/],
    ["execute: write src/first.txt x; exit 300", /exit needs a code 0-255/],
    ['execute: write src/first.txt x; ask "q?" nolabel', /must be id:Label/],
    ["execute: write src/first.txt x\nexecute: submit m", /two script lines for execute#1/],
  ])("refuses a bad script %j with exit 2 before doing anything", async (script, message) => {
    const { result, dirs } = await runFake({ script });
    expect(result.exitCode).toBe(2);
    expect(result.transition).toBeNull();
    expect(result.output).toMatch(message);
    expect(existsSync(join(dirs.checkout, "src/first.txt"))).toBe(false);
  });
});
