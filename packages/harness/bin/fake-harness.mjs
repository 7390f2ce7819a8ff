#!/usr/bin/env node
// Scripted fake harness: a stand-in for a real agent CLI in tests, benchmarks and the demo.
// Plain Node ESM with built-ins only, so it runs anywhere Node does (inside sandboxes too).
//
// It reads the prompt from stdin and looks for the first fenced block tagged `overseer-fake`:
//
//   ```overseer-fake
//   execute: write src/a.txt "hello"; submit "Add a.txt"
//   review: reject "needs a test"
//   review#2: approve "looks good"
//   ```
//
// Lines are `<action>[#N][@TASK]: step; step; …` for the actions execute, review and resolve
// (`#` lines and blank lines are ignored); `@TASK` limits a line to the task with that id, so
// one mission objective can script each planning round (`execute@MISSION-R2: …`). The action comes from $OVERSEER_ACTION. The attempt
// number N comes from the `- Attempt: N` line of the prompt's task card (default 1): the line
// with the highest index <= N runs (an unindexed line counts as #1), so `review: reject …` plus
// `review#2: approve …` rejects once and approves every later review.
//
// Steps (arguments are words or "double-quoted strings" with \" \\ \n \t escapes):
//   write PATH "CONTENT"          create/replace a file (path must stay inside the checkout)
//   append PATH "CONTENT"         append to a file (same rule)
//   delete PATH                   remove a file (same rule)
//   expect PATH "TEXT"            the file must contain TEXT (same rule), else exit 3 with no
//                                 transition: proves what the checkout held when the run started
//   write-outside PATH "CONTENT"  deliberate out-of-scope write: no path check at all, PATH is
//                                 relative to the checkout and may even leave it (a sandbox
//                                 must then refuse it; the failure exits 3)
//   submit "MSG"                  overseer-agent submit --message-file - (MSG on stdin)
//   approve ["FB"] | reject "FB" | escalate "REASON"
//   ask "QUESTION" id:Label ...   overseer-agent escalate --needs-user (reason = question,
//                                 category product_question, one --option per id:Label)
//   sleep SECONDS                 wait (fractions allowed); the run may be ended meanwhile
//   exit CODE                     exit now with CODE and no transition
//   crash                         die by a signal (SIGSEGV, else abort)
//   print "TEXT"                  write TEXT and a newline to stdout
//   plan "TASK FILE"              overseer-agent plan --file F (the YAML/JSON text, written to a
//                                 temp file outside the checkout)
//   complete "EVIDENCE"           overseer-agent complete --evidence F (same)
//   replan "REASON"               overseer-agent escalate --replan --reason REASON
//   spawn-orphan SECONDS          start a detached `sleep SECONDS` (its own session, so it
//                                 escapes the process group) and write its pid to
//                                 .overseer/orphan.pid
// Steps after a transition still run (a script can keep sleeping to prove the worker ends it).
// Without a script (or a line for the action): execute/resolve write
// .overseer/notes/<task>.md and submit "Work on <task>"; review approves.
// Exit codes: 0 done, 2 bad script or environment, 3 a file step failed, else overseer-agent's.

import { spawn, spawnSync } from "node:child_process";
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, isAbsolute, join, relative, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

const ACTIONS = new Set(["execute", "review", "resolve"]);

const STEP_ARITY = {
  write: [2, 2],
  append: [2, 2],
  delete: [1, 1],
  expect: [2, 2],
  "write-outside": [2, 2],
  submit: [1, 1],
  approve: [0, 1],
  reject: [1, 1],
  escalate: [1, 1],
  ask: [1, Number.POSITIVE_INFINITY],
  sleep: [1, 1],
  exit: [1, 1],
  crash: [0, 0],
  print: [1, 1],
  "spawn-orphan": [1, 1],
  plan: [1, 1],
  complete: [1, 1],
  replan: [1, 1],
};

function fail(message, code = 2) {
  process.stderr.write(`fake-harness: ${message}\n`);
  process.exit(code);
}

function log(message) {
  process.stdout.write(`fake-harness: ${message}\n`);
}

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return Buffer.concat(chunks).toString("utf8");
}

/** Lines of the first ```overseer-fake block, or null when the prompt has none. */
function scriptLines(prompt) {
  const lines = prompt.split("\n");
  const start = lines.findIndex((line) => /^\s*```overseer-fake\s*$/.test(line));
  if (start < 0) return null;
  const out = [];
  for (let i = start + 1; i < lines.length; i += 1) {
    const line = lines[i] ?? "";
    if (/^\s*```\s*$/.test(line)) return out;
    out.push(line);
  }
  fail("the ```overseer-fake block is not closed with ```");
}

