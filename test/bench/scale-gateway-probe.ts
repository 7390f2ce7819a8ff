/**
 * The scale bench's gateway figure: a real gateway process answering `GET /api/v1/fleet` and
 * `GET /api/projects/{id}/status` while the busy phase runs, each request timed by the client,
 * p99 per route.
 *
 * Open loop, at a fixed rate (default 10 fleet + 10 status requests a second, `--scale-probe-rate`),
 * like dashboards polling: a request leaves on its schedule whether or not the one before has
 * answered, so a slow answer shows in the percentiles instead of slowing the probe down. The
 * probe used to ask in a closed loop, one request after the other as fast as they came back:
 * that took ~10 % of a 2-core machine away from the services it measured, and the load it put
 * on the gateway depended on how fast the gateway answered.
 *
 * The requests are sent and timed by a client in a process of its own (scale-gateway-client.ts),
 * so that their times are the gateway's and not the bench process's own event-loop delays.
 *
 * The gateway connects as `postgres`, so its statements are not among the services' counted
 * ones. Its routes read the worker heartbeats from Redis, so the bench calibrates the Redis
 * commands one request costs (`calibrate`, on a quiet cluster) and takes the probe's share out
 * of the busy phase's count.
 */
import { type ChildProcess, fork } from "node:child_process";
import { once } from "node:events";
import { writeFileSync } from "node:fs";
import { setPriority } from "node:os";
import { fileURLToPath } from "node:url";
import { createApiToken } from "@overseer/db";
import type { ClusterFixture } from "../support/cluster-fixture.ts";
import { type GatewayProcess, startGatewayProcess } from "../support/gateway-process.ts";
import { REPO_ROOT, type StartServiceOptions } from "../support/service-process.ts";
import type { ClientReply, ClientRequest, SlowRequest } from "./scale-gateway-client.ts";
import { type Percentiles, percentiles } from "./stats.ts";

export interface GatewayLatencies {
  requests: number;
  /** Requests that got no answer (connection errors), and the first messages. */
  failed: number;
  firstFailures: string[];
  fleetMs: Percentiles;
  statusMs: Percentiles;
  /** The slowest requests, when they left (s after the phase began). */
  slowest: SlowRequest[];
  /**
   * The gateway's own event-loop delay over the phase (its /metrics, prom-client's default
   * metrics; null where it reports none): a slow answer with a quiet loop waited outside it.
   */
  gatewayEventLoopMs: { p50: number; p99: number; max: number } | null;
}

const CLIENT = fileURLToPath(new URL("./scale-gateway-client.ts", import.meta.url));

/**
 * The client's niceness, where this process may raise priorities (root, CAP_SYS_NICE). The
 * client stands for a browser on the operator's machine: waiting for a core on the cluster's
 * machine is not part of the gateway's answer time. Measured at 1,000 projects on two cores, at
 * niceness 0 the client itself waited for a core up to 95 ms after its answer had arrived (perf
 * sched: p99 23 ms per wake-up).
 */
const CLIENT_NICE = -10;

export class GatewayProbe {
  private nextId = 0;
  private readonly waiting = new Map<number, (reply: ClientReply & { type: "timed" }) => void>();
  private ended: ((reply: ClientReply & { type: "ended" }) => void) | null = null;
  /** Settles when the client exits; a request or an end then waiting fails with it. */
  private readonly exited: Promise<never>;

  private constructor(
    private readonly gateway: GatewayProcess,
    private readonly client: ChildProcess,
    private readonly token: string,
    /** The client's niceness: CLIENT_NICE, or 0 where this process may not raise it. */
    readonly clientNice: number,
  ) {
    this.exited = once(client, "exit").then(([code, signal]) => {
      throw new Error(`scale bench: the gateway probe's client exited (${signal ?? code})`);
    });
    this.exited.catch(() => undefined);
    client.on("message", (message: ClientReply) => {
      if (message.type === "timed") {
        this.waiting.get(message.id)?.(message);
        this.waiting.delete(message.id);
      } else if (message.type === "ended") this.ended?.(message);
    });
  }

  /**
   * Starts the gateway (listening within `startMs`; from the production build when `services`
   * names one) and the client, and warms the gateway up on the fleet and `warmProjectId`'s status.
   */
  static async start(
    cluster: ClusterFixture,
    warmProjectId: string,
    startMs: number,
    services: StartServiceOptions = {},
  ): Promise<GatewayProbe> {
    const { token } = await createApiToken(cluster.scratch.db, { name: "scale-bench", scope: "read" });
    const gateway = await startGatewayProcess(cluster.env({ LOG_LEVEL: "info" }), startMs, services);
    const client = fork(CLIENT, [], {
      cwd: REPO_ROOT,
      execArgv: ["--import", "tsx"],
      env: { ...process.env, OVERSEER_PROBE_URL: gateway.url, OVERSEER_PROBE_TOKEN: token },
      stdio: ["ignore", "inherit", "inherit", "ipc"],
      // A session (and so, under autogroup, a scheduling group) of its own; it exits when the
      // IPC channel closes, with this process.
      detached: true,
    });
    const clientNice = raisePriority(client.pid ?? 0, CLIENT_NICE);
    const [ready] = (await Promise.race([
      once(client, "message"),
      once(client, "exit").then(([code]) => {
        throw new Error(`scale bench: the gateway probe's client exited (${code}) before it was ready`);
      }),
    ])) as [ClientReply];
    if (ready.type !== "ready") throw new Error(`scale bench: the probe's client said ${ready.type}`);
    const probe = new GatewayProbe(gateway, client, token, clientNice);
    // A fresh process answers its first requests slowly (module loading, JIT); those are not
    // what a polling dashboard sees, and at a few seconds' busy phase they would be its p99.
    for (let i = 0; i < 20; i++) {
      await probe.timed("/api/v1/fleet");
      await probe.timed(`/api/projects/${warmProjectId}/status`);
    }
    return probe;
  }

