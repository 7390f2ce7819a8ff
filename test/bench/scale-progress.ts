/**
 * The scale bench's waits, each bounded: a phase fails at once, naming itself and how far it
 * got, when its bound passes, when nothing progressed for the stall bound, or when one of its
 * projects pauses (with each paused project's reason, read from Postgres). A bench that waits
 * silently at load 0 measures nothing.
 *
 * The bench reads progress with one statement at most every `PROGRESS_MIN_INTERVAL_MS` (woken
 * early by a NOTIFY, so a phase's end is seen within that interval), not on every NOTIFY: at
 * 1,000 projects the services send hundreds a second and counting after each one made the
 * bench a noticeable Postgres client of its own. It connects as `postgres`, so none of its
 * statements are among the services' counted ones.
 */
import { type Db, type NotificationListener, POSTGRES_NOTIFY_CHANNEL, sql } from "@overseer/db";

/** At most one progress read per this many ms. */
export const PROGRESS_MIN_INTERVAL_MS = 250;
/** A progress line on stderr this often while a phase waits. */
const PROGRESS_LOG_MS = 10_000;

/** How far the cluster got, from one statement. */
export interface Progress {
  tasksDone: number;
  runsRunning: number;
  /** Runs that ended (finished, failed, ...): at 1,000 projects every executor run ends before the first review, so tasks finish late while runs end all along. */
  runsEnded: number;
  /** Projects of the phase (id prefix) that are paused. */
  paused: number;
}

/** What a phase waits for, and its bounds. */
export interface PhaseWait {
  /** Named in messages: `busy`, `long runs start`, ... */
  phase: string;
  /** The projects of this phase: ids starting with it. */
  prefix: string;
  /** Done when this holds. */
  until: (p: Progress) => boolean;
  /** What "how far" means for this phase, e.g. `532 of 2000 tasks done`. */
  describe: (p: Progress) => string;
  /** The phase fails after this long. */
  boundMs: number;
  /** ...or when what `progressOf` returns did not move for this long. */
  stallMs: number;
  /** The figure that must keep moving (tasks done, runs running). */
  progressOf: (p: Progress) => number;
  /** Why the phase cannot finish any more (a service exited), or null. */
  broken?: () => string | null;
}

export class ScalePhaseError extends Error {
  override name = "ScalePhaseError";
}

export class ScaleProgress {
  constructor(
    private readonly db: Db,
    private readonly notifications: NotificationListener,
    private readonly log: (line: string) => void = (line) => process.stderr.write(`[bench] ${line}\n`),
  ) {}

  async read(prefix: string): Promise<Progress> {
    const { rows } = await sql<{ done: string; running: string; ended: string; paused: string }>`
      SELECT (SELECT count(*) FROM tasks WHERE status = 'done')::text AS done,
             (SELECT count(*) FROM runs WHERE status = 'running')::text AS running,
             (SELECT count(*) FROM runs WHERE status NOT IN ('queued', 'running'))::text AS ended,
             (SELECT count(*) FROM projects WHERE status = 'paused' AND id LIKE ${`${prefix}%`})::text AS paused`.execute(
      this.db,
    );
    const row = rows[0];
    return {
      tasksDone: Number(row?.done ?? 0),
      runsRunning: Number(row?.running ?? 0),
      runsEnded: Number(row?.ended ?? 0),
      paused: Number(row?.paused ?? 0),
    };
  }

  /** Waits until `wait.until` holds; throws a ScalePhaseError on a bound or a paused project. */
  async waitFor(wait: PhaseWait): Promise<Progress> {
    let wake: () => void = () => {};
    const listener = await this.notifications.listen(POSTGRES_NOTIFY_CHANNEL, () => wake());
    try {
      const t0 = Date.now();
      let moved = t0;
      let logged = t0;
      let last = Number.NaN;
      for (;;) {
        const readAt = Date.now();
        const progress = await this.read(wait.prefix);
        if (wait.until(progress)) return progress;
        const now = Date.now();
        if (wait.progressOf(progress) !== last) {
          last = wait.progressOf(progress);
          moved = now;
        }
        if (progress.paused > 0) throw await this.failure(wait, progress, "a project of the phase paused");
        const broken = wait.broken?.() ?? null;
        if (broken !== null) throw await this.failure(wait, progress, broken);
        if (now - t0 > wait.boundMs)
          throw await this.failure(
            wait,
            progress,
            `its bound of ${Math.round(wait.boundMs / 1000)} s passed`,
          );
        if (now - moved > wait.stallMs)
          throw await this.failure(
            wait,
            progress,
            `nothing progressed for ${Math.round(wait.stallMs / 1000)} s (the stall bound)`,
          );
        if (now - logged >= PROGRESS_LOG_MS) {
          logged = now;
          this.log(
            `scale ${wait.phase}: ${wait.describe(progress)} after ${Math.round((now - t0) / 1000)} s`,
          );
        }
        // Woken by a NOTIFY or after a second, but never sooner than the interval after the last read.
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, 1000).unref();
        });
        const since = Date.now() - readAt;
        if (since < PROGRESS_MIN_INTERVAL_MS) await sleep(PROGRESS_MIN_INTERVAL_MS - since);
      }
    } finally {
      await listener.unlisten();
    }
  }

  /** The error of a failed phase: where it stopped, tasks by status, each paused project's reason. */
  private async failure(wait: PhaseWait, progress: Progress, why: string): Promise<ScalePhaseError> {
    const byStatus = await this.db
      .selectFrom("tasks")
      .select(["status", (eb) => eb.fn.countAll<string>().as("n")])
      .where("project_id", "like", `${wait.prefix}%`)
      .groupBy("status")
      .execute();
    const paused = await this.db
      .selectFrom("projects")
      .select(["id", "status_reason"])
      .where("status", "=", "paused")
      .where("id", "like", `${wait.prefix}%`)
      .orderBy("updated_at")
      .limit(10)
      .execute();
    const lines = [
      `scale bench: phase "${wait.phase}" failed: ${why}.`,
      `  how far: ${wait.describe(progress)}; ${progress.runsRunning} runs running`,
      `  tasks of ${wait.prefix}* by status: ${byStatus.map((r) => `${r.status} ${r.n}`).join(", ") || "none"}`,
    ];
    if (progress.paused > 0) {
      lines.push(
        `  paused projects: ${progress.paused}${progress.paused > paused.length ? " (first 10)" : ""}`,
      );
      for (const p of paused) lines.push(`    ${p.id}: ${p.status_reason ?? "(no reason recorded)"}`);
    }
    return new ScalePhaseError(lines.join("\n"));
  }
}

/** A phase's bound: `--scale-phase-timeout-seconds` when given (> 0), else `base + perUnit × units` seconds. */
export function boundMs(given: number, base: number, perUnit: number, units: number): number {
  return (given > 0 ? given : base + perUnit * units) * 1000;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
