/**
 * The README's "Run it on your own project", typed as a newcomer types it, with the real Codex
 * CLI (PINNED_AGENTS) and the production build:
 *
 * 1. `npm run build` (scripts/build.mjs), `npm install -g ./dist` (into a scratch prefix, put on
 *    PATH) and `overseer up --workers 2` from PATH;
 * 2. a second terminal with only OVERSEER_URL/OVERSEER_TOKEN (and the agent's key): no
 *    DATABASE_URL, so every verb goes through the gateway;
 * 3. `overseer init` of the user's own working copy (`main` checked out, uncommitted work in it)
 *    with `--agent codex --model gpt-5-codex --base-url http://…`, `overseer doctor`, and
 *    `overseer doctor --deep` on the cluster host;
 * 4. `overseer task import` of two tasks that edit the same file, B requiring A, and `start`;
 * 5. `overseer status`; the work lands on `overseer/main` in a straight line, the user's tree,
 *    index and HEAD are untouched, and `git merge overseer/main` brings it in.
 *
 * The model is the only double (mock-model-server.ts), on a plain-HTTP private address (the
 * host's loopback) that the workers reach through the egress proxy once
 * OVERSEER_EGRESS_ALLOW_PRIVATE opts them in, and it thinks for {@link PAUSE_MS} after the first
 * event of every answer that calls a tool: longer than the 10 s that once dropped such streams.
 *
 * Also through the same cluster and CLI: a budget with no `prices` in `--config` pauses the
 * project at it (the price table prices the preset's default model; an unpriced model is warned
 * about at `init`), and a run stopped while its model hangs keeps the usage of the calls it made.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { runGit } from "@overseer/git";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClusterFixture } from "../support/cluster-fixture.ts";
import { buildProduction, productionBuildDir } from "../support/production-build.ts";
import { startUp, type UpProcess } from "../support/up-process.ts";
import { allTasks, waitFor } from "../support/wait-for.ts";
import { workingCopyState } from "../support/working-copy-state.ts";
import { ensureAgent, type InstalledAgent, PINNED_AGENTS } from "./agent-install.ts";
import { MockModelServer, RESPONSE_USAGE } from "./mock-model-server.ts";

/** How long the model pauses mid-stream: above the 10 s inactivity bound plain HTTP once had. */
const PAUSE_MS = 12_000;
/** What the script of a task the model never finishes prints; the model hangs on the next turn. */
const HANG_MARKER = "S03-001 waits for the model";

const CALC = "export const add = (a, b) => a + b;\n";
const SUB = "export const sub = (a, b) => a - b;";
const MUL = "export const mul = (a, b) => a * b;";

/**
 * What the model's tool call runs, by task: A appends `sub` to src/calc.js; B checks A's line is
 * in its checkout (it fails without it, as an agent that reads the file first would) and appends
 * `mul`; the budget task adds a file; S03-001 only prints and waits for the model. Reviews approve.
 */
const SCRIPT = `set -e
if [ "$OVERSEER_ACTION" = review ]; then
  overseer-agent approve --feedback "The change does what the task asks."
  exit 0
fi
case "$OVERSEER_TASK_ID" in
  S01-001) grep -q "a + b" src/calc.js; echo '${SUB}' >> src/calc.js; msg="Add sub";;
  S01-002) grep -q "a - b" src/calc.js; echo '${MUL}' >> src/calc.js; msg="Add mul";;
  S02-001) echo budget > budget.txt; msg="Add budget.txt";;
  *) echo "$OVERSEER_TASK_ID waits for the model"; exit 0;;
esac
printf '%s\\n' "$msg" > /tmp/overseer-msg
overseer-agent submit --message-file /tmp/overseer-msg`;

const TASKS_YAML = `tasks:
  - id: S01-001
    title: Add sub
    scope: ["src/calc.js"]
    acceptance: ["src/calc.js exports sub"]
    body: Add a sub function next to add in src/calc.js.
  - id: S01-002
    title: Add mul
    scope: ["src/calc.js"]
    prerequisites: [S01-001]
    acceptance: ["src/calc.js exports mul"]
    body: Add a mul function after sub in src/calc.js.
`;

