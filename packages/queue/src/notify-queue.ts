import { z } from "zod";
import { NOTIFY_QUEUE } from "./queue-names.ts";
import type { Redis } from "./redis-connection.ts";
import { RowJobQueue, type RowJobQueueOptions } from "./row-job-queue.ts";

/** One notification delivery to send (its row in `notification_deliveries`). */
export const notifyJobSchema = z.object({ v: z.literal(1), deliveryId: z.string().regex(/^[0-9]+$/) });
export type NotifyJob = z.infer<typeof notifyJobSchema>;

export function notifyJobId(deliveryId: string): string {
  return `notify-${deliveryId}`;
}

/**
 * Producer side of the notification queue (the coordinator's outbox delivery): one job per
 * delivery row (see `RowJobQueue` for ids, retries and the sweep).
 */
export class NotifyQueue extends RowJobQueue {
  constructor(connection: Redis, options: RowJobQueueOptions) {
    super(connection, NOTIFY_QUEUE, options);
  }

  async add(deliveryId: string): Promise<void> {
    const job: NotifyJob = notifyJobSchema.parse({ v: 1, deliveryId });
    await this.addOnce("deliver", notifyJobId(deliveryId), job);
  }
}
