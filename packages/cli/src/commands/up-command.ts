import { createWriteStream, mkdirSync, type WriteStream } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import path from "node:path";
import {
  connectDatabase,
  createApiToken,
  ensureDatabaseExists,
  LATEST_MIGRATION,
  migrateToLatest,
} from "@overseer/db";
import { parseCommandArgs, requirePositive } from "../arg-parser.ts";
import { settingsFrom } from "../cli-context.ts";
import { EXIT_OK, UsageError } from "../cli-errors.ts";
import type { CliIo } from "../cli-io.ts";
import type { CliCommand } from "../command-registry.ts";
import { type ServiceRole, serviceEntries } from "../up/service-entries.ts";
import { type RestartPolicy, SupervisedChild } from "../up/supervised-child.ts";

const usage =
  "overseer up [--workers N] [--port P] [--token-scope read|operate|admin] [--restart-delay-ms MS] [--restart-max-delay-ms MS]";

const DEFAULTS = {
  workers: 1,
  tokenScope: "admin",
  restart: { initialDelayMs: 1000, maxDelayMs: 30_000, stableAfterMs: 60_000 } satisfies RestartPolicy,
  /** Coordinator and gateway: SIGKILL after this when SIGTERM did not end them. */
  serviceStopMs: 15_000,
  /** Workers: their drain (OVERSEER_WORKER_DRAIN_MS) plus this before SIGKILL. */
  workerStopMarginMs: 15_000,
  /** A second signal counts as "stop now" only this long after the first. */
  repeatSignalAfterMs: 1000,
} as const;

const TOKEN_SCOPES = ["read", "operate", "admin"] as const;

/** Readiness of the gateway: how often /readyz is asked, and how long one answer may take. */
const READY_POLL_MS = 250;
const READY_PROBE_TIMEOUT_MS = 2000;

/** pino levels at or above warn are echoed to the terminal; every line goes to the child's log file. */
const ECHO_LEVEL = 40;

/**
 * `overseer up`: the whole local cluster as one supervised command. Migrates, starts the
 * coordinator, the gateway and N workers as child processes (from the production build when
 * run as `dist/overseer.js`, else from the sources), prints the gateway URL and a new token,
 * restarts a crashed child with exponential backoff, and on SIGINT/SIGTERM drains: workers
 * first (each finishes or hands back its runs, OVERSEER_WORKER_DRAIN_MS), then the
 * coordinator and the gateway; exits 0. A second signal cuts the workers' drain short.
 */
export const upCommand: CliCommand = {
  path: ["up"],
  summary: "run the local cluster (coordinator, gateway, N workers) under supervision; Ctrl-C drains",
  usage,
  async run(args, io) {
    const { values } = parseCommandArgs(
      args,
      {
        workers: { type: "string" },
        port: { type: "string" },
        "token-scope": { type: "string" },
        "restart-delay-ms": { type: "string" },
        "restart-max-delay-ms": { type: "string" },
      },
      usage,
      false,
    );
    const workers = requirePositive(values.workers, "--workers") ?? DEFAULTS.workers;
    const scope = values["token-scope"] ?? DEFAULTS.tokenScope;
    if (!(TOKEN_SCOPES as readonly string[]).includes(scope)) {
      throw new UsageError(`--token-scope must be one of ${TOKEN_SCOPES.join(", ")}.\nUsage: ${usage}`);
    }
    if (values.port !== undefined && !/^\d{1,5}$/.test(values.port)) {
      throw new UsageError(`--port expects a port number (0 picks a free one), received "${values.port}"`);
    }
    const restart: RestartPolicy = {
      ...DEFAULTS.restart,
      initialDelayMs:
        requirePositive(values["restart-delay-ms"], "--restart-delay-ms") ?? DEFAULTS.restart.initialDelayMs,
      maxDelayMs:
        requirePositive(values["restart-max-delay-ms"], "--restart-max-delay-ms") ??
        DEFAULTS.restart.maxDelayMs,
    };
    const asked: NodeJS.ProcessEnv = {
      ...io.env,
      ...(values.port === undefined ? {} : { OVERSEER_GATEWAY_PORT: values.port }),
    };
    const given = settingsFrom({ ...io, env: asked });
    const gatewayPort = given.gatewayPort === 0 ? await freePort(given.gatewayHost) : given.gatewayPort;
    const env = { ...asked, OVERSEER_GATEWAY_PORT: String(gatewayPort) };
    const settings = settingsFrom({ ...io, env });
    return runCluster(io, {
      env: { ...env, OVERSEER_DATA_DIR: settings.dataDir },
      databaseUrl: settings.databaseUrl,
      dataDir: settings.dataDir,
      gatewayHost: settings.gatewayHost,
      gatewayPort,
      workers,
      scope: scope as (typeof TOKEN_SCOPES)[number],
      restart,
      workerStopMs: settings.workerDrainMs + settings.killGraceMs + DEFAULTS.workerStopMarginMs,
    });
  },
};

