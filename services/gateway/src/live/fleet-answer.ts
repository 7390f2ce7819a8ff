import { randomBytes } from "node:crypto";
import { type Db, type FleetProjectRow, listFleetProjects } from "@overseer/db";
import { EncodedBody } from "../http/encoded-body.ts";
import { fleetProjectView, type ThroughputWindow, throughputSeries } from "../views/fleet-view.ts";
import { SharedRefresh } from "./shared-refresh.ts";

/** Fleet throughput: runs ended per 5 minutes over the last hour. */
export const FLEET_THROUGHPUT: ThroughputWindow = { windowSeconds: 3600, bucketSeconds: 300 };

const PROJECTS_OPEN = Buffer.from('{"projects":[');
const COMMA = Buffer.from(",");

/** One project of the answer: its serialized view around its throughput series. */
interface Entry {
  /** `{"id":…,"tokens_out":…,"throughput":` */
  readonly head: string;
  /** `,"updated_at":"…"}` */
  readonly tail: string;
  /** When its runs that ended in the window ended (epoch ms, ascending); pruned as they leave it. */
  ended: number[];
  /** The whole fragment in UTF-8, its series as of a time before `until`; null: not yet made. */
  json: Buffer | null;
  /** When its series changes next (a run moves to the next bucket or leaves the window). */
  until: number;
}

/**
 * The fleet overview (`GET /api/v1/fleet`) kept up to date by what changed, not re-read whole.
 *
 * Each project is kept as its serialized view (its JSON fragment) with the times its recent runs
 * ended. Every change to what the overview shows (a transition, a start, a task import, a usage
 * report that grew the spend) NOTIFYs the project's id, and `changed` marks it; a read
 * (`load`) re-reads only the marked projects (indexed reads of those projects) and joins the
 * fragments, computing each throughput series at the read's time: a read with nothing marked
 * sends no statement. At 1,000 projects a whole read cost ~15 ms of CPU (rows, views,
 * serialization of 400 kB); a read of the few projects a second's transitions touched costs
 * what they hold. Each fragment is kept encoded (UTF-8), so joining the answer again copies
 * bytes: only the changed projects are serialized and encoded, not the 400 kB again (joining
 * 1,000 strings and encoding the result took ~0.3 ms a refresh, the copy ~0.15 ms).
 *
 * The whole fleet is read when no LISTEN connection delivers the notifications (`setNotified`
 * false: every read is whole), when one (re)connects (`changedAll`: notifications may have been
 * missed), and at the first read. Reads run one at a time, each taking the projects marked
 * before it began, so a project marked during a read is read again by the next one and an older
 * read never overwrites a newer one.
 */