/** Splits a script line into steps (`;`-separated) of tokens (words and quoted strings). */
function tokenize(text) {
  const steps = [];
  let tokens = [];
  let token = null;
  const endToken = () => {
    if (token !== null) tokens.push(token);
    token = null;
  };
  const endStep = () => {
    endToken();
    if (tokens.length > 0) steps.push(tokens);
    tokens = [];
  };
  for (let i = 0; i < text.length; i += 1) {
    const ch = text[i];
    if (ch === '"') {
      token ??= "";
      i += 1;
      for (;;) {
        if (i >= text.length) fail(`unterminated string in: ${text}`);
        const c = text[i];
        if (c === '"') break;
        if (c === "\\") {
          i += 1;
          const e = text[i];
          token += e === "n" ? "\n" : e === "t" ? "\t" : (e ?? "");
        } else {
          token += c;
        }
        i += 1;
      }
    } else if (ch === ";") {
      endStep();
    } else if (ch === " " || ch === "\t") {
      endToken();
    } else {
      token = (token ?? "") + ch;
    }
  }
  endStep();
  return steps;
}

function parseScript(lines) {
  const entries = [];
  for (const raw of lines) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const match = /^([a-z]+)(?:#(\d+))?(?:@([A-Za-z0-9._-]+))?\s*:(.*)$/.exec(line);
    if (!match || !ACTIONS.has(match[1])) {
      fail(`bad script line "${line}": expected "execute|review|resolve[#N][@TASK]: step; step"`);
    }
    const forTask = match[3] ?? null;
    const steps = tokenize(match[4]);
    for (const [name, ...args] of steps) {
      const arity = STEP_ARITY[name];
      if (!arity) fail(`unknown step "${name}" in "${line}"; steps: ${Object.keys(STEP_ARITY).join(", ")}`);
      if (args.length < arity[0] || args.length > arity[1]) {
        fail(
          `step "${name}" takes ${arity[0] === arity[1] ? arity[0] : `${arity[0]}-${arity[1]}`} argument(s), got ${args.length} in "${line}"`,
        );
      }
      checkArgs(name, args);
    }
    const index = match[2] ? Number(match[2]) : 1;
    if (index < 1) fail(`bad attempt index in "${line}": attempts count from 1`);
    if (entries.some((e) => e.action === match[1] && e.index === index && e.forTask === forTask)) {
      fail(
        `two script lines for ${match[1]}#${index}${forTask ? `@${forTask}` : ""}; keep one per action and attempt`,
      );
    }
    entries.push({ action: match[1], index, forTask, steps });
  }
  return entries;
}

/** Argument checks that need no I/O, done before any step runs. */
function checkArgs(name, args) {
  if ((name === "sleep" || name === "spawn-orphan") && !(Number(args[0]) >= 0)) {
    fail(`${name} needs a number of seconds, got "${args[0]}"`);
  }
  if (name === "exit" && (!/^\d{1,3}$/.test(args[0]) || Number(args[0]) > 255)) {
    fail(`exit needs a code 0-255, got "${args[0]}"`);
  }
  if (name === "ask") {
    for (const option of args.slice(1)) {
      if (!/^[^:]+:./.test(option)) fail(`ask option "${option}" must be id:Label`);
    }
  }
}

function insideCheckout(path) {
  const target = resolve(process.cwd(), path);
  const rel = relative(process.cwd(), target);
  if (isAbsolute(path) || rel === "" || rel.startsWith("..") || isAbsolute(rel)) {
    fail(`path "${path}" leaves the checkout; use write-outside for a deliberate out-of-bounds write`);
  }
  return target;
}

function fileStep(what, fn) {
  try {
    fn();
  } catch (error) {
    fail(`${what} failed: ${error.message}`, 3);
  }
}

function agent(args, input) {
  log(`overseer-agent ${args[0]}`);
  const result = spawnSync("overseer-agent", args, {
    input: input ?? "",
    stdio: ["pipe", "inherit", "inherit"],
  });
  if (result.error) fail(`cannot run overseer-agent (${result.error.message}); it must be on PATH`, 127);
  if (result.status !== 0) process.exit(result.status ?? 1);
}

