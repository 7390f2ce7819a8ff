import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import {
  createScratchDatabase,
  LATEST_MIGRATION,
  migrateDown,
  pendingMigrations,
  requireProject,
  type ScratchDatabase,
} from "@overseer/db";
import { initBareRepo, runGit } from "@overseer/git";
import { openPullRequest } from "@overseer/test-support";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliIo, runCli } from "../src/index.ts";

let scratch: ScratchDatabase;
let dir: string;
let repo: string;

function io(): CliIo & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return {
    stdout,
    stderr,
    out: (l) => stdout.push(l),
    err: (l) => stderr.push(l),
    env: { DATABASE_URL: scratch.url, REDIS_URL: "redis://127.0.0.1:6379", PATH: process.env.PATH },
    cwd: dir,
  };
}

/** The one stderr line of a verb on the local path: it names the database it used. */
const VIA_LOCAL = expect.stringMatching(/^via the local database 127\.0\.0\.1:5432\/\S+ \(DATABASE_URL; /);

/** Every row of every table, to prove a command wrote nothing. */
async function snapshot(): Promise<string> {
  const tables = [
    "projects",
    "tasks",
    "task_dependencies",
    "runs",
    "events",
    "decisions",
    "incidents",
    "leases",
  ] as const;
  const rows = await Promise.all(tables.map((t) => scratch.db.selectFrom(t).selectAll().execute()));
  return JSON.stringify(rows);
}

beforeAll(async () => {
  scratch = await createScratchDatabase();
  dir = await mkdtemp(path.join(tmpdir(), "overseer-cli-"));
  repo = path.join(dir, "repo.git");
  await initBareRepo(repo, { initialFiles: { "README.md": "x\n" }, branch: "main" });
  await writeFile(path.join(dir, "runner.json"), JSON.stringify({ argv: [], max_prompt_chars: 80000 }));
  await writeFile(
    path.join(dir, "tasks.yaml"),
    [
      "tasks:",
      "  - {id: S00-001, title: First, scope: ['src/**'], body: 'Do the first thing.'}",
      "  - {id: S00-002, title: Second, prerequisites: [S00-001]}",
      "  - {id: S01-001, title: Later stage, priority: 5}",
    ].join("\n"),
  );
  await writeFile(
    path.join(dir, "cycle.yaml"),
    [
      "- {id: A-1, title: a, prerequisites: [C-1]}",
      "- {id: B-1, title: b, prerequisites: [A-1]}",
      "- {id: C-1, title: c, prerequisites: [B-1]}",
    ].join("\n"),
  );
});

afterAll(async () => {
  await scratch?.drop();
  await rm(dir, { recursive: true, force: true });
});

describe("overseer CLI (local verbs)", () => {
  it("init registers a project from a repository and a runner config", async () => {
    const out = io();
    const code = await runCli(
      ["init", "--project", "demo", "--repo", repo, "--config", "runner.json", "--objective", "Ship it"],
      out,
    );
    expect(out.stderr).toEqual([VIA_LOCAL]);
    expect(code).toBe(0);
    const project = await scratch.db.selectFrom("projects").selectAll().executeTakeFirstOrThrow();
    expect(project).toMatchObject({
      id: "demo",
      repo,
      branch: "main",
      objective: "Ship it",
      repo_kind: "bare",
    });
    expect(out.stdout.join("\n")).not.toContain("overseer/main");
  });

  it("init on a working copy records it, creates overseer/main at main and says how to merge it; --update keeps it", async () => {
    const copy = path.join(dir, "copy");
    await runGit(["clone", "--quiet", "--", repo, copy], { cwd: dir });
    const out = io();
    expect(await runCli(["init", "--project", "mine", "--repo", copy, "--config", "runner.json"], out)).toBe(
      0,
    );
    expect(out.stderr).toEqual([VIA_LOCAL]);
    expect(out.stdout.join("\n")).toContain(
      `${copy} is a working copy, which Overseer never writes to: approved work lands on overseer/main; bring it into your branch with \`git merge overseer/main\`.`,
    );
    expect(await requireProject(scratch.db, "mine")).toMatchObject({
      repo_kind: "working_copy",
      branch: "main",
    });
    const heads = await runGit(["rev-parse", "refs/heads/main", "refs/heads/overseer/main"], { cwd: copy });
    const [main, integration] = heads.stdout.trim().split("\n");
    expect(integration).toBe(main);
    expect((await runGit(["symbolic-ref", "HEAD"], { cwd: copy })).stdout.trim()).toBe("refs/heads/main");

    // A project recorded as remote before repository kinds existed is corrected by --update.
    await scratch.db.updateTable("projects").set({ repo_kind: "remote" }).where("id", "=", "mine").execute();
    expect(await runCli(["init", "--project", "mine", "--update"], io())).toBe(0);
    expect((await requireProject(scratch.db, "mine")).repo_kind).toBe("working_copy");
  });

  it("init refuses a bad project id and an invalid runner config with exit 2", async () => {
    expect(await runCli(["init", "--project", "Bad Id", "--repo", repo], io())).toBe(2);
    await writeFile(path.join(dir, "bad.json"), JSON.stringify({ argv: "codex", timeout_seconds: -1 }));
    const out = io();
    expect(await runCli(["init", "--project", "other", "--repo", repo, "--config", "bad.json"], out)).toBe(2);
    expect(out.stderr.join("\n")).toMatch(/argv/);
    expect(out.stderr.join("\n")).toMatch(/timeout_seconds/);
  });

  it("init --agent writes a preset: bypassed CLI sandbox, key in secrets, API host allow-listed", async () => {
    const out = io();
    // No codex on this PATH: init says how to add the CLI (the image's AGENT_CLIS build arg).
    out.env = { ...out.env, OPENAI_API_KEY: "sk-test-preset-key-123", PATH: path.join(dir, "no-such-bin") };
    const code = await runCli(
      [
        "init",
        "--project",
        "codex-preset",
        "--repo",
        repo,
        "--agent",
        "codex",
        "--model",
        "gpt-test",
        "--base-url",
        "https://llm.corp.example:8443/v1",
      ],
      out,
    );
    expect(out.stderr).toEqual([
      expect.stringContaining(
        "codex (@openai/codex) is not on this machine's PATH, so a worker sharing it cannot run this project's agent. Add the CLI at a pinned version: in the Overseer image, build it with --build-arg AGENT_CLIS=\"@openai/codex@VERSION\"",
      ),
      VIA_LOCAL,
    ]);
    expect(code).toBe(0);
    const config = (await requireProject(scratch.db, "codex-preset")).runner_config as Record<
      string,
      unknown
    >;
    expect(config.agent).toBe("codex");
    expect(config.argv).toEqual(
      expect.arrayContaining([
        "exec",
        "--json",
        "--dangerously-bypass-approvals-and-sandbox",
        "gpt-test",
        "-",
      ]),
    );
    expect((config.argv as string[]).join(" ")).toContain('base_url="https://llm.corp.example:8443/v1"');
    expect(config.secrets).toEqual({ OPENAI_API_KEY: "sk-test-preset-key-123" });
    expect(config.network_allow_hosts).toEqual(["llm.corp.example:8443"]);
    expect(config.transition_linger_seconds).toBeGreaterThan(1);
  });

  it("init --agent claude without a key warns and a --config file overrides preset keys", async () => {
    await writeFile(path.join(dir, "claude-extra.json"), JSON.stringify({ argv: ["my-claude-wrapper"] }));
    const out = io();
    const code = await runCli(
      [
        "init",
        "--project",
        "claude-preset",
        "--repo",
        repo,
        "--agent",
        "claude",
        "--config",
        "claude-extra.json",
      ],
      out,
    );
    expect(code).toBe(0);
    expect(out.stderr.join("\n")).toContain("ANTHROPIC_API_KEY is not set");
    const config = (await requireProject(scratch.db, "claude-preset")).runner_config as Record<
      string,
      unknown
    >;
    expect(config.argv).toEqual(["my-claude-wrapper"]);
    expect(config.network_allow_hosts).toEqual(["api.anthropic.com"]);
    expect(config.env).toMatchObject({ IS_SANDBOX: "1", ANTHROPIC_BASE_URL: "https://api.anthropic.com" });
  });

  it("init --agent copilot --base-url: the gateway's key variable is the one read and named", async () => {
    const args = ["--agent", "copilot", "--base-url", "https://llm.corp.example/v1"];
    const missing = io();
    missing.env = { ...missing.env, COPILOT_GITHUB_TOKEN: "ghu-not-used-by-a-gateway" };
    expect(await runCli(["init", "--project", "copilot-gw", "--repo", repo, ...args], missing)).toBe(0);
    expect(missing.stderr.join("\n")).toContain("COPILOT_PROVIDER_API_KEY is not set");
    const out = io();
    // A copilot on PATH: no warning about a missing CLI.
    const bin = path.join(dir, "copilot-bin");
    await mkdir(bin, { recursive: true });
    await writeFile(path.join(bin, "copilot"), "#!/bin/sh\n", { mode: 0o755 });
    out.env = { ...out.env, COPILOT_PROVIDER_API_KEY: "sk-gateway-key-123", PATH: bin };
    expect(await runCli(["init", "--project", "copilot-gw2", "--repo", repo, ...args], out)).toBe(0);
    expect(out.stderr).toEqual([VIA_LOCAL]);
    const config = (await requireProject(scratch.db, "copilot-gw2")).runner_config as Record<string, unknown>;
    expect(config.secrets).toEqual({ COPILOT_PROVIDER_API_KEY: "sk-gateway-key-123" });
    expect(config.env).toMatchObject({ COPILOT_PROVIDER_BASE_URL: "https://llm.corp.example/v1" });
    expect(config.network_allow_hosts).toEqual(["llm.corp.example"]);
  });

  it("init refuses an unknown agent and a host list the runs would refuse, with exit 2", async () => {
    const unknown = io();
    expect(await runCli(["init", "--project", "x1", "--repo", repo, "--agent", "cursor"], unknown)).toBe(2);
    expect(unknown.stderr.join("\n")).toContain(
      "--agent must be one of codex, claude, opencode, gemini, copilot",
    );
    await writeFile(
      path.join(dir, "hosts.json"),
      JSON.stringify({ argv: ["x"], network_allow_hosts: ["https://llm.corp.example/v1"] }),
    );
    const bad = io();
    expect(await runCli(["init", "--project", "x2", "--repo", repo, "--config", "hosts.json"], bad)).toBe(2);
    expect(bad.stderr.join("\n")).toMatch(/network_allow_hosts\[0\]: expected a host name/);
  });

  it("init refuses repository locations that would make git run a command, with exit 2", async () => {
    for (const hostile of ["ext::sh -c touch% /tmp/pwned", "ssh://-oProxyCommand=touch%20x/repo"]) {
      const out = io();
      expect(await runCli(["init", "--project", "hostile", "--repo", hostile], out)).toBe(2);
      expect(out.stderr.join("\n")).toMatch(/remote helper|starting with -/);
    }
  });

  it("a task file with a cycle exits 2, prints the cycle, and imports nothing", async () => {
    const before = await snapshot();
    const out = io();
    expect(await runCli(["task", "import", "cycle.yaml", "--project", "demo"], out)).toBe(2);
    expect(out.stderr.join("\n")).toContain("A-1 -> C-1 -> B-1 -> A-1");
    expect(await snapshot()).toBe(before);
  });

  it("task import and task list", async () => {
    expect(await runCli(["task", "import", "tasks.yaml", "--project", "demo"], io())).toBe(0);
    const out = io();
    expect(await runCli(["task", "list", "--project", "demo", "--json"], out)).toBe(0);
    const tasks = JSON.parse(out.stdout.join("\n")) as { id: string; prerequisites: string[] }[];
    expect(tasks.map((t) => t.id)).toEqual(["S00-001", "S00-002", "S01-001"]);
    expect(tasks[1]?.prerequisites).toEqual(["S00-001"]);
    expect(await runCli(["task", "list", "--status", "nonsense"], io())).toBe(2);
  });

  it("start --dry-run prints the first runnable task and its prompt size, writes nothing and needs no harness", async () => {
    const before = await snapshot();
    const out = io();
    expect(await runCli(["start", "--dry-run", "--project", "demo"], out)).toBe(0);
    expect(out.stdout.join("\n")).toMatch(
      /first runnable task S01-001 "Later stage" \(execute, role general\); prompt \d+ chars \(max_prompt_chars 80000\)/,
    );
    const staged = io();
    expect(await runCli(["start", "--dry-run", "--project", "demo", "--stage", "S00"], staged)).toBe(0);
    expect(staged.stdout.join("\n")).toContain("first runnable task S00-001");
    expect(await snapshot()).toBe(before);
  });

  it("start makes the project active with the session budget", async () => {
    expect(await runCli(["start", "--project", "demo", "--max-sessions", "7"], io())).toBe(0);
    const project = await scratch.db
      .selectFrom("projects")
      .selectAll()
      .where("id", "=", "demo")
      .executeTakeFirstOrThrow();
    expect(project).toMatchObject({ status: "active", sessions_limit: 7, sessions_used: 0 });
  });

  it("mission start on the local database: a planning task and its bounds; bad flags name what to type", async () => {
    const refusals: [string[], string][] = [
      [["--objective", "x"], "--project is required"],
      [["--project", "demo", "--objective", "  "], "--objective TEXT is required and may not be empty"],
      [["--project", "demo", "--objective", "x", "--stage", "stage one"], "--stage must be"],
      [
        ["--project", "demo", "--objective", "x", "--budget-usd", "free"],
        '--budget-usd expects a positive number of dollars, received "free"',
      ],
    ];
    for (const [args, message] of refusals) {
      const out = io();
      expect(await runCli(["mission", "start", ...args], out), args.join(" ")).toBe(2);
      expect(out.stderr.join("\n")).toContain(message);
    }
    const before = await snapshot();
    const missing = io();
    expect(await runCli(["mission", "start", "--project", "nope", "--objective", "x"], missing)).not.toBe(0);
    expect(missing.stderr.join("\n")).toContain("nope");
    expect(await snapshot()).toBe(before);

    const out = io();
    const args = [
      "mission",
      "start",
      "--project",
      "demo",
      "--objective",
      "Add a CSV export",
      "--max-rounds",
      "3",
    ];
    expect(await runCli([...args, "--budget-usd", "2.5", "--max-sessions", "5"], out)).toBe(0);
    expect(out.stderr).toEqual([VIA_LOCAL]);
    expect(out.stdout).toEqual([
      "mission started on demo: planning task MISSION-R1, at most 3 round(s), max_sessions 5, budget_usd 2.5",
    ]);
    const tasks = await scratch.db
      .selectFrom("tasks")
      .select(["id", "kind"])
      .where("project_id", "=", "demo")
      .execute();
    expect(tasks).toContainEqual({ id: "MISSION-R1", kind: "plan" });
    // A mission already under way is the domain's refusal: exit 1 with its reason.
    const again = io();
    expect(await runCli(args, again)).toBe(1);
    expect(again.stderr.join("\n")).toMatch(/mission/i);
  });

  it("doctor reports one line per check and fails on an unconfigured harness", async () => {
    const out = io();
    const code = await runCli(["doctor"], out);
    const text = out.stdout.join("\n");
    expect(text).toMatch(/OK\s+postgres/);
    expect(text).toMatch(/OK\s+migrations/);
    expect(text).toMatch(/OK\s+redis/);
    expect(text).toMatch(/OK\s+git/);
    expect(text).toMatch(/OK\s+sandbox bwrap/);
    expect(text).toMatch(/OK\s+sandbox probe: write outside denied/);
    expect(text).toMatch(/FAIL\s+demo: harness general\/execute\s+not configured/);
    expect(code).toBe(1);
  });

  it("doctor names the fix of every failing check: a missing database, a Redis that is down", async () => {
    const out = io();
    const missing = new URL(scratch.url);
    missing.pathname = `/${scratch.name}_missing`;
    // Nothing listens on port 1 on loopback, so the connection is refused at once.
    out.env = { ...out.env, DATABASE_URL: missing.toString(), REDIS_URL: "redis://127.0.0.1:1" };
    expect(await runCli(["doctor", "--json"], out)).toBe(1);
    const report = JSON.parse(out.stdout.join("\n")) as {
      checks: { name: string; status: string; fix?: string }[];
    };
    const byName = new Map(report.checks.map((c) => [c.name, c]));
    expect(byName.get("postgres")?.status).toBe("fail");
    expect(byName.get("postgres")?.fix).toMatch(
      new RegExp(`database ${missing.pathname.slice(1)} does not exist: run \`overseer init`),
    );
    expect(byName.get("redis")?.status).toBe("fail");
    expect(byName.get("redis")?.fix).toMatch(/start Redis/);
    for (const check of report.checks.filter((c) => c.status === "fail"))
      expect(check.fix, check.name).toBeTruthy();
  });

  it("unknown commands and bad flags are usage errors", async () => {
    expect(await runCli(["frobnicate"], io())).toBe(2);
    expect(await runCli(["task", "list", "--nope"], io())).toBe(2);
    expect(await runCli([], io())).toBe(2);
  });

  it("token create prints a token once and stores only its hash", async () => {
    const out = io();
    expect(await runCli(["token", "create", "--scope", "operate"], out)).toBe(0);
    const token = out.stdout[0] ?? "";
    expect(token).toMatch(/^ovr_/);
    const rows = await scratch.db.selectFrom("api_tokens").selectAll().execute();
    expect(JSON.stringify(rows)).not.toContain(token);
  });

  it("migrate applies pending migrations, then reports the schema current", async () => {
    // Every migration from the empty database, not a copy of the run's migrated template.
    const target = await createScratchDatabase(undefined, undefined, { template: false });
    try {
      await migrateDown(target.db);
      expect(await pendingMigrations(target.db)).toEqual([LATEST_MIGRATION]);
      const first = io();
      first.env = { ...first.env, DATABASE_URL: target.url };
      expect(await runCli(["migrate"], first)).toBe(0);
      expect(first.stdout).toEqual([
        `applied 1 migration(s): ${LATEST_MIGRATION}; schema now at ${LATEST_MIGRATION}`,
      ]);
      expect(await pendingMigrations(target.db)).toEqual([]);
      const again = io();
      again.env = { ...again.env, DATABASE_URL: target.url };
      expect(await runCli(["migrate"], again)).toBe(0);
      expect(again.stdout).toEqual([`schema current (${LATEST_MIGRATION})`]);
      expect(await runCli(["migrate", "--force"], io())).toBe(2);
    } finally {
      await target.drop();
    }
  });
});

describe("overseer task list with pull requests", () => {
  it("filters pr_open and prints each task's pull request", async () => {
    const { applyTransition, createProject } = await import("@overseer/db");
    await createProject(scratch.db, { id: "prs", repo, runnerConfig: {} });
    const db = scratch.db;
    await applyTransition(db, "prs", {
      kind: "import-tasks",
      tasks: [
        {
          id: "P-1",
          stage: "S00",
          title: "Opened",
          body: "",
          role: "general",
          scope: ["**"],
          prerequisites: [],
          acceptance: [],
          priority: 0,
        },
        {
          id: "P-2",
          stage: "S00",
          title: "Plain",
          body: "",
          role: "general",
          scope: ["**"],
          prerequisites: [],
          acceptance: [],
          priority: 0,
        },
      ],
      by: "test",
    });
    await applyTransition(db, "prs", { kind: "start-project", by: "test", stage: null, sessionsLimit: null });
    const taskId = await openPullRequest(db, "prs", { number: 5, url: "https://forge.test/5", head: "h1" });
    const out = io();
    expect(await runCli(["task", "list", "--project", "prs", "--status", "pr_open"], out)).toBe(0);
    expect(out.stdout[0]).toMatch(/^ID\s+STATUS\s+KIND\s+STAGE\s+PRIO\s+AFTER\s+PR\s+TITLE/);
    const rows = out.stdout.filter((line) => line.includes("pr_open"));
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatch(new RegExp(`^${taskId}\\s+pr_open\\s+work\\s+S00\\s+0\\s+#5 open\\s+Opened`));
  });
});
