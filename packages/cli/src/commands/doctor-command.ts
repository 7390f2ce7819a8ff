import { ProjectListSchema, ProjectSchema, TaskPageSchema } from "@overseer/api-contract";
import {
  connectDatabase,
  type Db,
  type DbHandle,
  distinctTaskRoles,
  listProjects,
  pendingMigrations,
  pingDatabase,
} from "@overseer/db";
import { resolveExecutable } from "@overseer/harness";
import { ConfigError } from "@overseer/input-errors";
import {
  commandForRole,
  parseRunnerConfig,
  type RunnerConfig,
  unpricedBudgetWarning,
} from "@overseer/project-config";
import { createRedis, describeRedisTarget, redisTarget } from "@overseer/queue";
import type { SandboxDriverName } from "@overseer/run-contract";
import {
  createSandboxDriver,
  detectDriver,
  detectSandboxHost,
  type ProbeReport,
  type SandboxHost,
} from "@overseer/sandbox";
import type { ServiceSettings } from "@overseer/settings";
import { DEFAULT_ROLE } from "@overseer/task-files";
import { execa } from "execa";
import type { z } from "zod";
import { parseCommandArgs, requirePositive } from "../arg-parser.ts";
import { settingsFrom } from "../cli-context.ts";
import { CLI_DEFAULTS } from "../cli-defaults.ts";
import { EXIT_FAILURE, EXIT_OK, UsageError } from "../cli-errors.ts";
import type { CliIo } from "../cli-io.ts";
import type { CliCommand } from "../command-registry.ts";
import { commandTarget, databaseLabel, describeTarget } from "../command-target.ts";
import { type GatewayClient, toCliError } from "../gateway-client.ts";
import { cliOf, deepProbeProject, sandboxVisibilityChecks } from "./doctor-deep-probe.ts";
import {
  GIT_FIX,
  harnessNotConfiguredFix,
  harnessNotFoundFix,
  MIGRATIONS_FIX,
  postgresFix,
  REDIS_FIX,
  runnerConfigFix,
  sandboxDriverFix,
  sandboxProbeFix,
} from "./doctor-fixes.ts";
import { forgeRightsChecks } from "./doctor-forge-check.ts";
import { imageChecks } from "./doctor-image-check.ts";

const usage = "overseer doctor [--deep] [--project P] [--json] [--probe-timeout SECONDS]";

export interface DoctorCheck {
  name: string;
  /** `skip`: does not apply where doctor runs (the detail says why and where it is checked). */
  status: "ok" | "warn" | "fail" | "skip";
  detail: string;
  /** A failed required check makes doctor exit 1. */
  required: boolean;
  /** What to run or change when the check fails (every failing check has one). */
  fix?: string;
}

/**
 * Preflight: one line per check, exit 1 if a required check fails. Checks Postgres and
 * migrations, Redis, git, the sandbox driver with a live probe, and each project's harness
 * executables (per role), found on the host and inside the sandbox a run uses, and the forge
 * token's rights on the repository of a project that has a forge (doctor-forge-check.ts). `--deep` also probes each role's real CLI through the sandbox a run uses
 * (doctor-deep-probe.ts): its version, its auth variables and a non-mutating call (`probe_argv`).
 */
