/**
 * What the scale bench counts, exactly, on private servers: Postgres statements per database
 * role from `pg_stat_statements` (each service connects as its own role, the bench as
 * `postgres`, so the bench's own queries are not counted), Redis commands from `INFO
 * commandstats` (the bench sends none while it measures), and a process's CPU time from
 * /proc/<pid>/stat.
 */
import { readFile } from "node:fs/promises";
import { type Db, sql } from "@overseer/db";
import type { Redis } from "@overseer/queue";
import { RUN_PHASES } from "@overseer/run-contract";
import type { ClusterFixture } from "../support/cluster-fixture.ts";
import { type CpuParts, type CpuTotals, cpuSpent, sampleCpu } from "./scale-cpu.ts";
import { type Percentiles, percentiles } from "./stats.ts";

/** The statements of `pg_stat_statements` that only delimit a transaction. */
const TRANSACTION_CONTROL =
  /^\s*(begin|commit|rollback|start transaction|set transaction|savepoint|release)\b/i;
/** Each applied transition sends exactly one NOTIFY (packages/db transition-repository.ts). */
const NOTIFY = /pg_notify/i;

export interface StatementCount {
  query: string;
  role: string;
  calls: number;
  /** How often Postgres planned it: below `calls` when a prepared statement reused its plan. */
  plans: number;
  /** Postgres' time executing it (total_exec_time) and planning it (total_plan_time), ms. */
  execMs: number;
  planMs: number;
  /** Shared buffers hit or read, and WAL bytes written, in total. */
  sharedBlocks: number;
  walBytes: number;
  rows: number;
}

export interface StatementTotals {
  /** Every statement the service roles ran, transaction control included. */
  all: number;
  /** Without BEGIN / START TRANSACTION / COMMIT / ROLLBACK / SAVEPOINT. */
  withoutTransactionControl: number;
  /** pg_notify calls: one per transition that wrote something. */
  notifies: number;
  byRole: Record<string, number>;
  /** The most frequent statements, normalized by pg_stat_statements, text shortened. */
  top: StatementCount[];
  /** The statements Postgres spent the most time on (execution + planning), text shortened. */
  topByTime: StatementCount[];
  /**
   * Sessions opened on the database since the reset (pg_stat_database.sessions; every role's,
   * the bench's own included): each one is a backend forked and its statements prepared again.
   */
  sessionsOpened: number;
  /** Sums over every statement of the service roles. */
  plans: number;
  execMs: number;
  planMs: number;
  walBytes: number;
}

/** `pg_stat_statements` of one database, restricted to the given login roles. */
export class StatementCounter {
  constructor(
    private readonly db: Db,
    private readonly roles: readonly string[],
  ) {}

  /** Creates the extension in this database (the server must preload the library). */
  async install(): Promise<void> {
    await sql`CREATE EXTENSION IF NOT EXISTS pg_stat_statements`.execute(this.db);
    for (const role of this.roles) {
      // Trust auth on the private server: a login role needs no password. Superuser so that the
      // services may run their migrations on the tables the bench created as `postgres`.
      await sql.raw(`CREATE ROLE "${role}" LOGIN SUPERUSER`).execute(this.db);
    }
  }

  private sessionsAtReset = 0;

  async reset(): Promise<void> {
    await sql`SELECT pg_stat_statements_reset()`.execute(this.db);
    this.sessionsAtReset = await this.sessions();
  }

  /** Sessions opened on this database so far. */
  private async sessions(): Promise<number> {
    // The cumulative statistics are a snapshot per transaction: cleared first to read them now.
    await sql`SELECT pg_stat_clear_snapshot()`.execute(this.db);
    const { rows } = await sql<{ sessions: string }>`
      SELECT sessions::text AS sessions FROM pg_stat_database WHERE datname = current_database()`.execute(
      this.db,
    );
    return Number(rows[0]?.sessions ?? Number.NaN);
  }