export class FleetAnswer {
  private readonly entries = new Map<string, Entry>();
  /** The ids in order; null: projects came or went since it was sorted. */
  private order: string[] | null = null;
  /** The fragments joined, UTF-8; null: one of them changed since. */
  private projects: Buffer | null = null;
  /** Bumped whenever `projects` is joined again: the answer's entity tag with `instance`. */
  private version = 0;
  private readonly instance = randomBytes(6).toString("base64url");
  private marked = new Set<string>();
  private whole = true;
  private notified = false;
  private last: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly db: Db,
    private readonly window: ThroughputWindow,
    private readonly clock: () => number = Date.now,
  ) {}

  /** While true, the notifications are trusted to mark every change (`changed`). */
  setNotified(active: boolean): void {
    if (active !== this.notified) this.whole = true;
    this.notified = active;
  }

  /** The project changed: the next read re-reads it. */
  changed(projectId: string): void {
    this.marked.add(projectId);
  }

  /** Anything may have changed (notifications were missed): the next read is whole. */
  changedAll(): void {
    this.whole = true;
  }

  /**
   * The overview serialized (UTF-8: each request writes these bytes, not a 400 kB string to
   * encode again), after re-reading what changed since the previous read. Its entity tag changes
   * whenever a project's part does (not with `generated_at` alone: a weak tag).
   */
  load(): Promise<EncodedBody> {
    const read = this.last.then(() => this.read());
    this.last = read.catch(() => undefined);
    return read;
  }

  private async read(): Promise<EncodedBody> {
    const whole = this.whole || !this.notified;
    const ids = whole ? null : [...this.marked];
    this.whole = false;
    this.marked = new Set();
    try {
      if (ids === null || ids.length > 0) {
        const rows = await listFleetProjects(this.db, ids, this.window.windowSeconds);
        this.apply(ids, rows);
      }
    } catch (error) {
      // Read again next time.
      if (ids === null) this.whole = true;
      else for (const id of ids) this.marked.add(id);
      throw error;
    }
    return this.serialize(this.clock());
  }

  /** The rows read for `ids` (null: every project) replace their entries; a missing one is gone. */
  private apply(ids: readonly string[] | null, rows: readonly FleetProjectRow[]): void {
    // The order is sorted again only when projects came or went.
    const had = new Set(ids === null ? [] : ids.filter((id) => this.entries.delete(id)));
    if (ids === null) this.entries.clear();
    for (const row of rows) this.entries.set(row.id, entry(row));
    this.projects = null;
    if (ids === null || had.size !== rows.length || rows.some((r) => !had.has(r.id))) this.order = null;
  }

  private serialize(nowMs: number): EncodedBody {
    if (this.order === null) {
      this.order = [...this.entries.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      this.projects = null;
    }
    for (const id of this.order) {
      const e = this.entries.get(id) as Entry;
      if (e.json !== null && nowMs < e.until) continue;
      const windowMs = this.window.windowSeconds * 1000;
      if (e.ended.length > 0 && (e.ended[0] as number) <= nowMs - windowMs)
        e.ended = e.ended.filter((t) => t > nowMs - windowMs);
      e.json = Buffer.from(e.head + JSON.stringify(throughputSeries(e.ended, this.window, nowMs)) + e.tail);
      e.until = seriesChangesAt(e.ended, this.window, nowMs);
      this.projects = null;
    }
    if (this.projects === null) {
      const parts: Buffer[] = [];
      for (const id of this.order) {
        if (parts.length > 0) parts.push(COMMA);
        parts.push((this.entries.get(id) as Entry).json as Buffer);
      }
      this.projects = Buffer.concat(parts);
      this.version++;
    }
    const { windowSeconds, bucketSeconds } = this.window;
    const generatedAt = new Date(nowMs).toISOString();
    const bytes = Buffer.concat([
      PROJECTS_OPEN,
      this.projects,
      Buffer.from(
        `],"window_seconds":${windowSeconds},"bucket_seconds":${bucketSeconds},"generated_at":"${generatedAt}"}`,
      ),
    ]);
    return new EncodedBody(bytes, `fleet-${this.instance}-${this.version}`);
  }
}

/**
 * The answer shared by every poller (`fleetCacheMs`, stale-while-revalidate `fleetStaleMs`,
 * shared-refresh.ts). Each refresh makes the content codings the previous answer was asked for
 * before it is given (off the event loop), so pollers never wait for a compression.
 */
export function sharedFleetAnswer(
  fleet: FleetAnswer,
  options: { readonly fleetCacheMs: number; readonly fleetStaleMs: number },
  onBackgroundError: (error: unknown) => void,
): SharedRefresh<EncodedBody> {
  let previous: EncodedBody | null = null;
  const load = async () => {
    const body = await fleet.load();
    await body.prepareLike(previous);
    previous = body;
    return body;
  };
  return new SharedRefresh(load, {
    ttlMs: options.fleetCacheMs,
    staleMs: options.fleetStaleMs,
    onBackgroundError,
  });
}

/** When the earliest of `endedMs` moves to its next bucket (or out of the window) after `nowMs`. */
function seriesChangesAt(endedMs: readonly number[], window: ThroughputWindow, nowMs: number): number {
  const bucketMs = window.bucketSeconds * 1000;
  let at = Number.POSITIVE_INFINITY;
  for (const t of endedMs) {
    const bucket = Math.max(0, Math.floor((nowMs - t) / bucketMs));
    at = Math.min(at, t + (bucket + 1) * bucketMs);
  }
  return at;
}

/** The row's view serialized around its throughput (the view's last two keys). */
function entry(row: FleetProjectRow): Entry {
  const { throughput: _, updated_at, ...rest } = fleetProjectView(row, []);
  return {
    head: `${JSON.stringify(rest).slice(0, -1)},"throughput":`,
    tail: `,"updated_at":${JSON.stringify(updated_at)}}`,
    ended: row.ended_ms,
    json: null,
    until: 0,
  };
}
