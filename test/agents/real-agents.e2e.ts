import { runCli } from "@overseer/cli";
import { runGit } from "@overseer/git";
import { agentPresetConfig, parseRunnerConfig, presetKeyEnv } from "@overseer/project-config";
import { type Cidr, parseCidr } from "@overseer/run-contract";
import { TranscriptEntrySchema } from "@overseer/transcript";
import { startProject, TransitionApplier } from "@overseer/transitions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClusterFixture } from "../support/cluster-fixture.ts";
import { ensureAgent, type InstalledAgent, selectedAgents } from "./agent-install.ts";
import { COPILOT_BASE_PATH, COPILOT_REFUSED_KEY } from "./mock-copilot-api.ts";
import { MockModelServer } from "./mock-model-server.ts";
import { TranscriptViews } from "./transcript-views.ts";

/**
 * The real agent CLIs of PINNED_AGENTS, installed from npm (pinned, cached outside the repo),
 * driven through a whole task by a real cluster: coordinator, worker, bwrap sandbox, egress
 * proxy, git, Postgres and Redis. The runner config is exactly what `overseer init --agent`
 * writes. Only the MODEL is a double: a local server speaking each CLI's API (mock-model-server.ts),
 * reached through the egress proxy like a company gateway on a private address, which the
 * worker opts in to (OVERSEER_EGRESS_ALLOW_PRIVATE).
 *
 * Checked for each CLI: executor → independent reviewer → done, the work landed on main, the
 * login shell Codex uses found overseer-agent, usage harvested from the CLI's own output and
 * stored per run and project, each run's stored transcript (the edit, the shell call and its
 * result, usage, the final message), and a budget pause triggered by that usage alone.
 */

const timings: Record<string, { installMs: number; cached: boolean; cycleMs?: number }> = {};
/** Where each CLI's usage is read (usage-harvester.ts in @overseer/harness). */
const USAGE_SOURCE: Record<string, string> = {
  codex: "codex session rollout token_usage_record",
  claude: "claude stream-json result",
  opencode: "opencode --format json step_finish",
  gemini: "gemini stream-json result",
  copilot: "copilot session-state events.jsonl",
};
/** Where each CLI's API is on the mock (its `--base-url`); `--base-url` selects Copilot's
 * bring-your-own-key provider (mock-copilot-api.ts). */
const BASE_PATH: Record<string, string> = { codex: "/v1", opencode: "/v1", copilot: COPILOT_BASE_PATH };
const PRICE = { input_usd_per_mtok: 10, output_usd_per_mtok: 30, cached_input_usd_per_mtok: 1 };

/** The model's edit in the cycle: the CLI's own file tool writes hello.txt before the shell call. */
const EDIT = { file: "hello.txt", content: "hello from a real agent CLI\n" };

let model: MockModelServer;
/** The model of the cycle test: the same script with the edit step first (mock-edit-step.ts). */
let editingModel: MockModelServer;
let cluster: ClusterFixture;
/** The run page and `overseer logs` over this cluster (transcript-views.ts). */
let views: TranscriptViews;
const installed = new Map<string, InstalledAgent>();

beforeAll(async () => {
  for (const agent of selectedAgents()) {
    const result = await ensureAgent(agent);
    installed.set(agent.kind, result);
    timings[agent.kind] = { installMs: result.installMs, cached: result.cached };
  }
  model = await new MockModelServer().start();
  editingModel = await new MockModelServer({ edit: EDIT }).start();
  cluster = await new ClusterFixture({
    egressAllowPrivate: [parseCidr("127.0.0.1/32") as Cidr],
  }).setup();
  await cluster.startCoordinator();
  await cluster.startWorker(1);
  views = await TranscriptViews.start(cluster);
});

afterAll(async () => {
  await views?.close();
  await cluster?.teardown();
  await model?.close();
  await editingModel?.close();
  process.stdout.write(`agent timings ${JSON.stringify(timings)}\n`);
});