  async read(topN = 20): Promise<StatementTotals> {
    const { rows } = await sql<{
      query: string;
      role: string;
      calls: string;
      plans: string;
      exec_ms: number;
      plan_ms: number;
      blocks: string;
      wal_bytes: string;
      rows: string;
    }>`
      SELECT s.query, r.rolname AS role, s.calls::text AS calls, s.plans::text AS plans,
        s.total_exec_time AS exec_ms, s.total_plan_time AS plan_ms,
        (s.shared_blks_hit + s.shared_blks_read)::text AS blocks, s.wal_bytes::text AS wal_bytes,
        s.rows::text AS rows
      FROM pg_stat_statements s
      JOIN pg_roles r ON r.oid = s.userid
      WHERE s.dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
        AND r.rolname = ANY(${[...this.roles]}::text[])
      ORDER BY s.calls DESC`.execute(this.db);
    const counts: StatementCount[] = rows.map((r) => ({
      query: r.query,
      role: r.role,
      calls: Number(r.calls),
      plans: Number(r.plans),
      execMs: Number(r.exec_ms),
      planMs: Number(r.plan_ms),
      sharedBlocks: Number(r.blocks),
      walBytes: Number(r.wal_bytes),
      rows: Number(r.rows),
    }));
    const sum = (list: StatementCount[]) => list.reduce((n, c) => n + c.calls, 0);
    const total = (of: (c: StatementCount) => number) => counts.reduce((n, c) => n + of(c), 0);
    const byTime = [...counts].sort((a, b) => b.execMs + b.planMs - (a.execMs + a.planMs));
    const byRole: Record<string, number> = {};
    for (const c of counts) byRole[c.role] = (byRole[c.role] ?? 0) + c.calls;
    return {
      all: sum(counts),
      withoutTransactionControl: sum(counts.filter((c) => !TRANSACTION_CONTROL.test(c.query))),
      notifies: sum(counts.filter((c) => NOTIFY.test(c.query))),
      byRole,
      top: counts.slice(0, topN).map(brief),
      topByTime: byTime.slice(0, topN).map(brief),
      sessionsOpened: (await this.sessions()) - this.sessionsAtReset,
      plans: total((c) => c.plans),
      execMs: total((c) => c.execMs),
      planMs: total((c) => c.planMs),
      walBytes: total((c) => c.walBytes),
    };
  }
}

export interface CommandTotals {
  all: number;
  byCommand: Record<string, number>;
}

/** Redis `INFO commandstats` since the last `CONFIG RESETSTAT` (the bench's own CONFIG and INFO left out). */
export class CommandCounter {
  constructor(private readonly redis: Redis) {}

  async reset(): Promise<void> {
    await this.redis.config("RESETSTAT");
  }

  async read(): Promise<CommandTotals> {
    const info = await this.redis.info("commandstats");
    const byCommand: Record<string, number> = {};
    for (const m of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
      const [, name, calls] = m;
      if (name === "config" || name === "info") continue;
      byCommand[name as string] = Number(calls);
    }
    const all = Object.values(byCommand).reduce((n, c) => n + c, 0);
    const sorted = Object.fromEntries(Object.entries(byCommand).sort((a, b) => b[1] - a[1]));
    return { all, byCommand: sorted };
  }
}

/** One phase's counts: statements, commands, coordinator CPU, the workers' CPU and wall time. */
export interface PhaseCounts {
  seconds: number;
  statements: StatementTotals;
  commands: CommandTotals;
  coordinatorCpuMs: number;
  /** The workers together: their own CPU, and their reaped children's. */
  workerCpuMs: { own: number; children: number };
  /** The machine's busy CPU and each part's (scale-cpu.ts), when the parts were given. */
  cpu: CpuTotals | null;
}

