/**
 * The coordinator's tracker intake (README "Intake and notifications"). Postgres holds the
 * sources and what each took; BullMQ carries the work:
 *
 *   poll scheduler per source (every pollMs) ──► `poll`: issues updated since the last poll,
 *                                                  plus the source's live items ──► `read` each
 *   gateway webhook route (verified, stored once) ──► `read` of that issue
 *   `read` ──► readIssue: take → task (or mission), terminal/unassigned → cancel, comments → answers
 *
 * At least once and idempotent by issue id (intake-issue.ts), so a redelivered job, two replicas
 * or a restart mid-read change nothing twice. `sync` (at start and every poll period)
 * rebuilds the poll schedulers from Postgres, so a Redis flush loses no source. Tracker tokens
 * are read here from the host environment variable a source names; they never enter a sandbox.
 */
import { randomUUID } from "node:crypto";
import { IntakeConfigSpec, IntakeQuerySpec } from "@overseer/api-contract";
import {
  type Db,
  getIntakeSource,
  type IntakeSourceRow,
  listIntakeSources,
  liveIntakeIssueIds,
  recordIntakePoll,
} from "@overseer/db";
import type { Command } from "@overseer/domain";
import {
  intakeConfigOf,
  sourceAdapterOf,
  type TrackerAdapter,
  TrackerCredentialsError,
  TrackerTokenNotSetError,
} from "@overseer/intake";
import {
  INTAKE_QUEUE,
  type IntakeQueue,
  intakeJobSchema,
  listenForBullmqErrors,
  queueKeyPrefix,
  type Redis,
} from "@overseer/queue";
import type { Logger } from "@overseer/runtime";
import type { TransitionApplier } from "@overseer/transitions";
import { UnrecoverableError, Worker } from "bullmq";
import { type IssueOutcome, readIssue } from "./intake-issue.ts";

export interface IntakeRunnerDeps {
  readonly db: Db;
  readonly queue: IntakeQueue;
  readonly transitions: Pick<TransitionApplier, "apply">;
  readonly workerConnection: Redis;
  readonly logger: Logger;
  /** Where tokens are read (default: process.env). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Whether a task's open pull request merged on the forge, recorded if so (intake-issue.ts). */
  readonly mergedOnForge?: (projectId: string, taskId: string) => Promise<boolean>;
}

export interface IntakeRunnerOptions {
  readonly prefix: string;
  readonly intakePollMs: number;
  readonly intakeConcurrency: number;
  /** Least ms between two GitHub writes of one token (`OVERSEER_GITHUB_WRITE_INTERVAL_MS`). Default 1000. */
  readonly githubWriteIntervalMs?: number;
}

/**
 * A tracker's refusal of the credentials names the environment variable the token came from; a
 * missing or refused credential is not retried (BullMQ's UnrecoverableError): no attempt can
 * succeed until an operator acts, and the source's last error says what to do.
 */
function credentialsNamed(source: IntakeSourceRow, error: unknown): unknown {
  if (error instanceof TrackerTokenNotSetError) return new UnrecoverableError(error.message);
  if (!(error instanceof TrackerCredentialsError)) return error;
  return new UnrecoverableError(
    `intake source ${source.id}: ${error.message} The token is read from ${source.token_env} on this coordinator; set it there and restart.`,
  );
}

export class IntakeRunner {
  readonly #deps: IntakeRunnerDeps;
  readonly #options: IntakeRunnerOptions;
  #worker: Worker | null = null;
  #syncTimer: NodeJS.Timeout | null = null;
  /** Outcomes since start, by kind (metrics). */
  readonly counts = new Map<IssueOutcome | "poll" | "failed", number>();

  constructor(deps: IntakeRunnerDeps, options: IntakeRunnerOptions) {
    this.#deps = deps;
    this.#options = options;
  }