const model = new MockModelServer({ script: SCRIPT, pauseMs: PAUSE_MS, hangAfter: HANG_MARKER });
const cluster = new ClusterFixture();
const outDir = productionBuildDir();
let scratch: string;
let codex: InstalledAgent;
let up: UpProcess;
/** The second terminal: the installed bin on PATH, the gateway's URL and token, nothing else. */
let terminal: Record<string, string>;
const timings: Record<string, number> = {};

interface Typed {
  code: number;
  stdout: string;
  stderr: string;
}

/** Types `overseer ARGS` in the second terminal (with `env` added, e.g. the agent's key). */
async function overseer(args: string[], env: Record<string, string> = {}): Promise<Typed> {
  const result = await execa("overseer", args, {
    cwd: scratch,
    env: { ...terminal, ...env },
    extendEnv: false,
    reject: false,
    timeout: 120_000,
  });
  return { code: result.exitCode ?? -1, stdout: result.stdout, stderr: result.stderr };
}

/** Like {@link overseer}, failing with everything it printed unless it exits 0. */
async function ok(args: string[], env: Record<string, string> = {}): Promise<Typed> {
  const typed = await overseer(args, env);
  expect(typed.code, `overseer ${args.join(" ")}\n${typed.stdout}\n${typed.stderr}`).toBe(0);
  return typed;
}

const initArgs = (project: string, repo: string, modelName: string) => [
  "init",
  ...["--project", project, "--repo", repo, "--branch", "main"],
  ...["--agent", "codex", "--model", modelName, "--base-url", `${model.origin}/v1`],
  ...["--agent-bin", codex.binPath],
];
const KEY = { OPENAI_API_KEY: "sk-own-project-0123456789" };

async function status(project: string) {
  const typed = await ok(["status", "--project", project, "--json"]);
  return JSON.parse(typed.stdout) as {
    status: string;
    status_reason: string | null;
    landing_branch: string;
    counts: Record<string, number>;
    usage: { tokens_in: number; tokens_out: number; cost_usd: number | null; budget_usd: number | null };
    text: string;
  };
}

/** The runs of a project as stored (the test's view of Postgres, for figures the CLI rounds). */
function runsOf(project: string) {
  return cluster.scratch.db
    .selectFrom("runs")
    .select(["task_id", "action", "status", "tokens_in", "tokens_out", "cost_usd"])
    .where("project_id", "=", project)
    .orderBy("created_at")
    .execute();
}

beforeAll(async () => {
  codex = await ensureAgent(PINNED_AGENTS.find((a) => a.kind === "codex") as InstalledAgent);
  await model.start();
  await cluster.setup();
  scratch = await mkdtemp(path.join(tmpdir(), "own-project-"));

  // Step 1: build, install the bin, start the cluster from PATH.
  let started = performance.now();
  await buildProduction(outDir);
  const prefix = path.join(scratch, "npm-global");
  await execa("npm", ["install", "-g", "--prefix", prefix, outDir], { cwd: scratch });
  timings.buildAndInstallMs = Math.round(performance.now() - started);
  const PATH = `${path.join(prefix, "bin")}:${process.env.PATH ?? "/usr/bin:/bin"}`;
  started = performance.now();
  up = startUp(
    ["--workers", "2", "--port", "0"],
    { ...cluster.env({ OVERSEER_EGRESS_ALLOW_PRIVATE: "127.0.0.1/32" }), PATH },
    { installed: true },
  );
  const url = (await up.waitFor(/overseer up: gateway (http:\/\/\S+)/))[1] as string;
  const token = (await up.waitFor(/overseer up: token (ovr_\S+)/))[1] as string;
  timings.upMs = Math.round(performance.now() - started);
  terminal = { PATH, HOME: process.env.HOME ?? "/root", OVERSEER_URL: url, OVERSEER_TOKEN: token };
});

afterAll(async () => {
  if (up && up.child.exitCode === null) {
    up.child.kill("SIGTERM");
    await Promise.race([up.exited, new Promise((resolve) => setTimeout(resolve, 30_000))]);
    if (up.child.exitCode === null) up.child.kill("SIGKILL");
  }
  await model.close();
  await cluster.teardown();
  await rm(outDir, { recursive: true, force: true });
  if (scratch) await rm(scratch, { recursive: true, force: true });
  process.stdout.write(`own-project timings ${JSON.stringify(timings)}\n`);
});

