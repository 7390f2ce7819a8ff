/**
 * Entry point: `tsx services/worker/src/worker-main.ts`. A worker needs Redis, git access to
 * the projects' repositories and Postgres for one thing only: the run fence (run-fence.ts), the
 * check that a run is still live before it starts and around every push. It refuses to start without a working
 * sandbox unless OVERSEER_SANDBOX=none and OVERSEER_SANDBOX_UNSAFE_NONE=1 are both set.
 */
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { connectDatabase } from "@overseer/db";
import { lowerOwnPriority, useProcessSpawner } from "@overseer/process";
import {
  createRedis,
  LiveChannel,
  RunQueues,
  redisTarget,
  resolveLiveOptions,
  resolveQueueOptions,
  WorkerRegistry,
} from "@overseer/queue";
import { type Cidr, parseCidr } from "@overseer/run-contract";
import { createLogger, runUntilSignalled } from "@overseer/runtime";
import {
  createSandboxDriver,
  detectSandboxHost,
  GvisorDriver,
  ImageCache,
  type ProbeReport,
  type SandboxDriver,
} from "@overseer/sandbox";
import { loadSettingsOrExit } from "@overseer/settings";
import { startRunTracing } from "@overseer/telemetry";
import { AgentCliCache } from "./agent-cli-cache.ts";
import { postgresRunFence } from "./run-fence.ts";
import {
  chooseSandbox,
  limitsRefusal,
  unenforcedRunLimits,
  type WorkerLimits,
  type WorkerSandbox,
} from "./sandbox-choice.ts";
import { sandboxWrapFor } from "./sandbox-wrap.ts";
import { resolveWorkerOptions } from "./worker-options.ts";
import { WorkerService } from "./worker-service.ts";

const settings = loadSettingsOrExit("worker");
useProcessSpawner(settings.processSpawner, settings.processSpawnerProgram);
const logger = createLogger({ name: "worker", level: settings.logLevel });
// Below the gateway and the coordinator (service-priority.ts), before any work.
const ownPriority = lowerOwnPriority(settings.workerNice);
logger.info(ownPriority, `worker niceness ${ownPriority.nice}`);

let driver: SandboxDriver;
let workerLimits: WorkerLimits = { container: false, controllers: [], allowUnenforced: true };
/** gVisor for the projects that ask for it (`sandbox.driver: gvisor`), when it works here. */
let gvisorDriver: SandboxDriver | null = null;
let gvisorState: { available: boolean; detail: string } = {
  available: false,
  detail: "runsc was not probed",
};

/** Whether a probe shows the sandbox confining: available, and no write outside, no network, no privileges. */
function probeFailures(probe: ProbeReport): string[] {
  const failed = [probe.writeOutsideDenied, probe.networkDenied, probe.privilegesDropped].filter(
    (c) => !c.ok,
  );
  return !probe.available || failed.length > 0 ? [...probe.problems, ...failed.map((c) => c.detail)] : [];
}

