import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { applyTransition, createProject } from "@overseer/db";
import { taskCard } from "@overseer/test-support";
import {
  createTranscriptFeed,
  parseTranscript,
  renderTranscript,
  type TranscriptEntry,
} from "@overseer/transcript";
import { importTasks, startProject, TransitionApplier } from "@overseer/transitions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CliIo } from "../src/cli-io.ts";
import { runCli } from "../src/cli-main.ts";
import { type CliGateway, type CliResult, runCapturedCli, startCliGateway } from "./cli-gateway.ts";

/**
 * `overseer logs` against a real listening gateway (scratch Postgres, own Redis prefix): the
 * stored transcript of a run and of a task rendered, coloured only for a terminal (the real
 * binary, piped and under a pseudo-terminal), the raw output with --raw, and -f following a
 * run's transcript live from `run.transcript` events until the run ends.
 */

const BIN = fileURLToPath(new URL("../bin/overseer", import.meta.url));
const fixture = (name: string) =>
  readFileSync(new URL(`../../transcript/test/fixtures/${name}`, import.meta.url), "utf8");
const CLAUDE = fixture("claude-2.1.332.jsonl");
const CODEX = fixture("codex-0.171.0.jsonl");
const COPILOT = fixture("copilot-1.0.102.jsonl");
/** tsx starts the CLI from TypeScript: generous on a loaded machine. */
const SPAWN_TIMEOUT = 120_000;
const run = promisify(execFile);

let env: CliGateway;

beforeAll(async () => {
  env = await startCliGateway("clilogs");
});

afterAll(async () => {
  await env?.close();
});

function cli(args: string[], options: { color?: boolean } = {}): Promise<CliResult> {
  return runCapturedCli(args, { OVERSEER_URL: env.gateway.url, OVERSEER_TOKEN: env.tokens.read }, options);
}

async function project(id: string, agent: string, tasks: string[]): Promise<void> {
  await createProject(env.scratch.db, { id, repo: "/tmp/none", runnerConfig: { agent }, objective: id });
  const applier = new TransitionApplier({ db: env.scratch.db });
  await importTasks(
    applier,
    id,
    tasks.map((t) => ({ ...taskCard(t), scope: ["**"] })),
  );
  await startProject(applier, id);
}

/** Claims the next task and starts its run. */
async function startRun(projectId: string): Promise<string> {
  const claimed = await applyTransition(env.scratch.db, projectId, { kind: "claim" });
  const runId = claimed.changes.runs[0]?.id;
  if (!runId) throw new Error("nothing to claim");
  await applyTransition(env.scratch.db, projectId, { kind: "run-started", runId, workerId: "w1" });
  return runId;
}

/**
 * Ends a run as the worker's result does, with its output and the transcript it parsed: an
 * executor's submit, or a reviewer's reject.
 */
async function endRun(
  projectId: string,
  runId: string,
  output: string,
  entries: TranscriptEntry[],
  action: "submit" | "reject" = "submit",
) {
  await applyTransition(
    env.scratch.db,
    projectId,
    action === "submit"
      ? { kind: "submit", runId, message: "Add hello.txt", commitSha: null, branchHead: null }
      : { kind: "reject", runId, feedback: "Not yet." },
    { runReport: { output, transcript: { agent: null, entries, truncated: false } } },
  );
}

const ESC = "\u001b";