function runnerConfigFor(
  agent: InstalledAgent,
  extra: Record<string, unknown> = {},
  server: MockModelServer = model,
) {
  const preset = agentPresetConfig(agent.kind, {
    model: `mock-${agent.kind}`,
    baseUrl: `${server.origin}${BASE_PATH[agent.kind] ?? ""}`,
    bin: agent.binPath,
    apiKey: `sk-mock-${agent.kind}-0123456789`,
  });
  return parseRunnerConfig(
    {
      ...preset,
      sandbox: { read_only_paths: [agent.prefix] },
      prices: { [`mock-${agent.kind}`]: PRICE },
      timeout_seconds: 180,
      attempts: 1,
      retry_backoff_seconds: 0.2,
      ...extra,
    },
    `test preset ${agent.kind}`,
  ) as unknown as Record<string, unknown>;
}

const TASK = {
  id: "S00-001",
  title: "Add hello.txt",
  scope: ["hello.txt"],
  acceptance: ["hello.txt says hello"],
  body: "Create hello.txt with a greeting.",
};

async function waitFor<T>(what: string, read: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** `overseer doctor --deep --json` for one project, as an operator on the worker's host runs it. */
async function doctorDeep(projectId: string) {
  const stdout: string[] = [];
  const code = await runCli(["doctor", "--deep", "--json", "--project", projectId], {
    out: (line) => stdout.push(line),
    err: () => undefined,
    env: {
      ...cluster.env({ OVERSEER_EGRESS_ALLOW_PRIVATE: "127.0.0.1/32" }),
      PATH: process.env.PATH,
    },
    cwd: process.cwd(),
  });
  const report = JSON.parse(stdout.join("\n")) as {
    checks: { name: string; status: string; detail: string; fix?: string }[];
  };
  return { code, report };
}

async function describeProject(projectId: string): Promise<string> {
  const db = cluster.scratch.db;
  const [project, tasks, events] = await Promise.all([
    db.selectFrom("projects").selectAll().where("id", "=", projectId).executeTakeFirst(),
    db
      .selectFrom("tasks")
      .select(["id", "status", "status_reason"])
      .where("project_id", "=", projectId)
      .execute(),
    db.selectFrom("events").selectAll().where("project_id", "=", projectId).orderBy("id").execute(),
  ]);
  return JSON.stringify({ project, tasks, events: events.slice(-8) }, null, 1).slice(0, 6000);
}

/**
 * Each run's stored transcript (run_transcripts, as the worker parsed the CLI's output or
 * Copilot's session file), the same entries as its live one, shows what the scripted model did:
 * the executor's edit with the CLI's own tool, its shell call with the command and its result
 * (exit 0: overseer-agent submitted), the usage, and the final "Done."; the reviewer's shell call
 * approving. It reads as that transcript on the run page and in `overseer logs`.
 */
async function expectStoredTranscripts(kind: string, projectId: string): Promise<void> {
  const stored = await cluster.scratch.db
    .selectFrom("run_transcripts")
    .innerJoin("runs", "runs.id", "run_transcripts.run_id")
    .select([
      "runs.id",
      "runs.action",
      "run_transcripts.agent",
      "run_transcripts.entries",
      "run_transcripts.truncated",
    ])
    .where("run_transcripts.project_id", "=", projectId)
    .orderBy("runs.created_at")
    .execute();
  expect(stored.map((t) => [t.action, t.agent, t.truncated])).toEqual([
    ["execute", kind, false],
    ["review", kind, false],
  ]);
  for (const [i, t] of stored.entries()) {
    const entries = (t.entries as unknown[]).map((e) => TranscriptEntrySchema.parse(e));
    const dump = JSON.stringify(entries).slice(0, 4000);
    // What watchers read while the run went (the entries its worker published and kept in
    // Redis) is the stored transcript, numbered alike: Copilot's from its session file too.
    const live = (await cluster.live.readTranscript(t.id)).map((e) => TranscriptEntrySchema.parse(e));
    expect(live, `${t.action}: the live transcript is the stored one`).toEqual(entries);
    const kinds = new Set(entries.map((e) => e.kind));
    const wanted = ["message", "tool_call", "tool_result", "usage", ...(i === 0 ? ["file_edit"] : [])];
    for (const k of wanted) expect(kinds, `${t.action}: ${k} in ${dump}`).toContain(k);
    const verb = t.action === "execute" ? "overseer-agent submit" : "overseer-agent approve";
    const shell = entries.find((e) => e.kind === "tool_call" && e.command?.includes("overseer-agent"));
    expect(shell, `${t.action}: the shell call names its command in ${dump}`).toBeDefined();
    expect(shell?.kind === "tool_call" ? shell.command : "").toContain(verb);
    const result = entries.find(
      (e) => e.kind === "tool_result" && shell?.kind === "tool_call" && e.callId === shell.callId,
    );
    // Gemini's stream-json shows a command's output, not its exit status.
    expect(result, `${t.action}: the command's result in ${dump}`).toMatchObject({
      exitCode: kind === "gemini" ? null : 0,
    });
    const last = entries.filter((e) => e.kind === "message" && e.role === "assistant").at(-1);
    expect(last, `${t.action}: the final message in ${dump}`).toMatchObject({ text: "Done." });
    if (i === 0) {
      const edit = entries.find((e) => e.kind === "file_edit");
      expect(edit?.kind === "file_edit" ? edit.path : "").toMatch(/(^|\/)hello\.txt$/);
    }
    // And it reads as a transcript where an operator looks: the run page and `overseer logs`.
    const run = { kind, runId: t.id, action: t.action, verb, edit: i === 0 ? EDIT.file : null };
    await views.expectRunPage(run);
    await views.expectLogs(run);
  }
}

describe.each(selectedAgents().map((a) => [a.kind] as const))("real agent CLI: %s", (kind) => {
  it("executes, is reviewed by a fresh agent, lands, and its usage is counted", async () => {
    const agent = installed.get(kind) as InstalledAgent;
    const projectId = `real-${kind}`;
    const started = performance.now();
    const repo = await cluster.addProject({
      id: projectId,
      tasks: [TASK],
      runnerConfig: runnerConfigFor(agent, {}, editingModel),
    });
    const db = cluster.scratch.db;
    await waitFor(
      `${kind}: task done`,
      async () => {
        const task = await db
          .selectFrom("tasks")
          .select(["status"])
          .where("project_id", "=", projectId)
          .executeTakeFirst();
        if (task?.status === "done") return true;
        const project = await db
          .selectFrom("projects")
          .select(["status"])
          .where("id", "=", projectId)
          .executeTakeFirst();
        if (project?.status === "paused" || task?.status === "blocked" || task?.status === "failed")
          throw new Error(`${kind}: the cycle stopped: ${await describeProject(projectId)}`);
        return undefined;
      },
      200_000,
    ).catch(async (error: Error) => {
      throw new Error(`${error.message}\n${await describeProject(projectId)}`);
    });
    timings[kind] = {
      ...(timings[kind] as { installMs: number; cached: boolean }),
      cycleMs: Math.round(performance.now() - started),
    };

    const { stdout } = await runGit(["show", "main:hello.txt"], { cwd: repo, timeoutMs: 10_000 });
    expect(stdout).toBe("hello from a real agent CLI\n");

    const runs = await db
      .selectFrom("runs")
      .select(["action", "agent_id", "tokens_in", "tokens_out", "cost_usd", "usage_source"])
      .where("project_id", "=", projectId)
      .orderBy("created_at")
      .execute();
    expect(runs.map((r) => r.action)).toEqual(["execute", "review"]);
    expect(new Set(runs.map((r) => r.agent_id)).size).toBe(2);
    for (const run of runs) {
      expect(Number(run.tokens_in), `${run.action} tokens in`).toBeGreaterThan(0);
      expect(Number(run.tokens_out), `${run.action} tokens out`).toBeGreaterThan(0);
      // Read from the CLI's own stream, not from what the agent passed to overseer-agent.
      expect(run.usage_source, `${run.action} usage source`).toBe(USAGE_SOURCE[kind]);
    }
    const project = await db
      .selectFrom("projects")
      .select(["tokens_in", "tokens_out", "cost_usd"])
      .where("id", "=", projectId)
      .executeTakeFirstOrThrow();
    expect(Number(project.tokens_in)).toBe(runs.reduce((sum, r) => sum + Number(r.tokens_in), 0));
    expect(Number(project.tokens_out)).toBe(runs.reduce((sum, r) => sum + Number(r.tokens_out), 0));
    expect(Number(project.cost_usd)).toBeGreaterThan(0); // the price table prices the mock model
    expect(editingModel.requests.some((r) => r.authorization?.includes(`sk-mock-${kind}-0123456789`))).toBe(
      true,
    );
    await expectStoredTranscripts(kind, projectId);
  });

  it("pauses the project on budget_usd from harvested usage alone", async () => {
    const agent = installed.get(kind) as InstalledAgent;
    const projectId = `budget-${kind}`;
    // The project's price table prices the mock model, so the spend comes from harvested tokens.
    const config = runnerConfigFor(agent, { budget_usd: 0.000001 });
    await cluster.addProject({ id: projectId, tasks: [TASK], runnerConfig: config, start: false });
    const db = cluster.scratch.db;
    await db.updateTable("projects").set({ budget_usd: 0.000001 }).where("id", "=", projectId).execute();
    await startProject(new TransitionApplier({ db }), projectId);
    const paused = await waitFor(
      `${kind}: budget pause`,
      async () => {
        const project = await db
          .selectFrom("projects")
          .select(["status", "status_reason", "cost_usd", "tokens_in"])
          .where("id", "=", projectId)
          .executeTakeFirst();
        return project?.status === "paused" ? project : undefined;
      },
      200_000,
    );
    expect(paused.status_reason).toMatch(/budget_usd/);
    expect(Number(paused.tokens_in)).toBeGreaterThan(0);
    expect(Number(paused.cost_usd)).toBeGreaterThan(0);
  });

  it("`overseer doctor --deep` probes the real CLI through the sandbox a run uses", async () => {
    const agent = installed.get(kind) as InstalledAgent;
    const projectId = `doctor-${kind}`;
    await cluster.addProject({
      id: projectId,
      tasks: [TASK],
      runnerConfig: runnerConfigFor(agent),
      start: false,
    });
    const answered = model.requests.length;
    const { code, report } = await doctorDeep(projectId);
    const probes = report.checks.filter((c) => c.name.startsWith(`${projectId}: general/execute `));
    expect(probes.map((c) => [c.name.slice(projectId.length + 18), c.status])).toEqual([
      // Plain doctor's check that the role's CLI is visible inside the run's sandbox comes first.
      ["in the sandbox", "ok"],
      ["version", "ok"],
      ["auth variables", "ok"],
      ["model call", "ok"],
    ]);
    expect(probes[1]?.detail).toContain(agent.version);
    expect(probes[2]?.detail).toBe(
      `set inside the sandbox: ${presetKeyEnv(kind, `${model.origin}${BASE_PATH[kind] ?? ""}`)}`,
    );
    // Copilot's usage comes from its session file, which doctor reads too.
    if (kind === "copilot") expect(probes[3]?.detail).toContain(`read from ${USAGE_SOURCE.copilot}`);
    // The call went through the egress proxy to the model with the project's key.
    expect(model.requests.length).toBeGreaterThan(answered);
    expect(code, JSON.stringify(report.checks.filter((c) => c.status === "fail"))).toBe(0);
  });
});

describe.runIf(selectedAgents().some((a) => a.kind === "copilot"))(
  "real agent CLI: copilot, its key refused by the gateway",
  () => {
    it("`overseer doctor --deep` names the refusal and its fix", async () => {
      const agent = installed.get("copilot") as InstalledAgent;
      const projectId = "refused-copilot";
      await cluster.addProject({
        id: projectId,
        tasks: [TASK],
        runnerConfig: {
          ...runnerConfigFor(agent),
          secrets: { COPILOT_PROVIDER_API_KEY: COPILOT_REFUSED_KEY },
        },
        start: false,
      });
      const { code, report } = await doctorDeep(projectId);
      const call = report.checks.find((c) => c.name === `${projectId}: general/execute model call`);
      expect(call?.status, JSON.stringify(call)).toBe("fail");
      // What the real CLI printed, classified: the refusal, not a network or sandbox problem.
      expect(call?.detail).toContain("the model API refused the credentials");
      expect(call?.detail).toContain("Authentication failed with provider at");
      expect(call?.detail).not.toContain(COPILOT_REFUSED_KEY);
      expect(call?.fix).toMatch(/set a valid key/);
      expect(code).not.toBe(0);
    });
  },
);
