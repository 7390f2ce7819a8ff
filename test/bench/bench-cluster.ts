/**
 * The cluster the fault and latency benchmarks measure: the end-to-end ClusterFixture, but
 * with the services' default lease TTL and reconcile interval (OVERSEER_LEASE_TTL_MS,
 * OVERSEER_RECONCILE_INTERVAL_MS) instead of the fixture's short test ones, so the numbers
 * are those of a production cluster.
 */
import { loadSettings } from "@overseer/settings";
import { ClusterFixture } from "../support/cluster-fixture.ts";

export function benchCluster(sandbox: "bwrap" | "none" = "bwrap"): Promise<ClusterFixture> {
  const defaults = loadSettings({});
  return new ClusterFixture({
    sandbox,
    leaseTtlMs: defaults.leaseTtlMs,
    reconcileIntervalMs: defaults.reconcileIntervalMs,
  }).setup();
}