describe("README: run it on your own project (real Codex, working copy, a model that pauses 12 s)", () => {
  it("`overseer` is on PATH from the build and answers as the README shows", async () => {
    expect((await ok(["--help"])).stdout).toMatch(/^Usage: overseer <command>/);
    // `status` before any project: through the gateway, which says there is none yet.
    const none = await overseer(["status"]);
    expect(none.stderr).toContain("init");
  });

  it("init, doctor, task import, start, status: dependent same-file tasks land on overseer/main", async () => {
    const started = performance.now();
    // The user's own clone, `main` checked out, with work of their own in progress.
    const repo = path.join(scratch, "myapp");
    await mkdir(path.join(repo, "src"), { recursive: true });
    await writeFile(path.join(repo, "README.md"), "# myapp\n");
    await writeFile(path.join(repo, "src/calc.js"), CALC);
    const git = async (...args: string[]) => (await runGit(args, { cwd: repo })).stdout.trim();
    await git("init", "-q", "-b", "main");
    await git("add", ".");
    await git("-c", "user.name=Me", "-c", "user.email=me@example.com", "commit", "-q", "-m", "Initial");
    await writeFile(path.join(repo, "README.md"), "# myapp, being edited\n");
    await writeFile(path.join(repo, "notes.txt"), "untracked notes\n");
    const before = await workingCopyState(repo);

    // Step 3: register the working copy with the agent; the key comes from the environment.
    const init = await ok(initArgs("myapp", repo, "gpt-5-codex"), KEY);
    expect(init.stderr).toContain(url());
    expect(init.stderr).not.toContain("warning");
    expect(init.stdout).toContain(`${repo} is a working copy, which Overseer never writes to`);
    expect(init.stdout).toContain("git merge overseer/main");
    const doctor = await ok(["doctor"]);
    expect(doctor.stdout).toMatch(/myapp: general\/execute in the sandbox/);
    // --deep runs the CLI with the project's key: on the cluster host, with its database.
    const deep = await ok(["doctor", "--deep", "--project", "myapp"], {
      DATABASE_URL: cluster.scratch.url,
      OVERSEER_EGRESS_ALLOW_PRIVATE: "127.0.0.1/32",
    });
    expect(deep.stdout).toMatch(/myapp: general\/execute model call/);

    // Step 4: the task graph, then start.
    await writeFile(path.join(scratch, "tasks.yaml"), TASKS_YAML);
    await ok(["task", "import", "tasks.yaml", "--project", "myapp"]);
    await ok(["start", "--project", "myapp"]);
    await cluster.waitForProject(
      "myapp",
      (s) => {
        if (s.project.status === "paused" || s.tasks.size > 2)
          throw new Error(`myapp stopped short: ${JSON.stringify(s.project)}\n${up.output().slice(-4000)}`);
        return s.tasks.size === 2 && allTasks(s, ["done"]);
      },
      300_000,
    );
    timings.readmeFlowMs = Math.round(performance.now() - started);

    // Step 5: status names where the work landed, and what it cost (the table prices gpt-5-codex).
    const shown = await status("myapp");
    expect(shown.landing_branch).toBe("overseer/main");
    expect(shown.counts.done).toBe(2);
    expect(shown.text).toContain("overseer/main");
    expect(shown.usage.tokens_in).toBeGreaterThan(0);
    expect(shown.usage.cost_usd).toBeGreaterThan(0);
    // One executor and one reviewer run per task, none retried: no stream was dropped.
    const runs = await runsOf("myapp");
    expect(runs.map((r) => `${r.task_id} ${r.action} ${r.status}`)).toEqual([
      "S01-001 execute finished",
      "S01-001 review finished",
      "S01-002 execute finished",
      "S01-002 review finished",
    ]);

    // A straight line on overseer/main; main, HEAD, the index and the user's files untouched.
    expect(await git("log", "--format=%s", "main..overseer/main")).toBe("Add mul\nAdd sub");
    expect(await git("rev-list", "--merges", "overseer/main")).toBe("");
    expect(await git("show", "overseer/main:src/calc.js")).toBe(`${CALC}${SUB}\n${MUL}`);
    expect(await workingCopyState(repo)).toEqual(before);
    // Bringing the work in, as the README says: a fast-forward that keeps the user's edits.
    await git("merge", "--ff-only", "-q", "overseer/main");
    expect(await readFile(path.join(repo, "src/calc.js"), "utf8")).toBe(`${CALC}${SUB}\n${MUL}\n`);
    expect(await readFile(path.join(repo, "README.md"), "utf8")).toBe("# myapp, being edited\n");
    expect(await git("status", "--porcelain")).toBe("M README.md\n?? notes.txt");
  }, 480_000);

  it("a budget with no prices in --config pauses at it: the price table prices gpt-5-codex", async () => {
    const repo = await cluster.createRepo("budget");
    await writeFile(path.join(scratch, "budget.json"), JSON.stringify({ budget_usd: 0.001 }));
    // A model nothing prices: init says the budget can never be reached.
    const unpriced = await ok([...initArgs("unpriced", repo, "mock-codex"), "--config", "budget.json"], KEY);
    expect(unpriced.stderr).toContain("warning: budget_usd 0.001 can never be reached");
    const priced = await ok([...initArgs("budget", repo, "gpt-5-codex"), "--config", "budget.json"], KEY);
    expect(priced.stderr).not.toContain("warning");
    await writeFile(
      path.join(scratch, "budget-tasks.yaml"),
      'tasks:\n  - id: S02-001\n    title: Add budget.txt\n    scope: ["budget.txt"]\n    body: Add budget.txt.\n',
    );
    await ok(["task", "import", "budget-tasks.yaml", "--project", "budget"]);
    await ok(["start", "--project", "budget"]);
    await cluster.waitForProject("budget", (s) => s.project.status === "paused", 180_000);
    const shown = await status("budget");
    expect(shown.status).toBe("paused");
    expect(shown.status_reason).toMatch(/budget_usd/);
    expect(shown.usage.budget_usd).toBe(0.001);
    // One model call (1000 tokens in, 200 of them cached, 50 out) at the table's gpt-5-codex price.
    const oneCall =
      ((RESPONSE_USAGE.input - RESPONSE_USAGE.cached) * 1.25 +
        RESPONSE_USAGE.cached * 0.125 +
        RESPONSE_USAGE.output * 10) /
      1e6;
    expect(shown.usage.cost_usd).toBeGreaterThanOrEqual(oneCall);
  }, 240_000);

  it("a run stopped while its model hangs keeps the usage of the calls it made", async () => {
    const repo = await cluster.createRepo("stopped");
    await ok(initArgs("stopped", repo, "gpt-5-codex"), KEY);
    await writeFile(
      path.join(scratch, "stopped-tasks.yaml"),
      "tasks:\n  - id: S03-001\n    title: Wait for the model\n    body: Print, then wait.\n",
    );
    await ok(["task", "import", "stopped-tasks.yaml", "--project", "stopped"]);
    await ok(["start", "--project", "stopped"]);
    // The model answered one call (with its usage) and now hangs on the next.
    await waitFor("the model to hang", () => model.requests.some((r) => r.hung), 120_000, 250);
    await ok(["stop", "stopped"]);
    const ended = await waitFor(
      "the stopped run to end",
      async () => (await runsOf("stopped")).find((r) => r.status !== "running"),
      60_000,
      250,
    );
    expect(ended.status).toBe("cancelled");
    const cancelSeenAt = Date.now();
    // The stop cancels the run in Postgres before its worker hears of it; the worker then reports
    // what the run spent (usage-tracker.ts). Read before that report, a cancelled run can show
    // no usage yet (the one CI failure, under load): the wait is for that report, the product's
    // own fact (bounded: a usage that never comes fails the case).
    const stopped = await waitFor(
      "the cancelled run's usage, reported by its worker at the cancel",
      async () => (await runsOf("stopped")).find((r) => r.status === "cancelled" && Number(r.tokens_in) > 0),
      30_000,
      250,
    );
    console.info(
      `cancelled run: usage at the cancel ${ended.tokens_in}, recorded ${Date.now() - cancelSeenAt} ms after it`,
    );
    expect(Number(stopped.tokens_in)).toBe(RESPONSE_USAGE.input);
    expect(Number(stopped.tokens_out)).toBe(RESPONSE_USAGE.output);
    expect(Number(stopped.cost_usd)).toBeGreaterThan(0);
    const shown = await status("stopped");
    expect(shown.usage.tokens_in).toBe(RESPONSE_USAGE.input);
  }, 240_000);
});

function url(): string {
  return terminal.OVERSEER_URL as string;
}
