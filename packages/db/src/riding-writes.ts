/**
 * Writes of a transition that ride on a later statement of it (its events' insert,
 * transition-events.ts) as data-modifying CTEs instead of statements of their own: each write is
 * a round trip fewer on a run's critical path. Postgres runs them with that statement, in its
 * snapshot; none of them may write a row another one of the statement writes.
 *
 * A guarded write must change a row (its RETURNING counts them: a task still at the version read,
 * a run still active). The statement returns the guards' counts; a guard that changed no row
 * throws its conflict after the statement, and the transaction rolls back with everything the
 * statement wrote, as when the write was a statement of its own.
 */
import { type Compilable, type OperationNodeSource, type QueryCreator, type RawBuilder, sql } from "kysely";
import type { Db } from "./connection.ts";
import type { Database } from "./database-schema.ts";

/** A data-modifying query (insert, update or delete; with RETURNING when it is guarded). */
export type RidingQuery = OperationNodeSource & Compilable;

export class RidingWrites {
  private readonly writes: { name: string; query: RidingQuery }[] = [];
  private readonly guards: { name: string; conflict: () => Error }[] = [];
  private readonly reads: { value: RawBuilder<unknown>; take: (value: unknown) => void }[] = [];

  get size(): number {
    return this.writes.length;
  }

  /** A write that may change no row. `name` is unique among the statement's CTEs. */
  add(name: string, query: RidingQuery): void {
    this.writes.push({ name, query });
  }

  /** A write that must change a row (it RETURNS one per row it changed), else `conflict` is thrown. */
  guard(name: string, query: RidingQuery, conflict: () => Error): void {
    this.add(name, query);
    this.guards.push({ name, conflict });
  }

  /**
   * A value the carrying statement reads beside the writes (in its snapshot: it does not see
   * their rows), handed to `take` once the statement ran. Only statements that return `values`
   * carry reads (the project row's update); the events' statement carries none.
   */
  read(value: RawBuilder<unknown>, take: (value: unknown) => void): void {
    this.reads.push({ value, take });
  }

  /** Whether values are waiting to be read (a statement that returns no `values` cannot carry them). */
  get reading(): boolean {
    return this.reads.length > 0;
  }

  /** The reads' values, in order, as one JSON array column of the statement's result. */
  values(): RawBuilder<unknown[]> {
    return sql<unknown[]>`json_build_array(${sql.join(this.reads.map((r) => r.value))})`;
  }

  /** The writes as CTEs of the statement built on the returned query creator. */
  on(creator: QueryCreator<Database>): QueryCreator<Database> {
    // The CTEs' names add nothing the statement reads: it stays typed as on `Database`.
    let on = creator;
    for (const { name, query } of this.writes) on = on.with(name, () => query as never) as never;
    return on;
  }

  /** The guards' row counts, in order, as one column of the statement's result. */
  counts(): RawBuilder<number[]> {
    if (this.guards.length === 0) return sql<number[]>`'{}'::int[]`;
    const counts = this.guards.map(({ name }) => sql`(SELECT count(*) FROM ${sql.table(name)})`);
    return sql<number[]>`ARRAY[${sql.join(counts)}]::int[]`;
  }

  /** Throws the conflict of the first guard whose write changed no row (`counts` as returned). */
  check(counts: readonly number[]): void {
    const failed = this.guards.find((_, i) => !((counts[i] ?? 0) > 0));
    if (failed) throw failed.conflict();
  }

  /**
   * Runs the writes now, as a statement of their own (a later statement reads what they write),
   * checks their guards, and forgets them. Nothing when there are none.
   */
  async flush(db: Db): Promise<void> {
    if (this.writes.length === 0) return;
    const row = await this.on(db).selectNoFrom(this.counts().as("counts")).executeTakeFirstOrThrow();
    this.settled(row.counts);
  }

  /**
   * The writes rode on a statement of the caller's (built on `on`, returning `counts`): checks
   * their guards against the counts it returned, and forgets them.
   */
  settled(counts: readonly number[], values: readonly unknown[] = []): void {
    this.check(counts);
    for (const [i, r] of this.reads.entries()) r.take(values[i]);
    this.writes.length = 0;
    this.guards.length = 0;
    this.reads.length = 0;
  }
}