  async start(): Promise<void> {
    const log = this.#deps.logger;
    this.#worker = new Worker(INTAKE_QUEUE, (job) => this.process(job.data), {
      connection: this.#deps.workerConnection,
      prefix: queueKeyPrefix(this.#options.prefix),
      concurrency: this.#options.intakeConcurrency,
      autorun: true,
    });
    listenForBullmqErrors(this.#worker, this.#deps.workerConnection, log, "intake worker");
    this.#worker.on("failed", (job, error) => {
      this.#count("failed");
      log.warn({ job: job?.id, reason: error.message }, "intake job failed; retried with backoff");
    });
    await this.sync().catch((error) => log.warn({ err: error }, "intake sync failed; retried"));
    this.#syncTimer = setInterval(
      () => void this.sync().catch((error) => log.warn({ err: error }, "intake sync failed; retried")),
      this.#options.intakePollMs,
    );
  }

  async stop(): Promise<void> {
    if (this.#syncTimer) clearInterval(this.#syncTimer);
    await this.#worker?.close();
    this.#worker = null;
  }

  /** One poll scheduler per enabled source, none for others. */
  async sync(): Promise<void> {
    const sources = await listIntakeSources(this.#deps.db, { enabledOnly: true });
    await this.#deps.queue.syncPolls(
      sources.map((s) => s.id),
      this.#options.intakePollMs,
    );
  }

  /** One job; throws to have BullMQ retry it with backoff. */
  async process(data: unknown): Promise<void> {
    const job = intakeJobSchema.parse(data);
    const source = await getIntakeSource(this.#deps.db, job.sourceId);
    if (source === null || !source.enabled) return;
    if (job.kind === "poll") return await this.#poll(source);
    try {
      const outcome = await readIssue(this.#work(source), job.issueId);
      this.#count(outcome);
    } catch (error) {
      const named = credentialsNamed(source, error);
      if (named instanceof UnrecoverableError)
        await recordIntakePoll(this.#deps.db, source.id, { polledAt: null, error: named.message });
      throw named;
    }
  }

  async #poll(source: IntakeSourceRow): Promise<void> {
    const started = new Date().toISOString();
    try {
      const query = IntakeQuerySpec.parse(source.query);
      const adapter = this.#adapterOf(source, query.container);
      const since = source.polled_at ? source.polled_at.toISOString() : null;
      const issues = await adapter.listIssues(query, since);
      const live = await liveIntakeIssueIds(this.#deps.db, source.id);
      for (const id of new Set([...issues.map((i) => i.id), ...live]))
        await this.#deps.queue.read(source.id, id);
      await recordIntakePoll(this.#deps.db, source.id, { polledAt: started, error: null });
      this.#count("poll");
    } catch (error) {
      const named = credentialsNamed(source, error);
      const message = named instanceof Error ? named.message : String(named);
      await recordIntakePoll(this.#deps.db, source.id, { polledAt: null, error: message });
      throw named;
    }
  }

  /** The source's adapter: its token from the environment, GitHub writes paced as set. */
  #adapterOf(source: IntakeSourceRow, container: string): TrackerAdapter {
    return sourceAdapterOf(source, container, this.#deps.env ?? process.env, {
      githubWriteIntervalMs: this.#options.githubWriteIntervalMs,
    });
  }

  #work(source: IntakeSourceRow) {
    const query = IntakeQuerySpec.parse(source.query);
    const adapter = this.#adapterOf(source, query.container);
    return {
      db: this.#deps.db,
      source,
      query,
      config: intakeConfigOf(IntakeConfigSpec.parse(source.config)),
      adapter,
      apply: (projectId: string, command: Command) => this.#deps.transitions.apply(projectId, command),
      newId: () => randomUUID(),
      logger: this.#deps.logger,
      mergedOnForge: this.#deps.mergedOnForge,
    };
  }

  #count(what: IssueOutcome | "poll" | "failed"): void {
    this.counts.set(what, (this.counts.get(what) ?? 0) + 1);
  }
}
