/**
 * Throughput of the operator polling route, `GET /api/projects/{id}/status` (the Argus
 * loop's hot path), measured with autocannon against a listening gateway.
 *
 * `benchGatewayStatus` measures any running gateway; `runGatewayStatusBench` sets one up
 * (scratch database with a realistic project, private Redis prefix, gateway process) and
 * prints its conditions and result as JSON when this file is run directly:
 *
 *   npx tsx test/bench/gateway-bench.ts [--duration 10] [--connections 50] [--tasks 200]
 */
import { randomBytes } from "node:crypto";
import os from "node:os";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { createApiToken, createScratchDatabase } from "@overseer/db";
import { GATEWAY_DEFAULTS } from "@overseer/settings";
import { createTestRedis, deleteRedisKeys, testRedisUrl } from "@overseer/test-support";
import autocannon from "autocannon";
import { type GatewayProcess, startGatewayProcess } from "../support/gateway-process.ts";
import { claimNext, raisePendingCard, seedActiveProject } from "./bench-seed.ts";

export interface GatewayBenchOptions {
  /** Gateway base URL, no trailing slash. */
  url: string;
  /** A token with read scope. */
  token: string;
  /** How long to load the route. */
  durationSeconds: number;
  /** Concurrent HTTP connections. */
  connections: number;
  /** Project to poll; default: the first project the gateway lists. */
  projectId?: string;
}

export interface GatewayBenchResult {
  requestsPerSecond: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  non2xx: number;
  /** Connection errors and timeouts (0 in a healthy run). */
  errors: number;
}

export async function benchGatewayStatus(options: GatewayBenchOptions): Promise<GatewayBenchResult> {
  const headers = { Authorization: `Bearer ${options.token}` };
  let projectId = options.projectId;
  if (!projectId) {
    const res = await fetch(`${options.url}/api/v1/projects`, { headers });
    const body = (await res.json()) as { projects?: { id: string }[] };
    projectId = body.projects?.[0]?.id;
    if (!projectId) throw new Error(`no project to poll at ${options.url} (HTTP ${res.status})`);
  }
  const result = await autocannon({
    url: `${options.url}/api/projects/${encodeURIComponent(projectId)}/status`,
    connections: options.connections,
    duration: options.durationSeconds,
    headers,
  });
  return {
    requestsPerSecond: Math.round(result.requests.average),
    latencyP50Ms: result.latency.p50,
    latencyP99Ms: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  };
}

export interface StatusBenchSetup {
  durationSeconds: number;
  connections: number;
  /** Tasks in the polled project. */
  tasks: number;
  /** Gateway LOG_LEVEL: `info` writes one access-log line per request (production default). Default info. */
  logLevel?: "info" | "warn";
}

/**
 * Sets up a gateway over a scratch database (as its own process, `gateway-main.ts`, like in
 * production, so the load generator does not share its event loop), measures the status
 * route, tears everything down.
 */
export async function runGatewayStatusBench(setup: StatusBenchSetup) {
  const scratch = await createScratchDatabase(undefined, "overseer_bench");
  const prefix = `gwbench-${randomBytes(4).toString("hex")}`;
  let gateway: GatewayProcess | null = null;
  try {
    await seedActiveProject(scratch.db, "bench", setup.tasks, {
      objective: "Benchmark project",
      concurrency: 2,
    });
    // Two pending cards and two queued runs: the status answer carries real content.
    for (let i = 0; i < 2; i++) await raisePendingCard(scratch.db, "bench");
    await claimNext(scratch.db, "bench");
    const { token } = await createApiToken(scratch.db, { name: "bench", scope: "read" });

    gateway = await startGatewayProcess({
      DATABASE_URL: scratch.url,
      REDIS_URL: testRedisUrl(),
      OVERSEER_QUEUE_PREFIX: prefix,
      LOG_LEVEL: setup.logLevel ?? "info",
    });
    const result = await benchGatewayStatus({
      url: gateway.url,
      token,
      durationSeconds: setup.durationSeconds,
      connections: setup.connections,
      projectId: "bench",
    });
    return {
      bench: "gateway-status",
      conditions: {
        cpus: os.cpus().length,
        cpuModel: os.cpus()[0]?.model ?? "unknown",
        node: process.version,
        sameHost: "autocannon, the gateway process, Postgres and Redis share the machine",
        tasks: setup.tasks,
        pendingCards: 2,
        queuedRuns: 2,
        connections: setup.connections,
        durationSeconds: setup.durationSeconds,
        logLevel: setup.logLevel ?? "info",
        tokenCacheTtlMs: GATEWAY_DEFAULTS.tokenCacheTtlMs,
      },
      result,
    };
  } finally {
    if (gateway) await gateway.service.kill("SIGTERM");
    const redis = createTestRedis();
    await deleteRedisKeys(redis, prefix);
    redis.disconnect();
    await scratch.drop();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const { values } = parseArgs({
    options: {
      duration: { type: "string", default: "10" },
      connections: { type: "string", default: "50" },
      tasks: { type: "string", default: "200" },
      "log-level": { type: "string", default: "info" },
    },
  });
  const report = await runGatewayStatusBench({
    durationSeconds: Number(values.duration),
    connections: Number(values.connections),
    tasks: Number(values.tasks),
    logLevel: values["log-level"] === "warn" ? "warn" : "info",
  });
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
}