export const doctorCommand: CliCommand = {
  path: ["doctor"],
  summary:
    "preflight checks: Postgres, migrations, Redis, git, sandbox, harness per role, forge token rights, run images (--deep probes)",
  usage,
  async run(args, io) {
    const { values } = parseCommandArgs(
      args,
      {
        deep: { type: "boolean" },
        project: { type: "string" },
        json: { type: "boolean" },
        "probe-timeout": { type: "string" },
      },
      usage,
      false,
    );
    const settings = settingsFrom(io);
    const probeTimeoutMs =
      (requirePositive(values["probe-timeout"], "--probe-timeout") ?? CLI_DEFAULTS.probeTimeoutSeconds) *
      1000;
    const checks: DoctorCheck[] = [];
    const add = (check: DoctorCheck) => {
      checks.push(check);
      if (values.json) return;
      const fix = check.status !== "ok" && check.fix ? ` -> fix: ${check.fix}` : "";
      io.out(`${check.status.toUpperCase().padEnd(4)}  ${check.name.padEnd(28)} ${check.detail}${fix}`);
    };
    const deep = values.deep ?? false;
    const target = commandTarget(io);
    // --deep runs each role's CLI with the project's secrets, which the gateway never serves:
    // it reads them from DATABASE_URL, and only when that is set explicitly next to a gateway.
    if (target.kind === "gateway" && deep && !io.env.DATABASE_URL?.trim())
      throw new UsageError(
        `doctor --deep runs each role's CLI with the project's secrets, which the gateway at ${target.client.baseUrl} never serves: run it on the cluster host with DATABASE_URL set (it reads the runner config from that database), or without --deep to check through the gateway.`,
      );
    const client = target.kind === "gateway" && !deep ? target.client : null;
    io.err(
      client
        ? describeTarget({ kind: "gateway", client })
        : describeTarget({ kind: "local", database: databaseLabel(settings.databaseUrl) }),
    );
    const database = client
      ? null
      : connectDatabase(settings.databaseUrl, { max: 2, applicationName: "overseer-doctor" });
    try {
      if (database) await checkPostgres(database.db, settings, add);
      const reachable = client ? await checkGateway(client, add) : true;
      await checkRedis(settings, add);
      await checkGit(add);
      const sandboxSkipped = await checkSandbox(settings, io.env, add);
      if (sandboxSkipped === null) await checkGvisor(settings, add);
      const source = client ? gatewayProjects(client) : databaseProjects((database as DbHandle).db);
      if (reachable)
        await checkProjects(source, io, add, {
          deep,
          project: values.project,
          probeTimeoutMs,
          settings,
          sandboxSkipped,
        });
    } finally {
      await database?.close();
    }
    if (values.json)
      io.out(JSON.stringify({ ok: !checks.some((c) => c.required && c.status === "fail"), checks }, null, 2));
    return checks.some((c) => c.required && c.status === "fail") ? EXIT_FAILURE : EXIT_OK;
  },
};

type Add = (check: DoctorCheck) => void;

/** A project as doctor checks it: its id and stored runner config. */
interface StoredProject {
  readonly id: string;
  readonly runnerConfig: unknown;
  readonly budgetUsd: number | null;
}

/** Where doctor reads projects and their roles: the local database or the gateway. */
interface ProjectSource {
  projects(): Promise<StoredProject[]>;
  roles(projectId: string): Promise<string[]>;
}

function databaseProjects(db: Db): ProjectSource {
  return {
    projects: async () =>
      (await listProjects(db)).map((p) => ({
        id: p.id,
        runnerConfig: p.runner_config,
        budgetUsd: p.budget_usd,
      })),
    roles: (projectId) => distinctTaskRoles(db, projectId),
  };
}

/** Through the gateway: the runner config comes redacted (secret names kept, values hidden). */
function gatewayProjects(client: GatewayClient): ProjectSource {
  const enc = encodeURIComponent;
  return {
    async projects() {
      const { projects } = await client.get("/api/v1/projects", ProjectListSchema);
      const out: StoredProject[] = [];
      for (const { id } of projects) {
        const project = await client.get(`/api/v1/projects/${enc(id)}`, ProjectSchema);
        out.push({ id, runnerConfig: project.runner_config ?? {}, budgetUsd: project.budget_usd });
      }
      return out;
    },
    async roles(projectId) {
      const roles = new Set<string>();
      let cursor: string | null = null;
      do {
        const page: z.output<typeof TaskPageSchema> = await client.get(
          `/api/v1/projects/${enc(projectId)}/tasks?limit=1000${cursor ? `&cursor=${enc(cursor)}` : ""}`,
          TaskPageSchema,
        );
        for (const task of page.tasks) roles.add(task.role);
        cursor = page.next_cursor;
      } while (cursor);
      return [...roles].sort();
    },
  };
}

/** The gateway answers with this token (it replaces the Postgres checks: the gateway owns them). */
async function checkGateway(client: GatewayClient, add: Add): Promise<boolean> {
  try {
    const { projects } = await client.get("/api/v1/projects", ProjectListSchema);
    add({
      name: "gateway",
      status: "ok",
      detail: `${client.baseUrl} answers with OVERSEER_TOKEN (${projects.length} project(s))`,
      required: true,
    });
    return true;
  } catch (error) {
    add({
      name: "gateway",
      status: "fail",
      detail: (toCliError(error) as Error).message,
      required: true,
      fix: "start the cluster (`overseer up`) and export the OVERSEER_URL and OVERSEER_TOKEN it prints",
    });
    return false;
  }
}