try {
  const allowPrivateCidrs = settings.egressAllowPrivate.map((text) => parseCidr(text) as Cidr);
  if (allowPrivateCidrs.length > 0) {
    logger.warn(
      { allowPrivate: settings.egressAllowPrivate },
      "egress proxy may reach these internal ranges for allow-listed hosts (OVERSEER_EGRESS_ALLOW_PRIVATE)",
    );
  }
  const egress = { allowPrivateCidrs, idleTimeoutMs: settings.egressIdleTimeoutMs };
  driver = createSandboxDriver(settings.sandbox, {
    allowUnsafeNone: settings.sandboxUnsafeNone,
    bwrap: { egress },
    gvisor: { egress },
  });
  if (settings.sandbox !== "none") {
    // A live probe before taking any job: the sandbox must actually confine (this also
    // warms the driver's caches, so the first run pays no setup).
    const problems = probeFailures(await driver.probe());
    if (problems.length > 0) {
      throw new Error(
        `sandbox driver "${settings.sandbox}" does not work on this host (${problems.join("; ") || "not available"}); ` +
          (settings.sandbox === "gvisor"
            ? "install gVisor (apt-get install runsc) or set OVERSEER_SANDBOX=bwrap"
            : "install bubblewrap (apt-get install bubblewrap), or to run agents WITHOUT isolation set OVERSEER_SANDBOX=none and OVERSEER_SANDBOX_UNSAFE_NONE=1"),
      );
    }
  }
  // gVisor for projects that ask for it: probed once here, so such a run is refused up front
  // (never moved to a weaker sandbox) when runsc is missing or does not confine on this host.
  gvisorDriver = driver.name === "gvisor" ? driver : new GvisorDriver({ egress });
  if (driver.name === "gvisor") gvisorState = { available: true, detail: "the worker's own driver" };
  else if ((await gvisorDriver.version()) === null) {
    gvisorState = { available: false, detail: "runsc is not installed" };
  } else {
    const probe = await gvisorDriver.probe();
    const problems = probeFailures(probe);
    gvisorState =
      problems.length === 0
        ? { available: true, detail: probe.version ?? "runsc" }
        : { available: false, detail: problems.join("; ") };
  }
  logger.info(
    { gvisor: gvisorState },
    `gVisor (sandbox.driver: gvisor): ${gvisorState.available ? "works" : "unavailable"}: ${gvisorState.detail}`,
  );
  // What is enforced here: on a host or in a container, with or without delegated cgroups.
  const host = await detectSandboxHost();
  logger.info(
    { container: host.container, cgroups: host.cgroups, sandbox: settings.sandbox },
    `sandbox host: ${host.summary}`,
  );
  workerLimits = {
    container: host.container.container,
    controllers: host.cgroups.controllers,
    allowUnenforced: settings.allowUnenforcedLimits,
  };
  const unenforced = settings.sandbox === "none" ? [] : unenforcedRunLimits(workerLimits);
  if (unenforced.length > 0) {
    logger.warn(
      { unenforced },
      settings.allowUnenforcedLimits
        ? "per-run limits not enforced in this container; OVERSEER_ALLOW_UNENFORCED_LIMITS=1 runs them bounded only by the container's own limits"
        : "per-run limits cannot be enforced in this container: runs are refused (OVERSEER_ALLOW_UNENFORCED_LIMITS=1 runs them anyway; infra/README.md)",
    );
  }
} catch (error) {
  logger.fatal({ err: error }, `worker refuses to start: ${(error as Error).message}`);
  process.exit(2);
}

// A project's sandbox.driver is honoured or its runs are refused (sandbox-choice.ts): "none" runs
// without isolation only where the operator allowed it on this worker.
const workerSandbox: WorkerSandbox = {
  driver: settings.sandbox,
  allowUnsafeNone: settings.sandboxUnsafeNone,
  gvisor: gvisorState,
};
let noneDriver: SandboxDriver | null = null;
function driverFor(job: Parameters<typeof chooseSandbox>[0]): SandboxDriver {
  const choice = chooseSandbox(job, workerSandbox);
  if (choice.ok && choice.driver === "none" && driver.name !== "none") {
    noneDriver ??= createSandboxDriver("none", { allowUnsafeNone: true });
    return noneDriver;
  }
  if (choice.ok && choice.driver === "gvisor" && gvisorDriver !== null) return gvisorDriver;
  return driver;
}

