import type { ProjectRow } from "@overseer/db";
import { DEFAULT_POOL, poolWaiting } from "@overseer/queue";

/** The worker pool a project's runs need: its runner config's `pool`, `default` when it names none. */
export function projectPool(project: Pick<ProjectRow, "runner_config">): string {
  const pool = (project.runner_config as Record<string, unknown> | null)?.pool;
  return typeof pool === "string" ? pool : DEFAULT_POOL;
}

/**
 * "waiting for a worker in pool jdk" while the project has queued runs and no live worker serves
 * its pool (`served`: the pools of the live, non-draining workers' heartbeats, read when asked).
 * Null when nothing is queued, or when the heartbeats could not be read (`served` null: nothing
 * is claimed that was not seen).
 */
export function poolWaitingText(
  project: Pick<ProjectRow, "runner_config">,
  runs: readonly { status: string }[],
  served: ReadonlySet<string> | null,
): string | null {
  if (!served || !runs.some((r) => r.status === "queued")) return null;
  return poolWaiting(projectPool(project), served);
}