/** Counts what `work` costs: statements, commands, the coordinator's and the workers' CPU, wall time. */
export async function measurePhase(
  counters: { statements: StatementCounter; commands: CommandCounter },
  pids: {
    coordinatorPid: number | undefined;
    workerPids: readonly (number | undefined)[];
    cpuParts?: CpuParts | undefined;
  },
  work: () => Promise<void>,
): Promise<PhaseCounts> {
  await Promise.all([counters.statements.reset(), counters.commands.reset()]);
  const sample = () => (pids.cpuParts ? sampleCpu(pids.cpuParts) : Promise.resolve(null));
  const [cpu0, workers0, machine0] = await Promise.all([
    processCpuMs(pids.coordinatorPid),
    workersCpuMs(pids.workerPids),
    sample(),
  ]);
  const t0 = performance.now();
  await work();
  const seconds = (performance.now() - t0) / 1000;
  // The machine first: the counters' reads below are the bench's own work, not the phase's.
  const machine1 = await sample();
  const [statements, commands, cpu1, workers1] = await Promise.all([
    counters.statements.read(),
    counters.commands.read(),
    processCpuMs(pids.coordinatorPid),
    workersCpuMs(pids.workerPids),
  ]);
  const workerCpuMs = { own: workers1.own - workers0.own, children: workers1.children - workers0.children };
  const cpu = machine0 && machine1 ? cpuSpent(machine0, machine1) : null;
  return { seconds, statements, commands, coordinatorCpuMs: cpu1 - cpu0, workerCpuMs, cpu };
}

/** The workers' CPU so far, together: their own and their reaped children's, ms. */
async function workersCpuMs(
  pids: readonly (number | undefined)[],
): Promise<{ own: number; children: number }> {
  const each = await Promise.all(pids.map((pid) => processTreeCpuMs(pid)));
  return {
    own: each.reduce((n, c) => n + c.own, 0),
    children: each.reduce((n, c) => n + c.children, 0),
  };
}

/**
 * The workers' CPU in a phase per run that finished in it: their own, their children's, and
 * their own above what they spend idle (the idle phase's rate over the same time: heartbeats,
 * waits for jobs), the part the runs cost.
 */
export function workerCpuPerRun(phase: PhaseCounts, runs: number, idle: PhaseCounts) {
  if (runs === 0) return null;
  const idleOwn = (idle.workerCpuMs.own / idle.seconds) * phase.seconds;
  return {
    own: tenth(phase.workerCpuMs.own / runs),
    children: tenth(phase.workerCpuMs.children / runs),
    ownAboveIdle: tenth((phase.workerCpuMs.own - idleOwn) / runs),
  };
}

const tenth = (n: number) => Math.round(n * 10) / 10;

/** User + system CPU time of a process so far, in ms (clock ticks of 10 ms). */
export async function processCpuMs(pid: number | undefined): Promise<number> {
  return (await processTreeCpuMs(pid)).own;
}

/**
 * CPU time so far, in ms, of a process itself (user + system) and of its children it has
 * waited for (cutime + cstime: for a worker, the git, bwrap and harness processes of its runs,
 * each counted once it was reaped). Sampled before and after a phase, the differences divided
 * by its runs give a service's own CPU per run beside its children's.
 */
export async function processTreeCpuMs(pid: number | undefined): Promise<{ own: number; children: number }> {
  if (!pid) return { own: Number.NaN, children: Number.NaN };
  const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => "");
  // Fields after the command name (which may hold spaces) start at field 3 (state).
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticks = (i: number) => Number(fields[i]);
  return { own: (ticks(11) + ticks(12)) * 10, children: (ticks(13) + ticks(14)) * 10 };
}

/** A statement's line in the JSON: its text shortened, its times to a hundredth of a ms. */
function brief(c: StatementCount): StatementCount {
  return { ...c, query: shorten(c.query), execMs: hundredth(c.execMs), planMs: hundredth(c.planMs) };
}

function shorten(query: string): string {
  const one = query.replace(/\s+/g, " ").trim();
  return one.length > 160 ? `${one.slice(0, 157)}...` : one;
}

/**
 * Redis memory by kind of key (`MEMORY USAGE` of every key, ids in the key replaced by `*`),
 * largest first: where the bytes per running run go. Read after a phase (its SCAN and MEMORY
 * commands are not counted).
 */
