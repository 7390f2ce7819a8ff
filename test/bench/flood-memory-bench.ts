/**
 * Output flood (issue 9, breach 3): one agent prints `--mb` MiB as fast as it can through the
 * real worker (in-process, bwrap sandbox) and coordinator. Reports the worker process's peak
 * RSS while it drains the flood, and what the run left in Redis (live log stream entries,
 * bytes, MEMORY USAGE) and Postgres (stored output bytes). Measured, never asserted.
 *
 *   npx tsx test/bench/flood-memory-bench.ts --mb 1536
 */
import { parseArgs } from "node:util";
import { ClusterFixture } from "../support/cluster-fixture.ts";
import { waitForState } from "../support/wait-for.ts";

export interface FloodResult {
  flood_mib: number;
  baseline_rss_mib: number;
  peak_rss_mib: number;
  drain_seconds: number;
  redis_stream_entries: number;
  redis_stream_bytes: number;
  redis_key_memory_bytes: number;
  stored_output_bytes: number;
}

export async function runFloodBench(mib: number): Promise<FloodResult> {
  const cluster = await new ClusterFixture().setup();
  try {
    await cluster.startCoordinator();
    await cluster.startWorker(1);
    const agent = `if [ "$OVERSEER_ACTION" = review ]; then exec overseer-agent approve; fi
yes 'flood flood flood flood flood flood flood flood flood flood flood flood flood flood' | head -c ${mib}M
mkdir -p src && echo x > src/x.txt && echo "Flood" | overseer-agent submit --message-file -`;
    global.gc?.();
    const baseline = process.memoryUsage().rss;
    let peak = baseline;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 50);
    const started = Date.now();
    await cluster.addProject({
      id: "flood",
      tasks: [{ id: "S00-001", title: "Flood", scope: ["src/**"] }],
      runnerConfig: ClusterFixture.fakeRunnerConfig({
        argv: ["/bin/sh", "-c", agent],
        timeout_seconds: 1800,
      }),
    });
    const state = await waitForState(
      cluster.scratch.db,
      cluster.scratch.notifications,
      "flood",
      (s) => [...s.tasks.values()].every((t) => t.status !== "in_progress" && t.status !== "todo"),
      1_800_000,
    );
    clearInterval(sampler);
    const drainSeconds = (Date.now() - started) / 1000;
    const run = await cluster.scratch.db
      .selectFrom("runs")
      .select(["id", "output"])
      .where("project_id", "=", "flood")
      .where("action", "=", "execute")
      .executeTakeFirstOrThrow();
    const key = cluster.live.logKey(run.id);
    const rows = await cluster.redis.xrange(key, "-", "+");
    const memory = Number((await cluster.redis.call("MEMORY", "USAGE", key)) ?? 0);
    void state;
    return {
      flood_mib: mib,
      baseline_rss_mib: Math.round(baseline / 2 ** 20),
      peak_rss_mib: Math.round(peak / 2 ** 20),
      drain_seconds: Math.round(drainSeconds),
      redis_stream_entries: rows.length,
      redis_stream_bytes: rows.reduce((n, [, f]) => n + Buffer.byteLength(f[1] ?? ""), 0),
      redis_key_memory_bytes: memory,
      stored_output_bytes: Buffer.byteLength(run.output ?? ""),
    };
  } finally {
    await cluster.teardown();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { mb: { type: "string", default: "512" } } });
  const result = await runFloodBench(Number(values.mb));
  process.stdout.write(`${JSON.stringify({ bench: "flood-memory", ...result })}\n`);
  process.exit(0);
}
