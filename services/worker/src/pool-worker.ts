import type { RunJobPolicy } from "@overseer/queue";
import type { Job, JobJsonRaw, RedisClient, WorkerOptions } from "bullmq";
import { Worker } from "bullmq";
import type { SlotGate } from "./slot-gate.ts";

/**
 * The BullMQ Worker of one pool's run queue. It waits for a free slot of the process's shared
 * budget (slot-gate.ts) before it moves a job to active, so a worker serving several pools
 * takes a job only when it can run it; its own `concurrency` is the whole budget. It applies the
 * run queues' job policy (`RunJobPolicy`: attempts, backoff, what is kept of a finished job) to
 * every job that does not carry its own, which coordinators no longer store on each job.
 */
export class PoolWorker extends Worker {
  constructor(
    queueName: string,
    processor: (job: Job, token: string | undefined) => Promise<void>,
    private readonly policy: RunJobPolicy,
    options: WorkerOptions,
    private readonly slots: SlotGate,
  ) {
    super(queueName, processor, {
      ...options,
      removeOnComplete: policy.removeOnComplete,
      removeOnFail: policy.removeOnFail,
    });
  }

  /** The delivered job, with the policy's attempts and backoff unless it was queued with its own. */
  protected override createJob(data: JobJsonRaw, jobId: string): Job {
    const job = super.createJob(data, jobId);
    // BullMQ reads an absent `attempts` as 0 (one attempt, as 1): such a job carries no policy.
    if (job.opts.attempts === 0 && job.opts.backoff === undefined) {
      job.opts.attempts = this.policy.attempts;
      job.opts.backoff = { ...this.policy.backoff };
    }
    return job;
  }

  protected override async moveToActive(client: RedisClient, token: string, name?: string): Promise<Job> {
    await this.slots.whenFree();
    // Closed while it waited: take nothing (BullMQ treats an empty fetch as "no job").
    if (this.closing) return undefined as unknown as Job;
    return super.moveToActive(client, token, name);
  }
}
