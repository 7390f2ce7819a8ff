import { z } from "zod";
import { TRACKER_STATUS_QUEUE } from "./queue-names.ts";
import type { Redis } from "./redis-connection.ts";
import { RowJobQueue, type RowJobQueueOptions } from "./row-job-queue.ts";

/** One tracker update to write back to an issue (its row in `tracker_updates`). */
export const trackerStatusJobSchema = z.object({ v: z.literal(1), updateId: z.string().regex(/^[0-9]+$/) });
export type TrackerStatusJob = z.infer<typeof trackerStatusJobSchema>;

/**
 * Producer side of the tracker status queue (two-way status, tracker side): one job per row of
 * `tracker_updates`, like the notification queue (see `RowJobQueue`).
 */
export class TrackerStatusQueue extends RowJobQueue {
  constructor(connection: Redis, options: RowJobQueueOptions) {
    super(connection, TRACKER_STATUS_QUEUE, options);
  }

  async add(updateId: string): Promise<void> {
    const job: TrackerStatusJob = trackerStatusJobSchema.parse({ v: 1, updateId });
    await this.addOnce("write", `tracker-status-${updateId}`, job);
  }
}