async function checkPostgres(db: Db, settings: ServiceSettings, add: Add): Promise<void> {
  const where = new URL(settings.databaseUrl);
  where.password = "";
  try {
    await pingDatabase(db);
    add({
      name: "postgres",
      status: "ok",
      detail: `reachable at ${where.host}${where.pathname}`,
      required: true,
    });
  } catch (error) {
    add({
      name: "postgres",
      status: "fail",
      detail: `${(error as Error).message} (DATABASE_URL=${where})`,
      required: true,
      fix: postgresFix(error, settings.databaseUrl),
    });
    return;
  }
  try {
    const pending = await pendingMigrations(db);
    add(
      pending.length === 0
        ? { name: "migrations", status: "ok", detail: "schema current", required: true }
        : {
            name: "migrations",
            status: "fail",
            detail: `pending: ${pending.join(", ")}`,
            required: true,
            fix: MIGRATIONS_FIX,
          },
    );
  } catch (error) {
    add({
      name: "migrations",
      status: "fail",
      detail: (error as Error).message,
      required: true,
      fix: postgresFix(error, settings.databaseUrl),
    });
  }
}

async function checkRedis(settings: ServiceSettings, add: Add): Promise<void> {
  const redis = createRedis(redisTarget(settings), {
    maxRetriesPerRequest: 1,
    retryStrategy: () => null,
    lazyConnect: true,
  });
  try {
    await redis.connect();
    const pong = await redis.ping();
    add({
      name: "redis",
      status: pong === "PONG" ? "ok" : "fail",
      detail: `reachable at ${describeRedisTarget(redisTarget(settings))}`,
      required: true,
      fix: REDIS_FIX,
    });
  } catch (error) {
    add({
      name: "redis",
      status: "fail",
      detail: `${(error as Error).message} (${describeRedisTarget(redisTarget(settings))}; REDIS_URL, REDIS_CLUSTER_NODES, REDIS_SENTINELS)`,
      required: true,
      fix: REDIS_FIX,
    });
  } finally {
    redis.disconnect();
  }
}

async function checkGit(add: Add): Promise<void> {
  try {
    const { stdout } = await execa("git", ["--version"]);
    add({ name: "git", status: "ok", detail: stdout.trim(), required: true });
  } catch {
    add({
      name: "git",
      status: "fail",
      detail: "git not found on PATH",
      required: true,
      fix: GIT_FIX,
    });
  }
}

/**
 * Why the sandbox checks do not apply where doctor runs, or null: a container that is not a
 * worker's (the compose gateway or coordinator, where the docs have operators run the CLI) has
 * none of what bubblewrap needs, by design, so its failing probe says nothing about the workers.
 */
function sandboxNotHere(
  probe: ProbeReport,
  host: SandboxHost,
  env: Readonly<Record<string, string | undefined>>,
): string | null {
  if (!host.container.container || env.OVERSEER_PREPARE_BWRAP === "1") return null;
  if ([probe.writeInside, probe.writeOutsideDenied, probe.privilegesDropped].every((c) => c.ok)) return null;
  return `not checked in this ${host.container.runtime} container, which runs no sandbox: only the worker service gets what bubblewrap needs (SYS_ADMIN for its entrypoint, the seccomp profile, OVERSEER_PREPARE_BWRAP=1; infra/README.md). Each worker probes its own sandbox at start and turns healthy only after it passed; GET /api/v1/workers lists each worker's sandbox`;
}

/**
 * The configured driver, its version and a live probe (write inside, write outside, network).
 * Returns why the sandbox checks were skipped here (sandboxNotHere), or null.
 */
