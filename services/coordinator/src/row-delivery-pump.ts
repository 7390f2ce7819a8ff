/**
 * The row delivery pump: what the coordinator's outboxes in Postgres (notification deliveries,
 * tracker updates) share. Postgres says what is still to send; this turns it into BullMQ jobs and
 * runs them with the kind's own `send`:
 *
 *   transition ──(same transaction)──► row ── NOTIFY <channel> ──► pump: the head of each stream
 *        ──► one job per row (id from the row, RowJobQueue) ──► send ──► delivered | pending | dead
 *
 * One row in flight per stream (the kind's `load` names the older pending row to wait for), in
 * row order. A failed attempt throws, so BullMQ retries it with exponential backoff while the
 * stream waits behind it; after `attempts` (or at once, for a failure no retry can mend) the row
 * is a dead letter: the stream moves on and an operator can redeliver it. Every replica pumps and
 * sends (asking twice adds one job); a periodic sweep re-asks for every head, which rebuilds the
 * queue after a Redis flush or a lost NOTIFY. Delivery is at least once, so `send` is idempotent
 * on the receiving side (a webhook id, a comment marker).
 */
import type { NotificationListener } from "@overseer/db";
import { listenForBullmqErrors, queueKeyPrefix, type Redis } from "@overseer/queue";
import type { Logger } from "@overseer/runtime";
import { Worker } from "bullmq";

/** What one attempt came to. */
export interface RowOutcome {
  readonly ok: boolean;
  readonly error: string | null;
  /** No retry can mend it (missing or refused credentials): a dead letter at once. */
  readonly final?: boolean;
}

/** One row, loaded for an attempt. */
export interface LoadedRow<W> {
  readonly pending: boolean;
  readonly projectId: string;
  /** The older pending row of the same stream that goes first, when it is not this one. */
  readonly waitingFor: string | null;
  readonly work: W;
}

/** One kind of outbox row: its Postgres side and how to send one. */
export interface RowDelivery<W, O extends RowOutcome> {
  /** In logs: "notification", "tracker status update". */
  readonly what: string;
  /** The BullMQ queue its jobs are on and the Postgres NOTIFY channel its rows are announced on. */
  readonly queueName: string;
  readonly channel: string;
  /** The row id a job carries (validated). */
  rowIdOf(jobData: unknown): string;
  /** The head row of each pending stream of these projects (undefined: of every project). */
  heads(projectIds: readonly string[] | undefined): Promise<string[]>;
  load(id: string): Promise<LoadedRow<W> | null>;
  /** Counts an attempt on a pending row: its number, or null when the row is no longer pending. */
  startAttempt(id: string): Promise<number | null>;
  send(work: W): Promise<O>;
  record(id: string, status: "delivered" | "pending" | "dead", outcome: O): Promise<unknown>;
  /** What identifies the row in logs. */
  logFields(work: W): Record<string, unknown>;
}

export interface RowDeliveryPumpDeps {
  readonly queue: { add(rowId: string): Promise<void> };
  readonly notifications: NotificationListener;
  readonly workerConnection: Redis;
  readonly logger: Logger;
}

/** Jobs in parallel, attempts before a dead letter, the sweep period (the coordinator's notify options). */
export interface RowDeliveryPumpOptions {
  readonly prefix: string;
  readonly notifyConcurrency: number;
  readonly notifyAttempts: number;
  readonly reconcileIntervalMs: number;
}

export class RowDeliveryPump<W, O extends RowOutcome> {
  readonly #deps: RowDeliveryPumpDeps;
  readonly #options: RowDeliveryPumpOptions;
  readonly #kind: RowDelivery<W, O>;
  #worker: Worker | null = null;
  #sweepTimer: NodeJS.Timeout | null = null;
  #unlisten: (() => Promise<void>) | null = null;
  /** Projects whose streams to pump next; null entry: all. */
  readonly #dirty = new Set<string | null>();
  #pumping: Promise<void> | null = null;
  #stopped = false;

  constructor(deps: RowDeliveryPumpDeps, options: RowDeliveryPumpOptions, kind: RowDelivery<W, O>) {
    this.#deps = deps;
    this.#options = options;
    this.#kind = kind;
  }

  async start(): Promise<void> {
    const log = this.#deps.logger;
    const what = this.#kind.what;
    this.#worker = new Worker(this.#kind.queueName, (job) => this.process(job.data), {
      connection: this.#deps.workerConnection,
      prefix: queueKeyPrefix(this.#options.prefix),
      concurrency: this.#options.notifyConcurrency,
      autorun: true,
    });
    listenForBullmqErrors(this.#worker, this.#deps.workerConnection, log, `${what} worker`);
    this.#worker.on("failed", (job, error) =>
      log.warn({ job: job?.id, reason: error.message }, `${what} attempt failed; retried with backoff`),
    );
    const listener = await this.#deps.notifications.listen(
      this.#kind.channel,
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

  /** Asks for the head row of each stream of `projectId` (null: of every project). */
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
        const heads = await this.#kind.heads(all ? undefined : projects);
        for (const id of heads) await this.#deps.queue.add(id);
      } catch (error) {
        this.#deps.logger.warn({ err: error }, `${this.#kind.what} pump failed; the next sweep asks again`);
      }
    }
  }

  /** One attempt of one row; throws to have BullMQ retry it with backoff. */
  async process(jobData: unknown): Promise<void> {
    const id = this.#kind.rowIdOf(jobData);
    const loaded = await this.#kind.load(id);
    // Delivered, dead or removed since it was asked for: nothing to do (a redelivered job).
    if (loaded === null || !loaded.pending) return;
    if (loaded.waitingFor !== null) {
      // An older row of the stream goes first; this one is asked for again after it.
      await this.#deps.queue.add(loaded.waitingFor);
      return;
    }
    const attempt = await this.#kind.startAttempt(id);
    if (attempt === null) return;
    const outcome = await this.#kind.send(loaded.work);
    const log = this.#deps.logger.child({ ...this.#kind.logFields(loaded.work), attempt });
    if (outcome.ok) {
      await this.#kind.record(id, "delivered", outcome);
      log.debug(`${this.#kind.what} delivered`);
      this.pump(loaded.projectId);
      return;
    }
    const dead = outcome.final === true || attempt >= this.#options.notifyAttempts;
    await this.#kind.record(id, dead ? "dead" : "pending", outcome);
    if (!dead) throw new Error(outcome.error ?? `${this.#kind.what} failed`);
    log.warn(
      { reason: outcome.error },
      outcome.final === true
        ? `${this.#kind.what} is a dead letter at once: no retry can mend this; redeliver it once fixed`
        : `${this.#kind.what} is a dead letter after its last attempt`,
    );
    this.pump(loaded.projectId);
  }
}
