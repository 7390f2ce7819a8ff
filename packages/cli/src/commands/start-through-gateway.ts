import { setTimeout as delay } from "node:timers/promises";
import {
  EventPageSchema,
  ProjectListSchema,
  ProjectStartedSchema,
  ProjectStatusSchema,
} from "@overseer/api-contract";
import type { z } from "zod";
import { EXIT_OK, UsageError } from "../cli-errors.ts";
import type { CliIo } from "../cli-io.ts";
import { withGateway } from "../command-target.ts";
import type { GatewayClient } from "../gateway-client.ts";

const enc = encodeURIComponent;
/** Events per request while following. */
const EVENT_PAGE = 1000;
/** Pause between two looks at the followed projects. */
const FOLLOW_POLL_MS = 2000;

/** The line `start` prints per project, on either path. */
export function startedLine(id: string, stage: string | null, sessionsLimit: number | null): string {
  return `started ${id}${stage ? ` (stage ${stage})` : ""}, max_sessions ${sessionsLimit ?? "unbounded"}`;
}

export interface GatewayStart {
  project: string | undefined;
  stage: string | null;
  maxSessions: number | undefined;
  continuous: boolean | undefined;
  follow: boolean;
}

/** `start` through POST /api/v1/projects/{id}/start (operate), for one project or every one. */
export async function startThroughGateway(
  client: GatewayClient,
  io: CliIo,
  start: GatewayStart,
): Promise<number> {
  return withGateway(async () => {
    const ids = start.project
      ? [start.project]
      : (await client.get("/api/v1/projects", ProjectListSchema)).projects.map((p) => p.id);
    if (ids.length === 0) throw new UsageError("No project exists yet; create one with `overseer init`.");
    const cursors = new Map<string, string | null>();
    if (start.follow) for (const id of ids) cursors.set(id, await latestEvent(client, id));
    for (const id of ids) {
      const { project } = await client.post(
        `/api/v1/projects/${enc(id)}/start`,
        {
          ...(start.stage !== null ? { stage: start.stage } : {}),
          ...(start.maxSessions !== undefined ? { max_sessions: start.maxSessions } : {}),
          ...(start.continuous !== undefined ? { continuous: start.continuous } : {}),
        },
        ProjectStartedSchema,
      );
      io.out(startedLine(id, project.stage, project.sessions_limit));
    }
    if (!start.follow) return EXIT_OK;
    return followThroughGateway(client, io, cursors);
  });
}

/** The id of a project's newest event (null: none yet), paging from the first. */
async function latestEvent(client: GatewayClient, projectId: string): Promise<string | null> {
  let after: string | null = null;
  for (;;) {
    const page: z.output<typeof EventPageSchema> = await client.get(
      `/api/v1/projects/${enc(projectId)}/events?limit=${EVENT_PAGE}${after ? `&after=${enc(after)}` : ""}`,
      EventPageSchema,
    );
    after = page.next_after;
    if (page.events.length < EVENT_PAGE) return after;
  }
}

/**
 * Prints each followed project's events as they happen until none is busy: a project is busy
 * while it is active and has a run going or work left (todo, in progress, in review) and no
 * question waiting for the operator.
 */
async function followThroughGateway(
  client: GatewayClient,
  io: CliIo,
  cursors: Map<string, string | null>,
): Promise<number> {
  for (;;) {
    let busy = false;
    for (const [id, after] of cursors) {
      const page = await client.get(
        `/api/v1/projects/${enc(id)}/events?limit=${EVENT_PAGE}${after ? `&after=${enc(after)}` : ""}`,
        EventPageSchema,
      );
      for (const e of page.events) io.out(`${e.created_at} ${e.project_id} ${e.task_id ?? "-"} ${e.type}`);
      cursors.set(id, page.next_after);
      if (page.events.length === EVENT_PAGE) {
        busy = true;
        continue;
      }
      const status = await client.get(`/api/projects/${enc(id)}/status`, ProjectStatusSchema);
      const open = (status.counts.todo ?? 0) + (status.counts.in_progress ?? 0) + (status.counts.review ?? 0);
      if (
        status.status === "active" &&
        (status.running.length > 0 || (open > 0 && status.pending_count === 0))
      )
        busy = true;
    }
    if (!busy) return EXIT_OK;
    await delay(FOLLOW_POLL_MS);
  }
}
