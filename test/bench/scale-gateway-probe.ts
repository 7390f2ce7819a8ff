/**
 * The scale bench's gateway figure: a real gateway process answering `GET /api/v1/fleet` and
 * `GET /api/projects/{id}/status` one request after another while the busy phase runs, each
 * request timed by the client. The gateway connects as `postgres`, so its statements are not
 * among the services' counted ones. Its routes read the worker heartbeats from Redis, so the
 * bench calibrates the Redis commands one request costs (`calibrate`, on a quiet cluster) and
 * takes the probe's share out of the busy phase's count.
 */
import { createApiToken } from "@overseer/db";
import type { ClusterFixture } from "../support/cluster-fixture.ts";
import { type GatewayProcess, startGatewayProcess } from "../support/gateway-process.ts";
import { type Percentiles, percentiles } from "./stats.ts";

export interface GatewayLatencies {
  requests: number;
  fleetMs: Percentiles;
  statusMs: Percentiles;
}

export class GatewayProbe {
  private stopped = false;
  private loop: Promise<void> = Promise.resolve();
  private readonly fleet: number[] = [];
  private readonly status: number[] = [];

  private constructor(
    private readonly gateway: GatewayProcess,
    private readonly token: string,
  ) {}

  static async start(cluster: ClusterFixture): Promise<GatewayProbe> {
    const { token } = await createApiToken(cluster.scratch.db, { name: "scale-bench", scope: "read" });
    const gateway = await startGatewayProcess(cluster.env({ LOG_LEVEL: "info" }));
    return new GatewayProbe(gateway, token);
  }

  /** Requests the fleet, then one project's status in turn, until `stop`. */
  begin(projectIds: readonly string[]): void {
    this.stopped = false;
    this.fleet.length = 0;
    this.status.length = 0;
    this.loop = (async () => {
      for (let i = 0; !this.stopped; i++) {
        this.fleet.push(await this.timed("/api/v1/fleet"));
        const projectId = projectIds[i % Math.max(1, projectIds.length)];
        if (projectId) this.status.push(await this.timed(`/api/projects/${projectId}/status`));
      }
    })();
  }

  async end(): Promise<GatewayLatencies> {
    this.stopped = true;
    await this.loop;
    return {
      requests: this.fleet.length + this.status.length,
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
    await this.loop.catch(() => undefined);
    await this.gateway.service.kill("SIGTERM");
  }

  private async timed(path: string): Promise<number> {
    const t0 = performance.now();
    const res = await fetch(`${this.gateway.url}${path}`, {
      headers: { Authorization: `Bearer ${this.token}` },
    });
    await res.arrayBuffer();
    if (!res.ok) throw new Error(`scale bench: GET ${path} answered ${res.status}`);
    return performance.now() - t0;
  }
}