describe("overseer logs (stored transcripts)", () => {
  it("renders a run's transcript, plain or coloured with the server's controls escaped; --raw prints the output", async () => {
    await project("stored", "claude", ["S00-001"]);
    const runId = await startRun("stored");
    // A message carrying a terminal control: shown as a visible escape, never sent to the terminal.
    const entries = [
      ...parseTranscript(CLAUDE, "claude"),
      { seq: 100, at: null, kind: "message", role: "assistant", text: `done ${ESC}[2J` } as const,
    ];
    await endRun("stored", runId, CLAUDE, entries);

    const plain = await cli(["logs", runId]);
    expect(plain, plain.err).toMatchObject({ code: 0 });
    expect(plain.out).not.toContain(ESC);
    expect(plain.out).not.toContain('{"type":');
    expect(plain.out).toMatch(/^\S{8} assistant: /m);
    // The recorded run: Write, then a Bash command that exited 127, each with its output.
    expect(plain.out).toMatch(/^\S{8} → Write \{"content":"hello from a real agent CLI\\n"/m);
    expect(plain.out).toMatch(/^\S{8} \$ if \[ "\$OVERSEER_ACTION" = review \]; then$/m);
    expect(plain.out).toMatch(/^ {9}↳ exit 127\n {11}Exit code 127$/m);
    expect(plain.out).toMatch(/^\S{8} ✎ add \S*\/hello\.txt$/m);
    expect(plain.out).toMatch(/^\S{8} tokens 1,000 in \(200 cached\) · 1 out · mock-claude$/m);
    expect(plain.out).toContain("done \\x1b[2J");

    const coloured = await cli(["logs", runId], { color: true });
    expect(coloured.out).toContain(`${ESC}[36massistant: `);
    expect(coloured.out).toContain(`${ESC}[33m$ `);
    expect(coloured.out).toContain("done \\x1b[2J");
    expect(coloured.out.replace(new RegExp(`${ESC}\\[\\d+m`, "g"), "")).toBe(plain.out);

    const raw = await cli(["logs", "--raw", runId]);
    expect(raw.out).toBe(CLAUDE.replace(/\n$/, ""));
  });

  it("prints every run of a task, each under its run's line; an unknown id exits 1", async () => {
    await project("task", "codex", ["S00-001"]);
    const first = await startRun("task");
    await endRun("task", first, CODEX, parseTranscript(CODEX, "codex"));
    const second = await startRun("task");
    await endRun("task", second, CODEX, parseTranscript(CODEX, "codex"), "reject");

    const task = await cli(["logs", "S00-001", "--project", "task"]);
    expect(task, task.err).toMatchObject({ code: 0 });
    const firstAt = task.out.indexOf(`── run ${first} ──`);
    const secondAt = task.out.indexOf(`── run ${second} ──`);
    expect(firstAt).toBe(0);
    expect(secondAt).toBeGreaterThan(firstAt);
    // Codex's file change and command, in each run.
    expect(task.out.slice(firstAt, secondAt)).toMatch(/✎ add .*hello\.txt[\s\S]*\$ \/bin\/bash -lc/);
    expect(task.out.slice(secondAt)).toMatch(/✎ add .*hello\.txt[\s\S]*\$ \/bin\/bash -lc/);
    // --raw with a task: its latest run's output.
    expect((await cli(["logs", "--raw", "S00-001", "--project", "task"])).out).toBe(CODEX.replace(/\n$/, ""));

    const missing = await cli(["logs", "S09-404", "--project", "task"]);
    expect(missing.code).toBe(1);
    expect(missing.err).toContain("No run or task has id S09-404");
  });

  it(
    "the real binary prints plain text when piped and colours under a terminal",
    async () => {
      await project("tty", "claude", ["S00-001"]);
      const runId = await startRun("tty");
      await endRun("tty", runId, CLAUDE, parseTranscript(CLAUDE, "claude"));
      const childEnv = {
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? "/tmp",
        OVERSEER_URL: env.gateway.url,
        OVERSEER_TOKEN: env.tokens.read,
      };
      // util-linux `script` gives the CLI a pseudo-terminal as its stdout; both start at once.
      const [piped, tty] = await Promise.all([
        run(BIN, ["logs", runId], { env: childEnv, timeout: SPAWN_TIMEOUT }),
        run("script", ["-qec", `${BIN} logs ${runId}`, "/dev/null"], {
          env: { ...childEnv, TERM: "xterm" },
          timeout: SPAWN_TIMEOUT,
        }),
      ]);
      expect(piped.stdout).toMatch(/assistant: /);
      expect(piped.stdout).not.toContain(ESC);
      expect(tty.stdout).toContain(`${ESC}[36massistant: `);
    },
    SPAWN_TIMEOUT + 30_000,
  );
});

describe("overseer logs -f", () => {
  it("follows a run's transcript live, each entry once and in order, reading over HTTP what the stream missed", async () => {
    await project("follow", "codex", ["S00-001"]);
    const runId = await startRun("follow");
    const lines = CODEX.split(/(?<=\n)/);
    const firstHalf = lines.slice(0, 4).join("");
    const secondHalf = lines.slice(4).join("");
    const feed = createTranscriptFeed("codex");
    const early = feed.write(firstHalf);
    const late = [...feed.write(secondHalf), ...feed.end()];
    expect(early.length).toBeGreaterThan(0);
    expect(late.length).toBeGreaterThan(2);
    // Before the follower starts, the worker kept the first half live (the transcript route reads it).
    await env.live.appendLog(runId, firstHalf);
    await env.live.publishTranscript("follow", runId, early);

    const out: string[] = [];
    const err: string[] = [];
    const io: CliIo = {
      out: (line) => out.push(line),
      err: (line) => err.push(line),
      env: { OVERSEER_URL: env.gateway.url, OVERSEER_TOKEN: env.tokens.read },
      cwd: process.cwd(),
    };
    const following = runCli(["logs", "-f", runId], io);
    const channel = env.live.transcriptChannel("follow");
    await expect
      .poll(async () => ((await env.redis.pubsub("NUMSUB", channel)) as [string, number])[1], {
        timeout: 20_000,
      })
      .toBe(1);
    await expect.poll(() => out.join("\n"), { timeout: 20_000 }).toContain(render(early));

    // The worker's next publication misses its first entry (a dropped message): the follower
    // sees the gap in `seq` and reads it from the transcript route (the worker kept it).
    await env.live.appendLog(runId, secondHalf);
    await env.live.keepTranscript(runId, late.slice(0, 1), Number.MAX_SAFE_INTEGER);
    await env.live.publishTranscript("follow", runId, late.slice(1));
    await expect.poll(() => out.join("\n"), { timeout: 20_000 }).toBe(render([...early, ...late]));

    await endRun("follow", runId, CODEX, [...early, ...late]);
    expect(await following).toBe(0);
    expect(out.join("\n")).toBe(render([...early, ...late]));
    expect(err.join("\n")).toContain(`run ${runId} ended: finished (submit)`);
  });

  it("follows a Copilot run from its session file's entries, numbered as the stored transcript, not its printed lines", async () => {
    await project("copilotlive", "copilot", ["S00-001"]);
    const runId = await startRun("copilotlive");
    // Copilot prints human text (the live log); the worker parses its session file instead.
    const printed = "● Create hello.txt (create)\n  └ 1 line added\n● Run the command (shell)\n";
    await env.live.appendLog(runId, printed);
    const entries = parseTranscript(COPILOT, "copilot");
    const half = Math.floor(entries.length / 2);
    const [early, late] = [entries.slice(0, half), entries.slice(half)];
    expect(early.length).toBeGreaterThan(4);
    // Published before anyone listened: kept where the transcript route reads a running run's.
    await env.live.publishTranscript("copilotlive", runId, early, entries.length);

    const now = await cli(["logs", runId]);
    expect(now, now.err).toMatchObject({ code: 0, out: render(early) });
    expect(now.out).not.toContain("●");

    const out: string[] = [];
    const io: CliIo = {
      out: (line) => out.push(line),
      err: () => undefined,
      env: { OVERSEER_URL: env.gateway.url, OVERSEER_TOKEN: env.tokens.read },
      cwd: process.cwd(),
    };
    const following = runCli(["logs", "-f", runId], io);
    const channel = env.live.transcriptChannel("copilotlive");
    await expect
      .poll(async () => ((await env.redis.pubsub("NUMSUB", channel)) as [string, number])[1], {
        timeout: 20_000,
      })
      .toBe(1);
    await expect.poll(() => out.join("\n"), { timeout: 20_000 }).toBe(render(early));
    await env.live.publishTranscript("copilotlive", runId, late, entries.length);
    await expect.poll(() => out.join("\n"), { timeout: 20_000 }).toBe(render(entries));

    await endRun("copilotlive", runId, printed, entries);
    expect(await following).toBe(0);
    expect(out.join("\n")).toBe(render(entries));
  });

  it("says a running run's live transcript was trimmed to the worker's bound", async () => {
    await project("trimmed", "codex", ["S00-001"]);
    const runId = await startRun("trimmed");
    const entries = parseTranscript(CODEX, "codex");
    // The worker's bound holds the 3 newest entries: the older ones left the live list too.
    await env.live.publishTranscript("trimmed", runId, entries, 3);
    const now = await cli(["logs", runId]);
    expect(now, now.err).toMatchObject({ code: 0, out: render(entries.slice(-3)) });
    expect(now.err).toContain(`run ${runId}: the oldest entries were left out (size bound)`);
  });

  it("--raw -f follows the original output until the run ends", async () => {
    await project("rawfollow", "codex", ["S00-001"]);
    const runId = await startRun("rawfollow");
    await env.live.appendLog(runId, "building...\nhalf a ");
    const following = cli(["logs", "--raw", "-f", runId]);
    await expect.poll(() => env.gateway.app.openStreamCount(), { timeout: 20_000 }).toBe(1);
    await env.live.appendLog(runId, "line\ndone\n");
    await applyTransition(
      env.scratch.db,
      "rawfollow",
      { kind: "submit", runId, message: "feat: build", commitSha: null, branchHead: null },
      { runReport: { output: "building...\nhalf a line\ndone\n" } },
    );
    const followed = await following;
    expect(followed.code).toBe(0);
    expect(followed.out).toBe("building...\nhalf a line\ndone");
    expect(followed.err).toContain(`run ${runId} ended: finished (submit)`);
  });
});

function render(entries: TranscriptEntry[]): string {
  return renderTranscript(entries, { color: false }).replace(/\n$/, "");
}