await mkdir(settings.dataDir, { recursive: true });
// Run images (sandbox.image): pulled and unpacked once per digest, shared by this worker's runs.
const images = new ImageCache({
  dir: settings.imageCacheDir ?? path.join(settings.dataDir, "images"),
  maxBytes: settings.imageCacheMb * 1024 * 1024,
  insecureRegistries: settings.imageInsecureRegistries,
  tagTtlMs: settings.imageTagTtlMs,
});
// Agent CLIs named by repositories' .overseer/environment.yml, installed once per image beside it.
const agentClis = new AgentCliCache({
  dir: path.join(settings.imageCacheDir ?? path.join(settings.dataDir, "images"), "agents"),
});
// Traces only when the OTEL_* variables ask for them (README, "Watching runs").
const tracing = await startRunTracing({ serviceName: "overseer-worker" });
if (tracing) logger.info("exporting run traces over OpenTelemetry (OTEL_* variables)");
const redis = createRedis(redisTarget(settings));
// The live log, results, transcripts and heartbeats go over a connection of their own: BullMQ
// defines its Lua scripts (about fifty) on every connection its queues use, and ioredis copies
// each defined command into every pipeline made on such a connection (several per run).
const plain = createRedis(redisTarget(settings));
// One connection per slot (a push holds its run's rows locked) and one to spare.
const database = connectDatabase(settings.databaseUrl, {
  applicationName: "overseer-worker",
  max: settings.workerConcurrency + 1,
  onConnectionError: (error) => logger.warn({ err: error }, "Postgres connection failed; it is reopened"),
});
const service = new WorkerService(
  {
    workerConnection: createRedis(redisTarget(settings)),
    subscriber: createRedis(redisTarget(settings)),
    // The run job policy (attempts and backoff after an infrastructure failure) is the workers'.
    queues: new RunQueues(
      redis,
      resolveQueueOptions({
        prefix: settings.queuePrefix,
        infraAttempts: settings.jobAttempts,
        infraBackoffMs: settings.retryBackoffMs,
      }),
      logger,
      plain,
    ),
    live: new LiveChannel(
      plain,
      resolveLiveOptions({
        prefix: settings.queuePrefix,
        maxLogBytes: settings.maxOutputBytes,
        maxLogEntries: settings.liveLogEntries,
      }),
    ),
    registry: new WorkerRegistry(plain, settings.queuePrefix),
    logger,
    fence: postgresRunFence(database.db, {
      waitMs: settings.fenceWaitMs,
      onRetry: (error) =>
        logger.warn({ err: error }, "Postgres does not answer the run fence; waiting for it"),
    }),
    tracing,
  },
  resolveWorkerOptions({
    id: settings.workerId,
    concurrency: settings.workerConcurrency,
    pools: settings.workerPools,
    dataDir: settings.dataDir,
    prefix: settings.queuePrefix,
    heartbeatIntervalMs: settings.heartbeatIntervalMs,
    lockDurationMs: settings.workerLockMs,
    lockRenewMs: settings.workerLockRenewMs,
    stalledIntervalMs: settings.stalledIntervalMs,
    maxStalledCount: settings.maxStalledCount,
    mirrorFreshMs: settings.mirrorFreshMs,
    killGraceMs: settings.killGraceMs,
    drainMs: settings.workerDrainMs,
    maxOutputBytes: settings.maxOutputBytes,
    maxTranscriptBytes: settings.maxTranscriptBytes,
    diskLimitBytes: settings.runDiskMb * 1024 * 1024,
    diskCheckMs: settings.diskCheckMs,
    maxFiles: settings.runMaxFiles,
    gitTimeoutMs: settings.gitTimeoutMs,
    localPushMaxObjects: settings.localPushMaxObjects,
    // A run's processes never above the worker itself.
    runNice: Math.max(settings.runNice, ownPriority.nice),
    usageReportMs: settings.usageReportMs,
    cliRetryLimit: settings.cliRetryLimit,
    sandboxName: driver.name,
    unsafe: driver.name === "none",
    sandboxFor: async (job, paths, image) =>
      sandboxWrapFor(driverFor(job), job, paths, settings.dataDir, image ?? null),
    imageFor: (reference) => images.acquire(reference),
    agentCliFor: (pkg, digest) => agentClis.install(pkg, digest),
    sandboxDriverFor: (job) => driverFor(job).name,
    // Drained on an operator's request as on SIGTERM: runs finish, then the process exits 0.
    onDrainRequested: () => process.kill(process.pid, "SIGTERM"),
    sandboxRefusal: (job) => {
      const choice = chooseSandbox(job, workerSandbox);
      if (!choice.ok) return choice.message;
      return limitsRefusal(job, choice.driver, workerLimits);
    },
  }),
);
await service.start();
// Liveness for container health checks, kept up while draining; a graceful stop on SIGTERM/SIGINT.
runUntilSignalled({
  service: "worker",
  heartbeatIntervalMs: settings.heartbeatIntervalMs,
  logger,
  // Its drain, then the grace to hand back what still runs and close.
  graceMs: settings.workerDrainMs + settings.shutdownGraceMs,
  stop: async () => {
    await service.stop();
    await driver.dispose();
    if (gvisorDriver !== driver) await gvisorDriver?.dispose();
    await database.close();
    await tracing
      ?.shutdown()
      .catch((error) => logger.warn({ err: error }, "trace export at shutdown failed"));
  },
  // A second signal ends the drain: running runs are aborted and handed back now.
  onSignalWhileStopping: () => service.handBackNow(),
});
