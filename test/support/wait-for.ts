import {
  type Db,
  loadProjectSnapshot,
  type NotificationListener,
  POSTGRES_NOTIFY_CHANNEL,
} from "@overseer/db";
import type { ProjectState } from "@overseer/domain";

/**
 * Waits until `check` holds for a project's state, re-checking on every Postgres NOTIFY of
 * a transition (event-driven; a slow safety poll covers missed notifications). Fails with
 * the last state's task statuses after `timeoutMs`.
 */
export async function waitForState(
  db: Db,
  notifications: NotificationListener,
  projectId: string,
  check: (state: ProjectState) => boolean,
  timeoutMs = 30_000,
): Promise<ProjectState> {
  let wake: () => void = () => {};
  const listener = await notifications.listen(POSTGRES_NOTIFY_CHANNEL, () => wake());
  const deadline = Date.now() + timeoutMs;
  try {
    for (;;) {
      const state = await loadProjectSnapshot(db, projectId);
      if (check(state)) return state;
      const left = deadline - Date.now();
      if (left <= 0) {
        const statuses = [...state.tasks.values()].map(
          (t) => `${t.id}=${t.status}${t.statusReason ? `(${t.statusReason})` : ""}`,
        );
        throw new Error(`timed out after ${timeoutMs} ms waiting on ${projectId}: ${statuses.join(", ")}`);
      }
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, Math.min(left, 500)).unref();
      });
    }
  } finally {
    await listener.unlisten();
  }
}

export function allTasks(state: ProjectState, statuses: readonly string[]): boolean {
  return [...state.tasks.values()].every((t) => statuses.includes(t.status));
}

/**
 * Polls `check` until it returns a value other than undefined/false (errors count as "not
 * yet", e.g. while a database restarts); fails with `what` and the last error after
 * `timeoutMs`.
 */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 30_000,
  intervalMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown = null;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      const why = lastError ? ` (last error: ${(lastError as Error).message})` : "";
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${why}`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
