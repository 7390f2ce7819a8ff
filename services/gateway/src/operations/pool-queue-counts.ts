import { openRunPools } from "@overseer/db";
import type { QueueCounts } from "@overseer/queue";
import type { GatewayDeps } from "../gateway-options.ts";
import { withTimeout } from "../http/with-timeout.ts";

/**
 * Queue depths of every worker pool: the default one, each pool a queued or running run needs
 * (Postgres) and each pool a live worker serves (heartbeats), so a pool with waiting jobs and no
 * worker is counted too. A source of pool names that cannot be read is left out (the default pool
 * and the other source still count); the counts themselves come from Redis.
 */
export async function poolQueueCounts(
  deps: Pick<GatewayDeps, "db" | "queues" | "registry">,
  staleAfterMs: number,
  timeoutMs: number,
): Promise<QueueCounts> {
  const [open, workers] = await Promise.allSettled([
    withTimeout(openRunPools(deps.db), timeoutMs, "Postgres"),
    withTimeout(deps.registry.list(staleAfterMs), timeoutMs, "Redis"),
  ]);
  const pools = new Set<string>(open.status === "fulfilled" ? open.value : []);
  if (workers.status === "fulfilled") for (const w of workers.value) for (const p of w.pools) pools.add(p);
  return withTimeout(deps.queues.counts(pools), timeoutMs, "Redis");
}