async function runStep(name, args) {
  switch (name) {
    case "write":
    case "write-outside": {
      const target = name === "write" ? insideCheckout(args[0]) : resolve(process.cwd(), args[0]);
      log(`${name} ${args[0]}`);
      fileStep(`${name} ${args[0]}`, () => {
        mkdirSync(dirname(target), { recursive: true });
        writeFileSync(target, args[1]);
      });
      return;
    }
    case "append": {
      const target = insideCheckout(args[0]);
      log(`append ${args[0]}`);
      fileStep(`append ${args[0]}`, () => {
        mkdirSync(dirname(target), { recursive: true });
        appendFileSync(target, args[1]);
      });
      return;
    }
    case "expect": {
      const target = insideCheckout(args[0]);
      log(`expect ${args[0]}`);
      fileStep(`expect ${args[0]}`, () => {
        if (!readFileSync(target, "utf8").includes(args[1])) {
          throw new Error(`${args[0]} does not contain ${JSON.stringify(args[1])}`);
        }
      });
      return;
    }
    case "delete": {
      const target = insideCheckout(args[0]);
      log(`delete ${args[0]}`);
      fileStep(`delete ${args[0]}`, () => rmSync(target));
      return;
    }
    case "submit":
      agent(["submit", "--message-file", "-"], args[0]);
      return;
    case "approve":
      agent(args.length > 0 ? ["approve", "--feedback", args[0]] : ["approve"]);
      return;
    case "reject":
      agent(["reject", "--feedback", args[0]]);
      return;
    case "escalate":
      agent(["escalate", "--reason", args[0]]);
      return;
    case "replan":
      agent(["escalate", "--reason", args[0], "--replan"]);
      return;
    case "plan":
    case "complete": {
      const dir = mkdtempSync(join(tmpdir(), "fake-harness-"));
      const file = join(dir, name === "plan" ? "plan.yaml" : "evidence.txt");
      writeFileSync(file, args[0]);
      agent(name === "plan" ? ["plan", "--file", file] : ["complete", "--evidence", file]);
      return;
    }
    case "ask": {
      const [question, ...options] = args;
      const flags = ["escalate", "--reason", question, "--needs-user", "--category", "product_question"];
      flags.push("--question", question);
      for (const option of options) {
        if (!option.includes(":")) fail(`ask option "${option}" must be id:Label`);
        flags.push("--option", option);
      }
      agent(flags);
      return;
    }
    case "sleep": {
      const seconds = Number(args[0]);
      if (!Number.isFinite(seconds) || seconds < 0) fail(`sleep needs a number of seconds, got "${args[0]}"`);
      log(`sleep ${seconds}`);
      await sleep(seconds * 1000);
      return;
    }
    case "exit": {
      const code = Number(args[0]);
      if (!Number.isInteger(code) || code < 0 || code > 255)
        fail(`exit needs a code 0-255, got "${args[0]}"`);
      log(`exit ${code}`);
      process.exit(code);
      return;
    }
    case "crash":
      log("crash");
      process.kill(process.pid, "SIGSEGV");
      await sleep(1000);
      process.abort();
      return;
    case "print":
      process.stdout.write(`${args[0]}\n`);
      return;
    case "spawn-orphan": {
      const seconds = Number(args[0]);
      if (!Number.isFinite(seconds) || seconds < 0)
        fail(`spawn-orphan needs a number of seconds, got "${args[0]}"`);
      const child = spawn("sleep", [String(seconds)], { detached: true, stdio: "ignore" });
      child.unref();
      if (child.pid === undefined) fail("spawn-orphan could not start sleep", 3);
      log(`spawn-orphan pid ${child.pid}`);
      fileStep("write .overseer/orphan.pid", () => {
        mkdirSync(resolve(process.cwd(), ".overseer"), { recursive: true });
        writeFileSync(resolve(process.cwd(), ".overseer/orphan.pid"), `${child.pid}\n`);
      });
      return;
    }
    default:
      fail(`unknown step "${name}"`);
  }
}

async function main() {
  if (process.argv.includes("--help")) {
    process.stdout.write("fake-harness: scripted stand-in agent; see the header of bin/fake-harness.mjs\n");
    return;
  }
  const action = process.env.OVERSEER_ACTION ?? process.env.LUMA_ACTION;
  if (!action || !ACTIONS.has(action)) {
    fail(`OVERSEER_ACTION must be execute, review or resolve (got ${action ? `"${action}"` : "nothing"})`);
  }
  const task = process.env.OVERSEER_TASK_ID ?? process.env.LUMA_TASK_ID ?? "task";
  const prompt = await readStdin();
  const attemptMatch = /^- Attempt: (\d+)\s*$/m.exec(prompt);
  const attempt = attemptMatch ? Number(attemptMatch[1]) : 1;

  const lines = scriptLines(prompt);
  const entries = lines ? parseScript(lines) : [];
  // A line for this very task wins over a general one; then the highest index <= attempt.
  const chosen = entries
    .filter((e) => e.action === action && e.index <= attempt && (e.forTask === null || e.forTask === task))
    .sort((a, b) => (b.forTask !== null) - (a.forTask !== null) || b.index - a.index)[0];

  let steps;
  if (chosen) {
    steps = chosen.steps;
    log(`${action} attempt ${attempt}: script line ${action}${chosen.index > 1 ? `#${chosen.index}` : ""}`);
  } else if (action === "review") {
    steps = [["approve"]];
    log(`${action} attempt ${attempt}: no script, approving`);
  } else {
    const note = `.overseer/notes/${task}.md`;
    steps = [
      ["write", note, `Work on ${task} (${action}, attempt ${attempt}).\n`],
      ["submit", `Work on ${task}`],
    ];
    log(`${action} attempt ${attempt}: no script, default note and submit`);
  }
  for (const [name, ...args] of steps) await runStep(name, args);
}

await main();
