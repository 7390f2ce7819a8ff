/**
 * `npm run demo [-- --once]`: the local cluster with three demo projects and a demo mission.
 *
 * Starts a coordinator, two workers and the gateway as separate processes against a demo
 * database (`overseer_demo`, recreated each time) and a Redis key prefix of its own,
 * creates three local git repositories with task graphs that exercise approve, reject and
 * redo, an escalation whose resolver unblocks the original, and a decision card left
 * pending, plus a mission (`demo-mission`) that goes from its objective to `completed` on its
 * own: its planner proposes a 2-task plan, a fresh reviewer approves it, the tasks run, and the
 * next round's planner declares the objective met; prints every transition as it happens and
 * a summary table at the end.
 *
 * `--once` exits 0 as soon as every demo task is done or waiting for the operator
 * (awaiting_input, or blocked behind an awaiting_input resolver) and the mission completed; without it the cluster
 * keeps running (resolve the pending card over HTTP and watch it finish) until Ctrl-C.
 */
import { existsSync } from "node:fs";
import { mkdir, readFile, rm } from "node:fs/promises";
import path from "node:path";
import { parseArgs } from "node:util";
import {
  connectDatabase,
  createApiToken,
  createProject,
  ensureDatabaseExists,
  listEvents,
  loadProjectSnapshot,
  migrateToLatest,
  POSTGRES_NOTIFY_CHANNEL,
  withDatabase,
} from "@overseer/db";
import type { ProjectState } from "@overseer/domain";
import { initBareRepo } from "@overseer/git";
import { fakeHarnessPath } from "@overseer/harness";
import { parseRunnerConfig } from "@overseer/project-config";
import { detectDriver } from "@overseer/sandbox";
import { loadSettings } from "@overseer/settings";
import { loadTaskFile } from "@overseer/task-files";
import { importTasks, startMission, startProject, TransitionApplier } from "@overseer/transitions";
import { REPO_ROOT, type ServiceProcess, startService } from "../support/service-process.ts";
import { dropDemoState } from "./demo-state.ts";
import { ensureLocalServices } from "./local-services.ts";

const DEMO_PROJECTS = [
  {
    id: "demo-approve",
    file: "approve-project.yaml",
    objective: "Greeting and farewell texts, each approved by a fresh reviewer.",
  },
  {
    id: "demo-reject",
    file: "reject-escalate-project.yaml",
    objective: "A rejected parser redone with a test; a blocked task freed by its resolver.",
  },
  {
    id: "demo-decision",
    file: "decision-project.yaml",
    objective: "A storage decision only the operator can make.",
  },
] as const;

/** The demo mission: its objective (with the fake planner's script) is a fixture file. */
const DEMO_MISSION = {
  id: "demo-mission",
  file: "mission-objective.md",
  objective: "A greeting library planned by the mission's own planner.",
} as const;
const ALL_DEMO_IDS = [...DEMO_PROJECTS.map((p) => p.id), DEMO_MISSION.id];

const { values: args } = parseArgs({
  options: {
    once: { type: "boolean", default: false },
    "timeout-seconds": { type: "string", default: "300" },
    port: { type: "string" },
  },
});

const out = (line = "") => process.stdout.write(`${line}\n`);
const settings = loadSettings();
const demoDbUrl = process.env.DEMO_DATABASE_URL ?? withDatabase(settings.databaseUrl, "overseer_demo");
const prefix = process.env.DEMO_QUEUE_PREFIX ?? "overseer-demo";
const dataDir = path.join(settings.dataDir, "demo");
const port = args.port ?? process.env.OVERSEER_GATEWAY_PORT ?? "7070";
const children: ServiceProcess[] = [];

async function resetDemoState(): Promise<void> {
  await dropDemoState(demoDbUrl, settings.redisUrl, prefix);
  await ensureDatabaseExists(demoDbUrl);
  await rm(dataDir, { recursive: true, force: true });
  await mkdir(path.join(dataDir, "repos"), { recursive: true });
}

async function sandboxEnv(): Promise<Record<string, string>> {
  const bwrap = (await detectDriver()).drivers.bwrap;
  if (bwrap.available) return { OVERSEER_SANDBOX: "bwrap" };
  out(`!! bubblewrap is not available (${bwrap.detail}): the demo runs agents WITHOUT a sandbox.`);
  out("!! Install it with `apt-get install bubblewrap` to run the demo sandboxed.");
  return { OVERSEER_SANDBOX: "none", OVERSEER_SANDBOX_UNSAFE_NONE: "1" };
}