async function checkSandbox(
  settings: ServiceSettings,
  env: Readonly<Record<string, string | undefined>>,
  add: Add,
): Promise<string | null> {
  const name = settings.sandbox as SandboxDriverName;
  const detection = await detectDriver({ allowUnsafeNone: settings.sandboxUnsafeNone });
  const availability = detection.drivers[name];
  if (!availability.available) {
    add({
      name: `sandbox ${name}`,
      status: "fail",
      detail: availability.detail,
      required: true,
      fix: sandboxDriverFix(name),
    });
    return null;
  }
  if (name === "none") {
    add({
      name: "sandbox none",
      status: "warn",
      detail:
        "UNSAFE: agents run without isolation, with the worker's own rights (OVERSEER_SANDBOX_UNSAFE_NONE=1)",
      required: false,
    });
    return null;
  }
  add({
    name: "egress to internal ranges",
    status: settings.egressAllowPrivate.length > 0 ? "warn" : "ok",
    detail:
      settings.egressAllowPrivate.length > 0
        ? `OPTED IN: allow-listed hosts may resolve to ${settings.egressAllowPrivate.join(", ")} (OVERSEER_EGRESS_ALLOW_PRIVATE)`
        : "loopback, private and link-local destinations are refused by workers started with this environment (OVERSEER_EGRESS_ALLOW_PRIVATE unset here; each worker reads its own, `overseer up` passes its environment on)",
    required: false,
  });
  const probe = await createSandboxDriver(name).probe();
  // After the probe, not beside it: both create and remove the per-worker parent cgroup.
  const host = await detectSandboxHost();
  const skipped = sandboxNotHere(probe, host, env);
  if (skipped !== null) {
    add({ name: `sandbox ${name}`, status: "skip", detail: skipped, required: false });
    return skipped;
  }
  add({
    name: "sandbox host",
    status: host.cgroups.delegated ? "ok" : "warn",
    detail: host.summary,
    required: false,
  });
  add({
    name: `sandbox ${name}`,
    status: "ok",
    detail: probe.version ?? availability.detail,
    required: true,
  });
  const checks = [
    ["write inside", probe.writeInside],
    ["write outside denied", probe.writeOutsideDenied],
    ["network denied", probe.networkDenied],
    ["privileges dropped", probe.privilegesDropped],
  ] as const;
  for (const [label, check] of checks) {
    add({
      name: `sandbox probe: ${label}`,
      status: check.ok ? "ok" : "fail",
      detail: check.detail,
      required: true,
      fix: sandboxProbeFix(name),
    });
  }
  for (const [limit, enforcement] of Object.entries(probe.limits)) {
    add({
      name: `sandbox limit: ${limit}`,
      status: enforcement.enforced ? "ok" : "warn",
      detail: `${enforcement.via}: ${enforcement.detail}`,
      required: false,
    });
  }
  return null;
}

/**
 * gVisor for projects with `sandbox.driver: gvisor` on a worker of another driver: whether runsc
 * is installed, its version and platform, and whether a live probe held (the worker probes the same
 * way at start and refuses such runs when it did not).
 */
async function checkGvisor(settings: ServiceSettings, add: Add): Promise<void> {
  if (settings.sandbox === "gvisor") return; // the sandbox check above probed it
  const gvisor = createSandboxDriver("gvisor");
  try {
    if ((await gvisor.version()) === null) {
      add({
        name: "sandbox gvisor",
        status: "warn",
        detail:
          "runsc not installed: projects with sandbox.driver gvisor are refused by workers like this one",
        required: false,
        fix: sandboxDriverFix("gvisor"),
      });
      return;
    }
    const probe = await gvisor.probe();
    const failed = [probe.writeOutsideDenied, probe.networkDenied, probe.privilegesDropped].filter(
      (c) => !c.ok,
    );
    add({
      name: "sandbox gvisor",
      status: failed.length === 0 && probe.problems.length === 0 ? "ok" : "warn",
      detail:
        failed.length === 0
          ? `${probe.version} works${probe.problems.length > 0 ? `; ${probe.problems.join("; ")}` : ""}`
          : `${probe.version} does not confine here: ${[...probe.problems, ...failed.map((c) => c.detail)].join("; ")}`,
      required: false,
      ...(failed.length === 0 ? {} : { fix: sandboxProbeFix("gvisor") }),
    });
  } finally {
    await gvisor.dispose();
  }
}

