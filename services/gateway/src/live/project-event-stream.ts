import { type Db, listEvents } from "@overseer/db";
import type { SSEStreamingApi } from "hono/streaming";
import { eventView } from "../views/resource-views.ts";
import type { ProjectEventSubscriber } from "./project-event-subscriber.ts";
import type { StreamHandle } from "./stream-registry.ts";

export interface ProjectEventStreamInput {
  readonly db: Db;
  readonly subscriber: ProjectEventSubscriber;
  readonly projectId: string;
  /** Last event id the client has (Last-Event-ID); events after it are sent. */
  readonly cursor: string;
  readonly keepAliveMs: number;
}

/** Events read from Postgres per query of a stream's catch-up. */
const PAGE_SIZE = 500;

/** Reconnection delay suggested to EventSource clients, in ms. */
export const SSE_RETRY_MS = 2000;

/**
 * Streams a project's events as SSE, each with `id:` = its Postgres event id:
 *
 *   subscribe (Redis) → loop { send every event after the cursor (Postgres, in id order);
 *                              sleep until a Redis message, the keep-alive interval, or the end }
 *
 * Postgres is read after the subscription is confirmed, so an event committed at any moment
 * is either in that read or wakes a later one: a client resuming with Last-Event-ID gets
 * exactly the events it missed, in order, whatever happened to Redis meanwhile. Each
 * keep-alive tick also re-reads Postgres (safety poll for lost messages).
 *
 * Known limit: event ids come from one sequence and are assigned before commit, so two
 * transitions of the same project committing in the opposite order of their ids could let a
 * reader pass the lower id before it is visible. Transitions that touch the same tasks or
 * the project row are serialised by optimistic concurrency; the window is the few
 * milliseconds between insert and commit of two unrelated concurrent transitions.
 */
export async function streamProjectEvents(
  stream: SSEStreamingApi,
  handle: StreamHandle,
  input: ProjectEventStreamInput,
): Promise<void> {
  const unsubscribe = await input.subscriber.subscribe(input.projectId, () => handle.wake());
  handle.onEnd(unsubscribe);
  let cursor = input.cursor;
  await stream.write(`retry: ${SSE_RETRY_MS}\n: connected\n\n`);
  while (!handle.ended) {
    const rows = await listEvents(input.db, { projectId: input.projectId, after: cursor, limit: PAGE_SIZE });
    for (const row of rows) {
      if (handle.ended) return;
      const event = eventView(row);
      await stream.writeSSE({ id: event.id, data: JSON.stringify(event) });
      cursor = event.id;
    }
    if (rows.length === PAGE_SIZE) continue;
    const result = await handle.wait(input.keepAliveMs);
    if (result === "timeout") await stream.write(": keep-alive\n\n");
  }
}