interface ClusterPlan {
  env: NodeJS.ProcessEnv;
  databaseUrl: string;
  dataDir: string;
  gatewayHost: string;
  gatewayPort: number;
  workers: number;
  scope: (typeof TOKEN_SCOPES)[number];
  restart: RestartPolicy;
  workerStopMs: number;
}

async function runCluster(io: CliIo, plan: ClusterPlan): Promise<number> {
  const say = (line: string) => io.out(`overseer up: ${line}`);
  await ensureDatabaseExists(plan.databaseUrl);
  const database = connectDatabase(plan.databaseUrl, { max: 1, applicationName: "overseer-up" });
  let token: string;
  try {
    const applied = await migrateToLatest(database.db);
    say(
      applied.length === 0
        ? `schema current (${LATEST_MIGRATION})`
        : `applied migrations: ${applied.join(", ")}`,
    );
    token = (
      await createApiToken(database.db, {
        name: `overseer-up-${new Date().toISOString()}`,
        scope: plan.scope,
      })
    ).token;
  } finally {
    await database.close();
  }

  const logDir = path.join(plan.dataDir, "up");
  mkdirSync(logDir, { recursive: true });
  const entries = serviceEntries();
  const logs = new Map<string, WriteStream>();
  const gatewayUrl = urlOf(plan.gatewayHost, plan.gatewayPort);

  const children: SupervisedChild[] = [];
  const make = (role: ServiceRole, name: string, extraEnv: NodeJS.ProcessEnv = {}) => {
    const child = new SupervisedChild(
      { name, args: entries.args(role), env: { ...plan.env, ...extraEnv }, cwd: io.cwd },
      plan.restart,
      {
        line(c, line) {
          let log = logs.get(c.name);
          if (!log) {
            log = createWriteStream(path.join(logDir, `${c.name}.log`), { flags: "a" });
            logs.set(c.name, log);
          }
          log.write(`${line}\n`);
          const parsed = parseLogLine(line);
          if (!parsed || (typeof parsed.level === "number" && parsed.level >= ECHO_LEVEL)) {
            io.err(`[${c.name}] ${parsed?.msg ?? line}`);
          }
        },
        started(c, pid, restart) {
          say(`${restart === 0 ? "started" : `restarted (${restart})`} ${c.name} pid ${pid}`);
        },
        crashed(c, exit, delayMs) {
          say(
            delayMs === null
              ? `${c.name} exited (${exit}) and is not restarted; see ${path.join(logDir, `${c.name}.log`)}`
              : `${c.name} exited (${exit}); restarting in ${delayMs} ms`,
          );
          if (delayMs === null) void shutdown("failure");
        },
      },
    );
    children.push(child);
    return child;
  };

  const coordinator = make("coordinator", "coordinator");
  const gateway = make("gateway", "gateway");
  const workerChildren = Array.from({ length: plan.workers }, (_, i) =>
    make("worker", `worker-${i + 1}`, {
      OVERSEER_HEALTH_FILE: path.join(plan.dataDir, "health", `worker-${i + 1}.json`),
    }),
  );

  let stopping: Promise<void> | null = null;
  let beginStop: () => void = () => {};
  const stopBegun = new Promise<void>((resolve) => {
    beginStop = resolve;
  });
  let firstSignalAt: number | null = null;
  const shutdown = (reason: string): Promise<void> => {
    if (stopping) return stopping;
    beginStop();
    say(
      reason === "failure"
        ? "stopping the cluster (a service cannot start)"
        : `${reason}: draining workers, then stopping the coordinator and the gateway`,
    );
    stopping = (async () => {
      await Promise.all(workerChildren.map((w) => w.stop(plan.workerStopMs)));
      await Promise.all([coordinator.stop(DEFAULTS.serviceStopMs), gateway.stop(DEFAULTS.serviceStopMs)]);
    })();
    return stopping;
  };
  const onSignal = (signal: NodeJS.Signals) => {
    // A terminal's Ctrl-C can arrive twice at once (directly and relayed by a tsx or npm
    // parent): only a signal a while after the first one cuts the drain short.
    firstSignalAt ??= Date.now();
    if (Date.now() - firstSignalAt >= DEFAULTS.repeatSignalAfterMs) {
      say(`${signal} again: workers hand their runs back now`);
      for (const w of workerChildren) w.signal("SIGTERM");
    }
    void shutdown(signal);
  };
  const lastResort = () => {
    for (const child of children) child.killNow();
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  process.on("exit", lastResort);

  try {
    say(
      `starting from the ${entries.mode === "built" ? "production build" : "TypeScript sources"}; logs in ${logDir}`,
    );
    for (const child of children) child.start();
    const ready = await Promise.race([waitReady(gatewayUrl, token, stopBegun), stopBegun.then(() => false)]);
    if (ready && !stopping) {
      say(`gateway ${gatewayUrl}`);
      say(`token ${token} (scope ${plan.scope}; export OVERSEER_URL=${gatewayUrl} OVERSEER_TOKEN=…)`);
      say(`dashboard ${gatewayUrl}/ (sign in with the token); Ctrl-C drains and stops`);
    }
    await stopBegun;
    await stopping;
    const failed = children.find((c) => c.failure !== null);
    say(failed ? `stopped: ${failed.failure}` : "stopped");
    return failed ? 2 : EXIT_OK;
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    process.off("exit", lastResort);
    await Promise.all([...logs.values()].map((log) => new Promise<void>((resolve) => log.end(resolve))));
  }
}

function urlOf(host: string, port: number): string {
  const reachable = ["0.0.0.0", "::", "[::]"].includes(host) ? "127.0.0.1" : host;
  return `http://${reachable.includes(":") && !reachable.startsWith("[") ? `[${reachable}]` : reachable}:${port}`;
}

/** A free TCP port on `host` (for `--port 0`: chosen once, so a restarted gateway keeps its URL). */
function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, host, () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Polls the gateway's /readyz with the new token until it answers 200; false when a stop began first. */
async function waitReady(url: string, token: string, stopBegun: Promise<void>): Promise<boolean> {
  let stopped = false;
  void stopBegun.then(() => {
    stopped = true;
  });
  while (!stopped) {
    try {
      const res = await fetch(`${url}/readyz`, {
        headers: { Authorization: `Bearer ${token}` },
        signal: AbortSignal.timeout(READY_PROBE_TIMEOUT_MS),
      });
      await res.body?.cancel();
      if (res.status === 200) return true;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, READY_POLL_MS));
  }
  return false;
}

function parseLogLine(line: string): { level?: unknown; msg?: string } | null {
  if (!line.startsWith("{")) return null;
  try {
    const value = JSON.parse(line) as { level?: unknown; msg?: unknown };
    return { level: value.level, msg: typeof value.msg === "string" ? value.msg : undefined };
  } catch {
    return null;
  }
}
