import type { ProjectStatus, Worker } from "../api/types.ts";

/**
 * The project's queued runs wait in a pool no live worker serves: said loudly, with the fix,
 * so a project never sits silently queued (the gateway works it out from the heartbeats).
 */
export function PoolWaitingNotice({ status }: { status: Pick<ProjectStatus, "pool" | "pool_waiting"> }) {
  if (!status.pool_waiting) return null;
  return (
    <p class="warn" role="status" data-testid="pool-waiting">
      {status.pool_waiting}: its queued runs start once a worker with <code>OVERSEER_WORKER_POOLS</code>{" "}
      naming it is live (see Workers).
    </p>
  );
}

/** A worker's pools, and whether it drains (its pools then count it out). */
export function WorkerPools({ worker }: { worker: Pick<Worker, "pools" | "draining"> }) {
  return (
    <>
      {worker.pools.join(", ")}
      {worker.draining ? <span class="pill warn"> draining</span> : null}
    </>
  );
}