function waitingOnOperator(state: ProjectState): boolean {
  const awaiting = new Set(
    [...state.tasks.values()].filter((t) => t.status === "awaiting_input").map((t) => t.id),
  );
  const settled = (id: string, seen = new Set<string>()): boolean => {
    const t = state.tasks.get(id);
    if (!t || seen.has(id)) return false;
    seen.add(id);
    if (t.status === "done" || t.status === "awaiting_input") return true;
    if (t.status === "blocked" && t.blockedBy) return awaiting.has(t.blockedBy) || settled(t.blockedBy, seen);
    return false;
  };
  return [...state.tasks.keys()].every((id) => settled(id));
}

function summary(states: ProjectState[]): void {
  const rows = states.flatMap((s) =>
    [...s.tasks.values()].map((t) => [
      s.project.id,
      t.id,
      t.kind,
      t.status,
      t.awaitingReason ?? t.statusReason ?? "",
    ]),
  );
  const headers = ["PROJECT", "TASK", "KIND", "STATUS", "NOTE"];
  const widths = headers.map((h, i) =>
    Math.max(h.length, ...rows.map((r) => Math.min(60, String(r[i]).length))),
  );
  const line = (cells: string[]) => cells.map((c, i) => c.slice(0, 60).padEnd(widths[i] ?? 0)).join("  ");
  out();
  out(line(headers));
  out(line(widths.map((w) => "-".repeat(w))));
  for (const r of rows) out(line(r.map(String)));
  for (const s of states) {
    const m = s.project.mission;
    if (m)
      out(
        `\nmission ${s.project.id}: ${s.project.status}, round ${m.round} of ${m.maxRounds}${m.evidence ? `; evidence: ${m.evidence}` : ""}`,
      );
  }
}

