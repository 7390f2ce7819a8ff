import { z } from "./openapi-zod.ts";

/** Live workers (their heartbeats) and an operator's drain of one (`overseer workers`). */

const isoTime = z.string().openapi({ format: "date-time", example: "2025-01-01T12:00:00.000Z" });

export const WorkerSchema = z
  .object({
    id: z.string(),
    host: z.string(),
    pid: z.number().int(),
    slots: z.number().int(),
    pools: z.array(z.string()).openapi({
      description: "The worker pools it serves (`OVERSEER_WORKER_POOLS`), sharing its slots.",
    }),
    draining: z.boolean().openapi({
      description: "Stopping: it finishes what it runs and takes no new job, so its pools count it out.",
    }),
    sandbox: z.string(),
    unsafe: z.boolean(),
    current_jobs: z.array(
      z.object({
        run_id: z.string(),
        project_id: z.string(),
        task_id: z.string(),
        action: z.string(),
        since: isoTime,
      }),
    ),
    started_at: isoTime,
    heartbeat_at: isoTime,
  })
  .openapi("Worker");

/** GET /api/v1/workers. */
export const WorkerListSchema = z
  .object({
    workers: z.array(WorkerSchema),
    stale_after_ms: z
      .number()
      .int()
      .openapi({ description: "A worker whose last heartbeat is older is gone." }),
  })
  .openapi("WorkerList");

/** POST /api/v1/workers/{worker_id}/drain. */
export const WorkerDrainSchema = z
  .object({
    worker: WorkerSchema.openapi({
      description: "The worker as its last heartbeat showed it (before the drain).",
    }),
    requested_at: isoTime,
  })
  .openapi("WorkerDrain");

export type Worker = z.infer<typeof WorkerSchema>;