  /**
   * Requests the fleet `perSecond` times a second and, half an interval later each time, one
   * project's status (the projects in turn), until `end`.
   */
  async begin(projectIds: readonly string[], perSecond: number): Promise<void> {
    // prom-client resets its event-loop histogram on each read: this read starts the phase's.
    await this.gatewayMetrics();
    this.send({ type: "begin", projectIds: [...projectIds], perSecond });
  }

  /** The gateway's process id (tsx's: the gateway runs in its child). */
  get pid(): number {
    return this.gateway.service.child.pid ?? 0;
  }

  /** The client's process id: its CPU is the bench's. */
  get clientPid(): number {
    return this.client.pid ?? 0;
  }

  async end(): Promise<GatewayLatencies> {
    const ended = new Promise<ClientReply & { type: "ended" }>((resolve) => {
      this.ended = resolve;
    });
    this.send({ type: "end" });
    const { fleet, status, failures, slowest } = await Promise.race([ended, this.exited]);
    const metrics = await this.gatewayMetrics();
    // Requests that got no answer are counted, not fatal: at 1,000 projects on a machine at
    // load 25 some fetches failed (no connection) after 30 minutes of a busy phase.
    return {
      requests: fleet.length + status.length,
      failed: failures.length,
      firstFailures: failures.slice(0, 3),
      fleetMs: percentiles(fleet),
      statusMs: percentiles(status),
      slowest,
      gatewayEventLoopMs: eventLoopMs(metrics),
    };
  }

  /** The gateway's /metrics text ("" if it did not answer). */
  private async gatewayMetrics(): Promise<string> {
    const response = await fetch(`${this.gateway.url}/metrics`, {
      headers: { Authorization: `Bearer ${this.token}` },
    }).catch(() => null);
    return response?.ok ? response.text() : "";
  }

  /**
   * Redis commands per probe request: `requests` requests (fleet and status in turn) on a quiet
   * cluster, minus the background rate `idlePerSecond` over the same time.
   */
  async calibrate(
    counter: { reset(): Promise<void>; read(): Promise<{ all: number }> },
    projectId: string | undefined,
    idlePerSecond: number,
    requests = 100,
  ): Promise<number> {
    await counter.reset();
    const t0 = performance.now();
    for (let i = 0; i < requests; i++)
      await this.timed(i % 2 === 0 || !projectId ? "/api/v1/fleet" : `/api/projects/${projectId}/status`);
    const seconds = (performance.now() - t0) / 1000;
    const { all } = await counter.read();
    return Math.max(0, all - idlePerSecond * seconds) / requests;
  }

  async close(): Promise<void> {
    if (this.client.connected) this.client.disconnect();
    await this.exited.catch(() => undefined);
    await this.gateway.service.kill("SIGTERM");
  }

  private send(message: ClientRequest): void {
    this.client.send(message);
  }

  /** One request through the client, its time in ms. */
  private timed(path: string): Promise<number> {
    const id = this.nextId++;
    const answered = new Promise<number>((resolve, reject) => {
      this.waiting.set(id, (reply) => {
        if (reply.ms === null) reject(new Error(reply.error ?? `GET ${path} failed`));
        else resolve(reply.ms);
      });
      this.send({ type: "timed", id, path });
    });
    return Promise.race([answered, this.exited]);
  }
}

/** Sets `pid`'s niceness and its session's (autogroup) to `nice`; 0 where not permitted. */
function raisePriority(pid: number, nice: number): number {
  try {
    setPriority(pid, nice);
  } catch {
    return 0;
  }
  try {
    writeFileSync(`/proc/${pid}/autogroup`, String(nice));
  } catch {
    // No autogroups here: the process's own niceness is the lever.
  }
  return nice;
}

/** prom-client's `nodejs_eventloop_lag_*_seconds` gauges in ms, or null where they are missing. */
function eventLoopMs(metrics: string): GatewayLatencies["gatewayEventLoopMs"] {
  const gauge = (name: string) => {
    const value = new RegExp(`^nodejs_eventloop_lag_${name}_seconds (\\S+)$`, "m").exec(metrics)?.[1];
    return value === undefined ? Number.NaN : Math.round(Number(value) * 10_000) / 10;
  };
  const [p50, p99, max] = [gauge("p50"), gauge("p99"), gauge("max")];
  return Number.isNaN(p50 + p99 + max) ? null : { p50, p99, max };
}