async function main(): Promise<number> {
  out(
    `Overseer demo: Postgres ${new URL(demoDbUrl).host}${new URL(demoDbUrl).pathname}, Redis ${new URL(settings.redisUrl).host} (prefix ${prefix})`,
  );
  await ensureLocalServices({ databaseUrl: demoDbUrl, redisUrl: settings.redisUrl, dataDir, say: out });
  await resetDemoState();
  const db = connectDatabase(demoDbUrl, { applicationName: "overseer-demo" });
  await migrateToLatest(db.db);

  const runnerConfig = parseRunnerConfig(
    { argv: [process.execPath, fakeHarnessPath()], timeout_seconds: 120, retry_backoff_seconds: 1 },
    "demo runner config",
  );
  for (const p of DEMO_PROJECTS) {
    const repo = path.join(dataDir, "repos", `${p.id}.git`);
    await initBareRepo(repo, {
      initialFiles: { "README.md": `# ${p.id}\n\n${p.objective}\n` },
      branch: "main",
    });
    const tasks = await loadTaskFile(path.join(REPO_ROOT, "test/demo/fixtures", p.file));
    if (!tasks.ok) throw new Error(`demo fixture ${p.file} is invalid`);
    await createProject(db.db, {
      id: p.id,
      repo,
      objective: p.objective,
      runnerConfig: runnerConfig as unknown as Record<string, unknown>,
    });
    await importTasks(new TransitionApplier({ db: db.db }), p.id, tasks.tasks);
  }
  const missionRepo = path.join(dataDir, "repos", `${DEMO_MISSION.id}.git`);
  await initBareRepo(missionRepo, {
    initialFiles: { "README.md": `# ${DEMO_MISSION.id}\n\n${DEMO_MISSION.objective}\n` },
    branch: "main",
  });
  await createProject(db.db, {
    id: DEMO_MISSION.id,
    repo: missionRepo,
    objective: DEMO_MISSION.objective,
    runnerConfig: runnerConfig as unknown as Record<string, unknown>,
  });
  const token = await createApiToken(db.db, { name: "demo-operator", scope: "admin" });

  const env = {
    DATABASE_URL: demoDbUrl,
    REDIS_URL: settings.redisUrl,
    OVERSEER_QUEUE_PREFIX: prefix,
    OVERSEER_DATA_DIR: path.join(dataDir, "cluster"),
    OVERSEER_GATEWAY_PORT: port,
    LOG_LEVEL: process.env.LOG_LEVEL ?? "warn",
    ...(await sandboxEnv()),
  };
  children.push(startService("coordinator", env));
  children.push(startService("worker", { ...env, OVERSEER_WORKER_ID: "demo-worker-1" }));
  children.push(startService("worker", { ...env, OVERSEER_WORKER_ID: "demo-worker-2" }));
  const gatewayEntry = path.join(REPO_ROOT, "services/gateway/src/gateway-main.ts");
  const url = `http://127.0.0.1:${port}`;
  if (existsSync(gatewayEntry)) {
    children.push(startService("gateway", env));
    out(`Gateway:        ${url}  (dashboard at ${url}/, API docs at ${url}/docs)`);
    out(`Operator token: ${token.token}`);
    out(
      `Try:            curl -H "Authorization: Bearer ${token.token}" ${url}/api/projects/demo-decision/status`,
    );
  }
  for (const child of children) {
    void child.exited.then((code) => {
      if (!stopping) out(`!! ${child.name} exited (${code}):\n${child.output().slice(-2000)}`);
    });
  }

  for (const p of DEMO_PROJECTS) await startProject(new TransitionApplier({ db: db.db }), p.id);
  await startMission(new TransitionApplier({ db: db.db }), DEMO_MISSION.id, {
    objective: await readFile(path.join(REPO_ROOT, "test/demo/fixtures", DEMO_MISSION.file), "utf8"),
    stage: "S01",
    maxRounds: 3,
    by: "demo",
  });
  out();

  let cursor = 0;
  let wake: () => void = () => {};
  const listener = await db.notifications.listen(POSTGRES_NOTIFY_CHANNEL, () => wake());
  const deadline = Date.now() + Number(args["timeout-seconds"]) * 1000;
  let settledOnce = false;
  try {
    for (;;) {
      for (const e of await listEvents(db.db, { after: cursor, limit: 1000 })) {
        cursor = Number(e.id);
        out(describeEvent(e.created_at, e.project_id, e.task_id, e.type, e.data));
      }
      const states = await Promise.all(ALL_DEMO_IDS.map((id) => loadProjectSnapshot(db.db, id)));
      // A mission has settled once it completed (or waits for the operator on a bound or card).
      const settled = states.every((s) =>
        s.project.mission
          ? s.project.status !== "active" || s.project.mission.evidence !== null
          : waitingOnOperator(s),
      );
      if (settled && !settledOnce) {
        summary(states);
        settledOnce = true;
        if (args.once) return 0;
        out(
          "\nEvery demo task is done or waiting for you. Resolve the pending decision over HTTP to see it finish; Ctrl-C stops the demo.",
        );
      }
      if (!settled) settledOnce = false;
      if (args.once && Date.now() > deadline) {
        summary(states);
        out(`\nThe demo did not settle within ${args["timeout-seconds"]} s.`);
        return 1;
      }
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, 1000).unref();
      });
    }
  } finally {
    await listener.unlisten().catch(() => undefined);
    await db.close();
  }
}

function describeEvent(
  at: Date,
  projectId: string,
  taskId: string | null,
  type: string,
  data: Record<string, unknown>,
): string {
  const detail =
    (data.agentId as string | undefined) ??
    (data.reason as string | undefined) ??
    (data.feedback as string | undefined) ??
    (data.message as string | undefined) ??
    (data.transition as string | undefined) ??
    "";
  return `${at.toISOString().slice(11, 23)}  ${projectId.padEnd(14)} ${(taskId ?? "-").padEnd(12)} ${type.padEnd(24)} ${String(detail).split("\n")[0]?.slice(0, 80) ?? ""}`;
}

let stopping = false;
async function stopChildren(): Promise<void> {
  stopping = true;
  await Promise.all(children.map((c) => c.kill("SIGTERM")));
}

process.on("SIGINT", () => {
  void stopChildren().then(() => process.exit(0));
});

let code = 1;
try {
  code = await main();
} catch (error) {
  out(`demo failed: ${(error as Error).message}`);
} finally {
  await stopChildren();
}
process.exit(code);
