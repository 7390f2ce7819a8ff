import type { Job, RedisClient, WorkerOptions } from "bullmq";
import { Worker } from "bullmq";
import type { SlotGate } from "./slot-gate.ts";

/**
 * The BullMQ Worker of one pool's run queue. It waits for a free slot of the process's shared
 * budget (slot-gate.ts) before it moves a job to active, so a worker serving several pools
 * takes a job only when it can run it; its own `concurrency` is the whole budget.
 */
export class PoolWorker extends Worker {
  constructor(
    queueName: string,
    processor: (job: Job, token: string | undefined) => Promise<void>,
    options: WorkerOptions,
    private readonly slots: SlotGate,
  ) {
    super(queueName, processor, options);
  }

  protected override async moveToActive(client: RedisClient, token: string, name?: string): Promise<Job> {
    await this.slots.whenFree();
    // Closed while it waited: take nothing (BullMQ treats an empty fetch as "no job").
    if (this.closing) return undefined as unknown as Job;
    return super.moveToActive(client, token, name);
  }
}
