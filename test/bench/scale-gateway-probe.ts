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
 * The gateway connects as `postgres`, so its statements are not among the services' counted
 * ones. Its routes read the worker heartbeats from Redis, so the bench calibrates the Redis
 * commands one request costs (`calibrate`, on a quiet cluster) and takes the probe's share out
 * of the busy phase's count.
 */
import { Agent, request } from "node:http";
import { gunzipSync } from "node:zlib";
import { createApiToken } from "@overseer/db";
import type { ClusterFixture } from "../support/cluster-fixture.ts";
import { type GatewayProcess, startGatewayProcess } from "../support/gateway-process.ts";
import type { StartServiceOptions } from "../support/service-process.ts";
import { type Percentiles, percentiles } from "./stats.ts";

export interface GatewayLatencies {
  requests: number;
  /** Requests that got no answer (connection errors), and the first messages. */
  failed: number;
  firstFailures: string[];
  fleetMs: Percentiles;
  statusMs: Percentiles;
}

export class GatewayProbe {
  private stopped = false;
  private timer: NodeJS.Timeout | null = null;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly fleet: number[] = [];
  private readonly status: number[] = [];
  private failures: string[] = [];
  private readonly agent = new Agent({ keepAlive: true });

  private constructor(
    private readonly gateway: GatewayProcess,
    private readonly token: string,
  ) {}

  /**
   * Starts the gateway (listening within `startMs`; from the production build when `services`
   * names one) and warms it up on the fleet and `warmProjectId`'s status.
   */
  static async start(
    cluster: ClusterFixture,
    warmProjectId: string,
    startMs: number,
    services: StartServiceOptions = {},
  ): Promise<GatewayProbe> {
    const { token } = await createApiToken(cluster.scratch.db, { name: "scale-bench", scope: "read" });
    const gateway = await startGatewayProcess(cluster.env({ LOG_LEVEL: "info" }), startMs, services);
    const probe = new GatewayProbe(gateway, token);
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
  begin(projectIds: readonly string[], perSecond: number): void {
    this.stopped = false;
    this.fleet.length = 0;
    this.status.length = 0;
    this.failures = [];
    if (perSecond <= 0) return;
    const interval = 1000 / perSecond;
    const t0 = performance.now();
    let tick = 0;
    const fire = () => {
      if (this.stopped) return;
      const i = tick++;
      if (i % 2 === 0) this.send("/api/v1/fleet", this.fleet);
      else {
        const projectId = projectIds[((i - 1) / 2) % Math.max(1, projectIds.length)];
        if (projectId) this.send(`/api/projects/${projectId}/status`, this.status);
      }
      // On schedule (no drift); ticks the bench's event loop missed are skipped (pairs of
      // them, so the routes still alternate), not made up in a burst.
      const now = performance.now();
      const late = now - (t0 + (tick * interval) / 2);
      if (late > interval) tick += 2 * Math.floor(late / interval);
      this.timer = setTimeout(fire, Math.max(0, t0 + (tick * interval) / 2 - now));
    };
    fire();
  }

  /** The gateway's process id (tsx's: the gateway runs in its child). */
  get pid(): number {
    return this.gateway.service.child.pid ?? 0;
  }

  async end(): Promise<GatewayLatencies> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await Promise.all(this.inFlight);
    // Requests that got no answer are counted, not fatal: at 1,000 projects on a machine at
    // load 25 some fetches failed (no connection) after 30 minutes of a busy phase.
    return {
      requests: this.fleet.length + this.status.length,
      failed: this.failures.length,
      firstFailures: this.failures.slice(0, 3),
      fleetMs: percentiles(this.fleet),
      statusMs: percentiles(this.status),
    };
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
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await Promise.all(this.inFlight);
    this.agent.destroy();
    await this.gateway.service.kill("SIGTERM");
  }

  private send(path: string, into: number[]): void {
    const request = this.timed(path).then(
      (ms) => {
        into.push(ms);
      },
      (error: Error) => {
        const cause = (error as { cause?: { message?: string } }).cause?.message;
        this.failures.push(`GET ${path}: ${error.message}${cause ? ` (${cause})` : ""}`);
      },
    );
    this.inFlight.add(request);
    void request.finally(() => this.inFlight.delete(request));
  }

  /**
   * One request's time until its answer is decoded. It asks for gzip as browsers do and decodes
   * the answer in one call once it has arrived, as a browser's network process does natively:
   * fetch's decoding (a stream of thread-pool round trips per 16 kB) took most of the fleet
   * answer's time at machine load 20 (p50 ~630 ms), a cost of Node's client, not the gateway's.
   */
  private timed(path: string): Promise<number> {
    const t0 = performance.now();
    const url = new URL(`${this.gateway.url}${path}`);
    return new Promise((resolve, reject) => {
      const req = request(
        url,
        {
          agent: this.agent,
          headers: { Authorization: `Bearer ${this.token}`, "Accept-Encoding": "gzip" },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (chunk: Buffer) => chunks.push(chunk));
          res.on("error", reject);
          res.on("end", () => {
            try {
              const raw = Buffer.concat(chunks);
              if (res.headers["content-encoding"] === "gzip") gunzipSync(raw);
              const status = res.statusCode ?? 0;
              if (status < 200 || status > 299)
                throw new Error(`scale bench: GET ${path} answered ${status}`);
              resolve(performance.now() - t0);
            } catch (error) {
              reject(error);
            }
          });
        },
      );
      req.on("error", reject);
      req.end();
    });
  }
}