export async function redisMemoryByKind(
  redis: Redis,
  top = Number.POSITIVE_INFINITY,
): Promise<Record<string, { keys: number; bytes: number }>> {
  const kinds = new Map<string, { keys: number; bytes: number }>();
  let cursor = "0";
  do {
    const [next, keys] = await redis.scan(cursor, "COUNT", 1000);
    cursor = next;
    const pipeline = redis.pipeline();
    for (const key of keys) pipeline.memory("USAGE", key);
    const sizes = (await pipeline.exec()) ?? [];
    keys.forEach((key, i) => {
      const kind = key.replace(/[0-9a-f]{8}-[0-9a-f-]{27,}/g, "*").replace(/\d+/g, "*");
      const entry = kinds.get(kind) ?? { keys: 0, bytes: 0 };
      entry.keys += 1;
      entry.bytes += Number(sizes[i]?.[1] ?? 0);
      kinds.set(kind, entry);
    });
  } while (cursor !== "0");
  return Object.fromEntries([...kinds.entries()].sort((a, b) => b[1].bytes - a[1].bytes).slice(0, top));
}

/** Bytes of `redisMemoryByKind`'s kinds together. */
export function totalBytes(kinds: Record<string, { bytes: number }>): number {
  return Object.values(kinds).reduce((n, k) => n + k.bytes, 0);
}

/** Redis `used_memory` (INFO memory), in bytes. */
export async function redisUsedMemory(redis: Redis): Promise<number> {
  const info = await redis.info("memory");
  return Number(/^used_memory:(\d+)/m.exec(info)?.[1] ?? Number.NaN);
}

/** Run times of one phase, ms. */
export interface Timings {
  runs: number;
  queuedToSpawned: Percentiles;
  exitedToCommitted: Percentiles;
  enqueuedToPickedP50: number;
  receivedToCommittedP50: number;
  /**
   * From the run's creation (its claim transaction's start, runs.created_at) to its job's
   * enqueue: the claim, which queuedToSpawned (from the enqueue, as the issue measured it)
   * leaves out.
   */
  createdToEnqueuedP50: number;
  /**
   * Where a run's time goes: each phase of its stored timeline (runs.phases, run-phases.ts:
   * queue_wait … result_applied, back to back), percentiles over the runs that had it (a phase
   * met twice in one run counts with its sum).
   */
  phasesMs: Record<string, Percentiles>;
  /**
   * The overhead's two gaps cut at each hand-over, p50 ms (criticalPath):
   * queuedToSpawned = enqueuedToPicked + pickedToSpawned; exitedToCommitted = exitedToAgentEnd
   * (the agent's exit after its transition, its group ended) + agentEndToReported (outcome,
   * scope check, commit, push or land, in the worker) + reportedToReceived (log flush, ownership
   * check, the result queue, the coordinator's pick-up) + receivedToCommitted (its transaction).
   */
  criticalPathP50Ms: Record<string, Record<string, number>>;
}

/** The finished runs of the projects of `prefix`: how long each step took, percentiles. */
export async function runTimings(cluster: ClusterFixture, prefix: string): Promise<Timings> {
  const rows = await cluster.scratch.db
    .selectFrom("runs")
    .select(["timing", "phases", "created_at", "action"])
    .where("status", "=", "finished")
    .where("project_id", "like", `${prefix}%`)
    .execute();
  const timings = rows.map((r) => r.timing as Record<string, unknown>);
  const gap = (from: string, to: string) =>
    timings.map((t) => Number(t[to] ?? Number.NaN) - Number(t[from] ?? Number.NaN));
  return {
    runs: rows.length,
    queuedToSpawned: percentiles(gap("enqueuedAt", "spawnedAt")),
    exitedToCommitted: percentiles(gap("exitedAt", "committed")),
    enqueuedToPickedP50: percentiles(gap("enqueuedAt", "pickedAt")).p50,
    receivedToCommittedP50: percentiles(gap("received", "committed")).p50,
    createdToEnqueuedP50: percentiles(
      rows.map((r, i) => Number(timings[i]?.enqueuedAt ?? Number.NaN) - new Date(r.created_at).getTime()),
    ).p50,
    phasesMs: phasePercentiles(rows.map((r) => r.phases ?? [])),
    criticalPathP50Ms: Object.fromEntries(
      ["all", ...new Set(rows.map((r) => r.action))].map((action) => {
        const of = rows.filter((r) => action === "all" || r.action === action);
        return [
          action,
          criticalPath(
            of.map((r) => r.timing as Record<string, unknown>),
            of.map((r) => r.phases ?? []),
          ),
        ];
      }),
    ),
  };
}

