import { sql } from "kysely";
import type { Db } from "./connection.ts";
import { POSTGRES_NOTIFY_CHANNEL } from "./transition-events.ts";

/**
 * A NOTIFY payload on `POSTGRES_NOTIFY_CHANNEL`: the project's id, then, when the commit was a
 * coordinator's, a space and its id. Project ids hold no space (PROJECT_ID_PATTERN).
 */
export function notifyPayload(projectId: string, origin?: string): string {
  return origin ? `${projectId} ${origin}` : projectId;
}

/** The project and origin (null: not a coordinator) of a `POSTGRES_NOTIFY_CHANNEL` payload. */
export function parseNotifyPayload(payload: string): { projectId: string; origin: string | null } {
  const space = payload.indexOf(" ");
  return space < 0
    ? { projectId: payload, origin: null }
    : { projectId: payload.slice(0, space), origin: payload.slice(space + 1) };
}

/** Wakes the listeners of `POSTGRES_NOTIFY_CHANNEL` at commit (notifyPayload). */
export async function notify(db: Db, projectId: string, origin?: string): Promise<void> {
  await sql`SELECT pg_notify(${POSTGRES_NOTIFY_CHANNEL}, ${notifyPayload(projectId, origin)})`.execute(db);
}
