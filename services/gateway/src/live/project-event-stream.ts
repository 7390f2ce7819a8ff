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

/**
 * Live transcript messages held for one slow stream; beyond it the oldest are dropped (the
 * client sees a gap in `seq` and reads the run's transcript over HTTP).
 */
const MAX_QUEUED_TRANSCRIPTS = 1000;

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
 * Between them, the live transcript entries of the project's runs go out as `run.transcript`
 * events (`data: { runId, entries }`, no `id:`: they are not stored events, and a resumed stream
 * does not replay them; GET …/runs/{run_id}/transcript has every stored entry).
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
  const transcripts: string[] = [];
  const unsubscribeTranscripts = await input.subscriber.subscribeTranscripts(input.projectId, (message) => {
    transcripts.push(message);
    if (transcripts.length > MAX_QUEUED_TRANSCRIPTS) transcripts.shift();
    handle.wake();
  });
  handle.onEnd(unsubscribeTranscripts);
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
    for (const message of transcripts.splice(0)) {
      if (handle.ended) return;
      await stream.writeSSE({ event: "run.transcript", data: message });
    }
    if (rows.length === PAGE_SIZE) continue;
    const result = await handle.wait(input.keepAliveMs);
    if (result === "timeout") await stream.write(": keep-alive\n\n");
  }
}