/** `Timings.criticalPathP50Ms`: each hand-over's gap, p50 over the runs. */
function criticalPath(
  timings: readonly Record<string, unknown>[],
  timelines: readonly (readonly { name: string; startedAt: number; durationMs: number }[])[],
): Record<string, number> {
  const at = (t: Record<string, unknown>, key: string) => Number(t[key] ?? Number.NaN);
  const agentEnd = timelines.map((phases) => {
    const agent = phases.find((p) => p.name === "agent");
    return agent ? agent.startedAt + agent.durationMs : Number.NaN;
  });
  const p50 = (values: number[]) => Math.round(percentiles(values).p50 * 10) / 10;
  return {
    enqueuedToPicked: p50(timings.map((t) => at(t, "pickedAt") - at(t, "enqueuedAt"))),
    pickedToSpawned: p50(timings.map((t) => at(t, "spawnedAt") - at(t, "pickedAt"))),
    exitedToAgentEnd: p50(timings.map((t, i) => (agentEnd[i] ?? Number.NaN) - at(t, "exitedAt"))),
    agentEndToReported: p50(timings.map((t, i) => at(t, "reportedAt") - (agentEnd[i] ?? Number.NaN))),
    reportedToReceived: p50(timings.map((t) => at(t, "received") - at(t, "reportedAt"))),
    receivedToCommitted: p50(timings.map((t) => at(t, "committed") - at(t, "received"))),
  };
}

/** Per phase name (in run-phases.ts order), percentiles of its time per run over the runs that had it. */
function phasePercentiles(
  timelines: readonly (readonly { name: string; durationMs: number }[])[],
): Record<string, Percentiles> {
  const perPhase = new Map<string, number[]>();
  for (const timeline of timelines) {
    const sums = new Map<string, number>();
    for (const { name, durationMs } of timeline) sums.set(name, (sums.get(name) ?? 0) + durationMs);
    for (const [name, ms] of sums) perPhase.set(name, [...(perPhase.get(name) ?? []), ms]);
  }
  const order = (name: string) => {
    const i = (RUN_PHASES as readonly string[]).indexOf(name);
    return i < 0 ? RUN_PHASES.length : i;
  };
  return Object.fromEntries(
    [...perPhase.entries()]
      .sort((a, b) => order(a[0]) - order(b[0]))
      .map(([name, values]) => [name, percentiles(values)]),
  );
}

/** A phase's counts, and per applied transition. */
export function phaseSummary(phase: PhaseCounts, transitions: number) {
  const per = (n: number) => (transitions > 0 ? hundredth(n / transitions) : null);
  return {
    seconds: hundredth(phase.seconds),
    transitions,
    statements: phase.statements.all,
    statementsWithoutTransactionControl: phase.statements.withoutTransactionControl,
    statementsByRole: phase.statements.byRole,
    postgresSessionsOpened: phase.statements.sessionsOpened,
    commands: phase.commands.all,
    coordinatorCpuMs: phase.coordinatorCpuMs,
    perTransition: {
      statements: per(phase.statements.all),
      statementsWithoutTransactionControl: per(phase.statements.withoutTransactionControl),
      commands: per(phase.commands.all),
      coordinatorCpuMs: per(phase.coordinatorCpuMs),
      // Postgres' own account of its time on the services' statements (pg_stat_statements):
      // executing and planning them (parsing is in neither), and the WAL they wrote.
      // How many statements were planned (the rest reused their prepared statement's plan).
      statementPlans: per(phase.statements.plans),
      statementExecMs: per(phase.statements.execMs),
      statementPlanMs: per(phase.statements.planMs),
      walBytes: per(phase.statements.walBytes),
    },
    topStatements: phase.statements.top,
    topStatementsByTime: phase.statements.topByTime,
    topCommands: Object.fromEntries(Object.entries(phase.commands.byCommand).slice(0, 15)),
  };
}

const hundredth = (n: number) => Math.round(n * 100) / 100;