async function checkProjects(
  source: ProjectSource,
  io: CliIo,
  add: Add,
  options: {
    deep: boolean;
    project?: string | undefined;
    probeTimeoutMs: number;
    settings: ServiceSettings;
    /** Why the sandbox is not checked here (a service container), or null. */
    sandboxSkipped: string | null;
  },
): Promise<void> {
  let projects: StoredProject[];
  try {
    projects = await source.projects();
  } catch {
    return;
  }
  for (const project of projects) {
    if (options.project && project.id !== options.project) continue;
    let config: RunnerConfig;
    try {
      config = parseRunnerConfig(project.runnerConfig, `runner config of ${project.id}`);
    } catch (error) {
      add({
        name: `${project.id}: runner config`,
        status: "fail",
        detail: error instanceof ConfigError ? error.message : String(error),
        required: true,
        fix: runnerConfigFix(project.id),
      });
      continue;
    }
    const pacing = options.settings.githubWriteIntervalMs;
    for (const check of await forgeRightsChecks(project.id, config, io.env, options.probeTimeoutMs, pacing))
      add(check);
    const images = {
      insecureRegistries: options.settings.imageInsecureRegistries,
      timeoutMs: options.probeTimeoutMs,
    };
    for (const check of await imageChecks(project.id, config, io.env, images)) add(check);
    const unpriced = unpricedBudgetWarning(config, project.budgetUsd);
    if (unpriced) {
      add({ name: `${project.id}: budget`, status: "warn", detail: unpriced, required: false });
    }
    const roles = new Set<string>([DEFAULT_ROLE, ...Object.keys(config.commands_by_role)]);
    for (const role of await source.roles(project.id)) roles.add(role);
    for (const role of [...roles].sort()) {
      for (const action of ["execute", "review"] as const) {
        const argv = commandForRole(config, role, action);
        const name = `${project.id}: harness ${role}/${action}`;
        if (argv.length === 0) {
          add({
            name,
            status: "fail",
            detail: "not configured",
            required: true,
            fix: harnessNotConfiguredFix(
              project.id,
              `commands_by_role.${action === "review" ? "reviewer" : role}`,
            ),
          });
          continue;
        }
        const resolved = resolveExecutable(argv[0] as string, io.env.PATH);
        add(
          resolved
            ? { name, status: "ok", detail: resolved, required: true }
            : {
                name,
                status: "fail",
                detail: `"${argv[0]}" not found or not executable on PATH`,
                required: true,
                fix: harnessNotFoundFix(argv[0] as string),
              },
        );
      }
    }
    const probe = {
      projectId: project.id,
      config,
      roles: [...roles].sort(),
      settings: options.settings,
      env: io.env,
      timeoutMs: options.probeTimeoutMs,
    };
    if (options.sandboxSkipped !== null) {
      await unsandboxedProjectChecks(probe, options.deep, io.env, add);
      continue;
    }
    // The host finding the CLI is not enough: a run execs it inside the sandbox.
    for (const check of await sandboxVisibilityChecks(probe)) add(check);
    if (options.deep) for (const check of await deepProbeProject(probe)) add(check);
  }
}

/**
 * Where no sandbox runs (a service container of the workers' image): each distinct CLI (argv[0],
 * or `$0` of a preset's `sh -c` wrapper) is looked up on this PATH, the image's, instead of
 * inside a sandbox; --deep runs each CLI's version, auth and model call here without a sandbox,
 * which the operator asked for by running it here.
 */
async function unsandboxedProjectChecks(
  probe: Parameters<typeof deepProbeProject>[0],
  deep: boolean,
  env: Readonly<Record<string, string | undefined>>,
  add: Add,
): Promise<void> {
  const clis = new Set<string>();
  for (const role of probe.roles)
    for (const action of ["execute", "review"] as const) {
      const argv = commandForRole(probe.config, role, action);
      if (argv.length > 0) clis.add(cliOf(argv));
    }
  for (const cli of clis) {
    const found = resolveExecutable(cli, env.PATH);
    add(
      found
        ? {
            name: `${probe.projectId}: CLI ${cli}`,
            status: "ok",
            detail: `${found} in this image (no sandbox runs in this container; the workers run it in theirs)`,
            required: true,
          }
        : {
            name: `${probe.projectId}: CLI ${cli}`,
            status: "fail",
            detail: `${cli} is not in this image, so the workers built from it cannot run it either`,
            required: true,
            fix: harnessNotFoundFix(cli),
          },
    );
  }
  if (!deep) return;
  const none = createSandboxDriver("none", { allowUnsafeNone: true });
  try {
    for (const check of await deepProbeProject({ ...probe, driver: none })) add(check);
  } finally {
    await none.dispose();
  }
}
