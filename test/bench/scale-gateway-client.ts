/**
 * The gateway probe's client, in a process of its own (scale-gateway-probe.ts forks it:
 * `node --import tsx test/bench/scale-gateway-client.ts`, messages over IPC).
 *
 * It times requests in its own event loop. In the bench process the timings held that process's
 * own delays: its progress reads and report parsing put its event-loop delay at p99 46.8 ms
 * (max 182 ms) while 1,000 projects ran, part of every slow answer the probe reported.
 */
import { Agent, request } from "node:http";
import { gunzipSync } from "node:zlib";

/**
 * What the probe asks of its client: one request, its time answered as `timed`; the open loop
 * over these projects until `end`; `end`, answered as `ended` once the requests in flight are in.
 */
export type ClientRequest =
  | { type: "timed"; id: number; path: string }
  | { type: "begin"; projectIds: string[]; perSecond: number }
  | { type: "end" };

export type ClientReply =
  | { type: "ready" }
  | { type: "timed"; id: number; ms: number | null; error: string | null }
  | { type: "ended"; fleet: number[]; status: number[]; failures: string[]; slowest: SlowRequest[] };

/** One of the slowest requests: its route, when it left (s after `begin`) and its time. */
export interface SlowRequest {
  path: string;
  atSeconds: number;
  ms: number;
}

/** How many of the slowest requests `end` names. */
const SLOWEST = 10;

class Client {
  private stopped = true;
  private timer: NodeJS.Timeout | null = null;
  private readonly inFlight = new Set<Promise<void>>();
  private fleet: number[] = [];
  private status: number[] = [];
  private failures: string[] = [];
  private slowest: SlowRequest[] = [];
  private t0 = 0;
  private readonly agent = new Agent({ keepAlive: true });

  constructor(
    private readonly url: string,
    private readonly token: string,
  ) {}

  /**
   * Requests the fleet `perSecond` times a second and, half an interval later each time, one
   * project's status (the projects in turn), until `end`.
   */
  begin(projectIds: readonly string[], perSecond: number): void {
    this.stopped = false;
    this.fleet = [];
    this.status = [];
    this.failures = [];
    this.slowest = [];
    if (perSecond <= 0) return;
    const interval = 1000 / perSecond;
    const t0 = performance.now();
    this.t0 = t0;
    let tick = 0;
    const fire = () => {
      if (this.stopped) return;
      const i = tick++;
      if (i % 2 === 0) this.send("/api/v1/fleet", this.fleet);
      else {
        const projectId = projectIds[((i - 1) / 2) % Math.max(1, projectIds.length)];
        if (projectId) this.send(`/api/projects/${projectId}/status`, this.status);
      }
      // On schedule (no drift); ticks this loop missed are skipped (pairs of them, so the routes
      // still alternate), not made up in a burst.
      const now = performance.now();
      const late = now - (t0 + (tick * interval) / 2);
      if (late > interval) tick += 2 * Math.floor(late / interval);
      this.timer = setTimeout(fire, Math.max(0, t0 + (tick * interval) / 2 - now));
    };
    fire();
  }

  async end(): Promise<ClientReply> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await Promise.all(this.inFlight);
    return {
      type: "ended",
      fleet: this.fleet,
      status: this.status,
      failures: this.failures,
      slowest: this.slowest,
    };
  }

  private send(path: string, into: number[]): void {
    const failures = this.failures;
    const atSeconds = Math.round(performance.now() - this.t0) / 1000;
    const request = this.timed(path).then(
      (ms) => {
        into.push(ms);
        this.noteSlow({ path, atSeconds, ms: Math.round(ms * 10) / 10 });
      },
      (error: Error) => {
        failures.push(describe(path, error));
      },
    );
    this.inFlight.add(request);
    void request.finally(() => this.inFlight.delete(request));
  }

  private noteSlow(request: SlowRequest): void {
    const last = this.slowest[SLOWEST - 1];
    if (last && last.ms >= request.ms) return;
    this.slowest = [...this.slowest, request].sort((a, b) => b.ms - a.ms).slice(0, SLOWEST);
  }

  /**
   * One request's time until its answer is decoded. It asks for gzip as browsers do and decodes
   * the answer in one call once it has arrived, as a browser's network process does natively:
   * fetch's decoding (a stream of thread-pool round trips per 16 kB) took most of the fleet
   * answer's time at machine load 20 (p50 ~630 ms), a cost of Node's client, not the gateway's.
   */
  timed(path: string): Promise<number> {
    const t0 = performance.now();
    const url = new URL(`${this.url}${path}`);
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

function describe(path: string, error: Error): string {
  const cause = (error as { cause?: { message?: string } }).cause?.message;
  return `GET ${path}: ${error.message}${cause ? ` (${cause})` : ""}`;
}

function reply(message: ClientReply): void {
  process.send?.(message);
}

const { OVERSEER_PROBE_URL: url, OVERSEER_PROBE_TOKEN: token } = process.env;
if (!url || !token || !process.send) {
  process.stderr.write(
    "scale-gateway-client: start it with fork() and OVERSEER_PROBE_URL, OVERSEER_PROBE_TOKEN\n",
  );
  process.exit(2);
}
const client = new Client(url, token);
process.on("message", (message: ClientRequest) => {
  if (message.type === "timed")
    client.timed(message.path).then(
      (ms) => reply({ type: "timed", id: message.id, ms, error: null }),
      (error: Error) =>
        reply({ type: "timed", id: message.id, ms: null, error: describe(message.path, error) }),
    );
  else if (message.type === "begin") client.begin(message.projectIds, message.perSecond);
  else void client.end().then(reply);
});
// The probe's end closes the channel; so does the bench's death.
process.on("disconnect", () => process.exit(0));
reply({ type: "ready" });
