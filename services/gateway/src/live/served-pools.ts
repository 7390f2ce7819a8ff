import { servedPools } from "@overseer/queue";
import type { GatewayDeps, ResolvedGatewayOptions } from "../gateway-options.ts";
import { withTimeout } from "../http/with-timeout.ts";
import { SharedRefresh } from "./shared-refresh.ts";

/**
 * The pools some live worker serves (the status answer's "waiting for a worker in pool X"), or
 * null when Redis cannot tell: one read of the worker heartbeats shared by every status request
 * for `statusCacheTtlMs` (0: a read per request). Read per request, it was a Redis round trip
 * and the parse of every heartbeat for each status answer (~12 % of the gateway's CPU under the
 * load bench's polling); heartbeats come seconds apart, so a new worker shows within the bound.
 */
export function servedPoolsCache(
  deps: Pick<GatewayDeps, "registry">,
  options: Pick<ResolvedGatewayOptions, "statusCacheTtlMs" | "workerStaleAfterMs" | "readyTimeoutMs">,
): SharedRefresh<ReadonlySet<string> | null> {
  return new SharedRefresh(
    async () => {
      try {
        const workers = deps.registry.list(options.workerStaleAfterMs);
        return servedPools(await withTimeout(workers, options.readyTimeoutMs, "Redis"));
      } catch {
        return null;
      }
    },
    // Stale-while-revalidate: no status request waits for the heartbeats' read (a Redis round
    // trip and the parse of every heartbeat); a pool's waiting shows at most twice the bound late.
    { ttlMs: options.statusCacheTtlMs, staleMs: options.statusCacheTtlMs },
  );
}
