/**
 * The project rows of the projects a coordinator owns, kept in memory so that a scheduling pass
 * or a run result does not read `projects` again (it did ~0.75 times per transition). A cached
 * row stays exact by what can change it:
 *
 * - this coordinator's own commits: a transition that updated the project row hands the row
 *   back as its update left it (`AppliedTransition.projectRow`); one that did not, but read
 *   another version than the cached one, drops the cached row;
 * - anyone else's commits (operators, other replicas, usage reports): their NOTIFY drops it,
 *   and every owned project's row is dropped when the LISTEN connection came back (the
 *   notifications sent while it was down are lost);
 * - a lost lease drops it (another replica schedules the project).
 *
 * A read that was in flight when its project's row was dropped is not cached: it may predate
 * the change. The spend columns (`cost_usd`, `tokens_*`) move with every run's usage without a
 * version; the coordinator drops the row of a project with a budget on each usage it applies
 * (Coordinator.apply), so the budget check never reads a stale spend, and never reads the spend
 * of a project without one.
 */
import { type AppliedTransition, type Db, type ProjectRow, requireProject } from "@overseer/db";

export class ProjectRows {
  private readonly rows = new Map<string, ProjectRow>();
  /** Reads in flight per project; `stale` once the row was dropped meanwhile. */
  private readonly reading = new Map<string, { count: number; stale: boolean }>();
  private reads = 0;

  constructor(
    private readonly db: Db,
    private readonly isOwned: (projectId: string) => boolean,
  ) {}

  /** The cached row, without reading (undefined when there is none). */
  cached(projectId: string): ProjectRow | undefined {
    return this.rows.get(projectId);
  }

  /** The project's row: the cached one, or read (NotFoundError when it does not exist). */
  async get(projectId: string): Promise<ProjectRow> {
    const hit = this.rows.get(projectId);
    if (hit) return hit;
    const flight = this.reading.get(projectId) ?? { count: 0, stale: false };
    this.reading.set(projectId, flight);
    flight.count++;
    this.reads++;
    try {
      const row = await requireProject(this.db, projectId);
      if (!flight.stale && this.isOwned(projectId)) this.rows.set(projectId, row);
      return row;
    } finally {
      if (--flight.count === 0) this.reading.delete(projectId);
    }
  }

  /** After a commit of this coordinator on the project (see the module's comment). */
  noteCommit(projectId: string, applied: AppliedTransition): void {
    if (applied.projectRow) {
      this.drop(projectId);
      if (this.isOwned(projectId)) this.rows.set(projectId, applied.projectRow);
      return;
    }
    const row = this.rows.get(projectId);
    if (row && row.version !== applied.state.project.version) this.drop(projectId);
  }

  /** Drops the project's row: it may have changed. */
  drop(projectId: string): void {
    this.rows.delete(projectId);
    const flight = this.reading.get(projectId);
    if (flight) flight.stale = true;
  }

  /** Drops every row (the notifications that would have dropped them may be lost). */
  dropAll(): void {
    this.rows.clear();
    for (const flight of this.reading.values()) flight.stale = true;
  }

  /** Rows read from Postgres so far (every miss): what the cache saved is observable. */
  get readCount(): number {
    return this.reads;
  }
}
