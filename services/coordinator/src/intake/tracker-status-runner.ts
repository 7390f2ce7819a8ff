/**
 * Two-way status, tracker side (README "Intake and notifications"). The `tracker_updates`
 * outbox in Postgres says what an intake item's issue is to hear; this sends it with the
 * source's tracker adapter:
 *
 *   transition ──(same transaction)──► tracker_updates row (once per item, moment, occurrence)
 *        └── NOTIFY overseer_tracker_updates ──► pump: the oldest pending update of each issue
 *                                                 ──► `tracker-status` job ──► comment, labels, state
 *
 * One update in flight per issue, in id order (a close on merge never overtakes the PR comment).
 * The comment carries the update's key as its marker, so a retried or redelivered job finds the
 * first comment instead of posting a second; labels and state are idempotent. A failed attempt is
 * retried by BullMQ with exponential backoff; after `notifyAttempts` the update is `dead` (logged,
 * listed with its error; an operator can redeliver it). A periodic sweep re-asks for every head.
 */
import { IntakeConfigSpec } from "@overseer/api-contract";
import {
  type Db,
  getIntakeSource,
  loadTrackerUpdate,
  type NotificationListener,
  pendingTrackerUpdateHeads,
  recordTrackerUpdateOutcome,
  startTrackerUpdateAttempt,
  TRACKER_UPDATE_NOTIFY_CHANNEL,
  type TrackerUpdateRow,
} from "@overseer/db";
import { intakeConfigOf, statusUpdateOf } from "@overseer/intake";
import {
  queueKeyPrefix,
  type Redis,
  TRACKER_STATUS_QUEUE,
  type TrackerStatusQueue,
  trackerStatusJobSchema,
} from "@overseer/queue";
import type { Logger } from "@overseer/runtime";
import { Worker } from "bullmq";
import { adapterOf } from "./intake-runner.ts";

export interface TrackerStatusRunnerDeps {
  readonly db: Db;
  readonly queue: TrackerStatusQueue;
  readonly notifications: NotificationListener;
  readonly workerConnection: Redis;
  readonly logger: Logger;
  /** Where tokens are read (default: process.env). */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** The notification options apply: concurrency, attempts before a dead letter, sweep period. */
export interface TrackerStatusRunnerOptions {
  readonly prefix: string;
  readonly notifyConcurrency: number;
  readonly notifyAttempts: number;
  readonly reconcileIntervalMs: number;
}

export class TrackerStatusRunner {
  readonly #deps: TrackerStatusRunnerDeps;
  readonly #options: TrackerStatusRunnerOptions;
  #worker: Worker | null = null;
  #sweepTimer: NodeJS.Timeout | null = null;
  #unlisten: (() => Promise<void>) | null = null;
  readonly #dirty = new Set<string | null>();
  #pumping: Promise<void> | null = null;
  #stopped = false;

  constructor(deps: TrackerStatusRunnerDeps, options: TrackerStatusRunnerOptions) {
    this.#deps = deps;
    this.#options = options;
  }

  async start(): Promise<void> {
    const log = this.#deps.logger;
    this.#worker = new Worker(TRACKER_STATUS_QUEUE, (job) => this.process(job.data), {
      connection: this.#deps.workerConnection,
      prefix: queueKeyPrefix(this.#options.prefix),
      concurrency: this.#options.notifyConcurrency,
      autorun: true,
    });
    this.#worker.on("error", (error) => log.error({ err: error }, "tracker status worker error"));
    this.#worker.on("failed", (job, error) =>
      log.warn({ job: job?.id, reason: error.message }, "tracker status write failed; retried with backoff"),
    );
    const listener = await this.#deps.notifications.listen(
      TRACKER_UPDATE_NOTIFY_CHANNEL,
      (projectId) => this.pump(projectId),
      () => this.pump(null),
    );
    this.#unlisten = () => listener.unlisten();
    this.#sweepTimer = setInterval(() => this.pump(null), this.#options.reconcileIntervalMs);
    this.pump(null);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#sweepTimer) clearInterval(this.#sweepTimer);
    await this.#unlisten?.().catch(() => undefined);
    await this.#pumping;
    await this.#worker?.close();
    this.#worker = null;
  }

  /** Asks for the oldest pending update of each issue of `projectId` (null: of every project). */
  pump(projectId: string | null): void {
    if (this.#stopped) return;
    this.#dirty.add(projectId);
    if (this.#pumping) return;
    this.#pumping = this.#drain().finally(() => {
      this.#pumping = null;
    });
  }

  async #drain(): Promise<void> {
    while (this.#dirty.size > 0 && !this.#stopped) {
      const all = this.#dirty.has(null);
      const projects = [...this.#dirty].filter((p): p is string => p !== null);
      this.#dirty.clear();
      try {
        const heads = await pendingTrackerUpdateHeads(this.#deps.db, all ? undefined : projects);
        for (const id of heads) await this.#deps.queue.add(id);
      } catch (error) {
        this.#deps.logger.warn({ err: error }, "tracker status pump failed; the next sweep asks again");
      }
    }
  }

  /** One attempt of one update; throws to have BullMQ retry it with backoff. */
  async process(data: unknown): Promise<void> {
    const { updateId } = trackerStatusJobSchema.parse(data);
    const loaded = await loadTrackerUpdate(this.#deps.db, updateId);
    // Delivered, dead or removed since it was asked for: nothing to do (a redelivered job).
    if (loaded?.update.status !== "pending") return;
    if (loaded.waitingFor !== null) {
      await this.#deps.queue.add(loaded.waitingFor);
      return;
    }
    const attempt = await startTrackerUpdateAttempt(this.#deps.db, updateId);
    if (attempt === null) return;
    const { update } = loaded;
    const log = this.#deps.logger.child({ trackerUpdate: update.key, projectId: update.project_id, attempt });
    try {
      await this.#write(update);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      const dead = attempt >= this.#options.notifyAttempts;
      await recordTrackerUpdateOutcome(this.#deps.db, updateId, {
        status: dead ? "dead" : "pending",
        error: message,
      });
      if (!dead) throw error;
      log.warn({ reason: message }, "tracker status update is a dead letter after its last attempt");
      this.pump(update.project_id);
      return;
    }
    await recordTrackerUpdateOutcome(this.#deps.db, updateId, { status: "delivered", error: null });
    log.debug("tracker status update written");
    this.pump(update.project_id);
  }

  /** Comment (marked with the update's key), then labels, then state. */
  async #write(update: TrackerUpdateRow): Promise<void> {
    const source = await getIntakeSource(this.#deps.db, update.source_id);
    if (source === null) throw new Error(`intake source ${update.source_id} is gone; nothing to write to`);
    const adapter = adapterOf(source, this.#deps.env);
    const write = statusUpdateOf(
      source.kind,
      update.moment,
      intakeConfigOf(IntakeConfigSpec.parse(source.config)),
      {
        taskId: update.task_id,
        occurrence: update.occurrence,
        pullRequestUrl: update.data.pullRequestUrl ?? null,
        detail: update.data.detail ?? null,
      },
    );
    if (write.comment) await adapter.comment(update.issue_id, write.comment.body, write.comment.marker);
    if (write.addLabels.length > 0 || write.removeLabels.length > 0)
      await adapter.setLabels(update.issue_id, write.addLabels, write.removeLabels);
    if (write.state !== null) await adapter.setState(update.issue_id, write.state);
  }
}
