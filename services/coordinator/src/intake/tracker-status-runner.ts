/**
 * Two-way status, tracker side (README "Intake and notifications"). The `tracker_updates`
 * outbox in Postgres says what an intake item's issue is to hear; the row delivery pump
 * (../row-delivery-pump.ts) sends it with the source's tracker adapter:
 *
 *   transition ──(same transaction)──► tracker_updates row (once per item, moment, occurrence)
 *        └── NOTIFY overseer_tracker_updates ──► pump: the oldest pending update of each issue
 *                                                 ──► `tracker-status` job ──► comment, labels, state
 *
 * A stream is one issue's updates, in id order (a close on merge never overtakes the PR comment).
 * The comment carries the update's key as its marker, so a retried or redelivered job finds the
 * first comment instead of posting a second; labels and state are idempotent. Credentials that
 * are missing or refused make the update a dead letter at once, its error naming the variable.
 */
import { dashboardPageUrl, IntakeConfigSpec, IntakeQuerySpec } from "@overseer/api-contract";
import {
  type Db,
  getIntakeSource,
  loadTrackerUpdate,
  pendingTrackerUpdateHeads,
  recordTrackerUpdateOutcome,
  startTrackerUpdateAttempt,
  TRACKER_UPDATE_NOTIFY_CHANNEL,
  type TrackerUpdateRow,
} from "@overseer/db";
import { intakeConfigOf, sourceAdapterOf, statusUpdateOf, TrackerCredentialsError } from "@overseer/intake";
import { TRACKER_STATUS_QUEUE, type TrackerStatusQueue, trackerStatusJobSchema } from "@overseer/queue";
import {
  type RowDelivery,
  RowDeliveryPump,
  type RowDeliveryPumpDeps,
  type RowDeliveryPumpOptions,
  type RowOutcome,
} from "../row-delivery-pump.ts";

type Env = Readonly<Record<string, string | undefined>>;

/** Where a source's adapter reads its token (default: process.env), and how its GitHub writes are paced. */
interface AdapterSetup {
  readonly env: Env | undefined;
  readonly pacing: { readonly githubWriteIntervalMs?: number };
}

export interface TrackerStatusRunnerDeps extends Omit<RowDeliveryPumpDeps, "queue"> {
  readonly db: Db;
  readonly queue: TrackerStatusQueue;
  /** Where tokens are read (default: process.env). */
  readonly env?: Env;
}

/**
 * The notification options apply: concurrency, attempts before a dead letter, sweep period; and
 * the dashboard's base URL the comments link to (`OVERSEER_DASHBOARD_URL`; null: no link).
 */
export type TrackerStatusRunnerOptions = RowDeliveryPumpOptions & {
  readonly dashboardUrl?: string | null;
  /** Least ms between two GitHub writes of one token (`OVERSEER_GITHUB_WRITE_INTERVAL_MS`). Default 1000. */
  readonly githubWriteIntervalMs?: number;
};

export class TrackerStatusRunner extends RowDeliveryPump<TrackerUpdateRow, RowOutcome> {
  constructor(deps: TrackerStatusRunnerDeps, options: TrackerStatusRunnerOptions) {
    const pacing = { githubWriteIntervalMs: options.githubWriteIntervalMs };
    super(
      deps,
      options,
      trackerUpdateDelivery(deps.db, { env: deps.env, pacing }, options.dashboardUrl ?? null),
    );
  }
}

/** Tracker updates as rows of the pump. */
function trackerUpdateDelivery(
  db: Db,
  setup: AdapterSetup,
  dashboardUrl: string | null,
): RowDelivery<TrackerUpdateRow, RowOutcome> {
  return {
    what: "tracker status update",
    queueName: TRACKER_STATUS_QUEUE,
    channel: TRACKER_UPDATE_NOTIFY_CHANNEL,
    rowIdOf: (data) => trackerStatusJobSchema.parse(data).updateId,
    heads: (projectIds) => pendingTrackerUpdateHeads(db, projectIds),
    load: async (id) => {
      const loaded = await loadTrackerUpdate(db, id);
      if (loaded === null) return null;
      const { update, waitingFor } = loaded;
      return { pending: update.status === "pending", projectId: update.project_id, waitingFor, work: update };
    },
    startAttempt: (id) => startTrackerUpdateAttempt(db, id),
    send: async (update) => {
      try {
        await writeUpdate(db, update, setup, dashboardUrl);
        return { ok: true, error: null };
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        return { ok: false, error: message, final: error instanceof TrackerCredentialsError };
      }
    },
    record: (id, status, outcome) => recordTrackerUpdateOutcome(db, id, { status, error: outcome.error }),
    logFields: (update) => ({ trackerUpdate: update.key, projectId: update.project_id }),
  };
}

/** Comment (marked with the update's key), then labels, then state. */
async function writeUpdate(
  db: Db,
  update: TrackerUpdateRow,
  setup: AdapterSetup,
  dashboardUrl: string | null,
): Promise<void> {
  const source = await getIntakeSource(db, update.source_id);
  if (source === null) throw new Error(`intake source ${update.source_id} is gone; nothing to write to`);
  const container = IntakeQuerySpec.parse(source.query).container;
  const adapter = sourceAdapterOf(source, container, setup.env ?? process.env, setup.pacing);
  const write = statusUpdateOf(
    source.kind,
    update.moment,
    intakeConfigOf(IntakeConfigSpec.parse(source.config)),
    {
      taskId: update.task_id,
      occurrence: update.occurrence,
      pullRequestUrl: update.data.pullRequestUrl ?? null,
      detail: update.data.detail ?? null,
      bound: update.data.bound ?? null,
      dashboardUrl: dashboardPageUrl(dashboardUrl, update.project_id, update.task_id),
    },
  );
  if (write.comment) await adapter.comment(update.issue_id, write.comment.body, write.comment.marker);
  if (write.addLabels.length > 0 || write.removeLabels.length > 0)
    await adapter.setLabels(update.issue_id, write.addLabels, write.removeLabels);
  if (write.state !== null) await adapter.setState(update.issue_id, write.state);
}
