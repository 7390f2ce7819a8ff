/**
 * Every parameterized statement as a named prepared statement of its connection, named by its
 * text's hash: Postgres parses and analyzes it once per connection, and after a few executions
 * reuses a generic plan when it costs no more than the custom ones (plan_cache_mode auto).
 * Sent unnamed, each statement was parsed and planned on every call: in the scale bench,
 * planning alone was more than half of Postgres' time on the services' statements (the
 * transition's one-statement state load, ~0.6 ms of planning for ~0.15 ms of execution).
 *
 * Nothing else changes: the same text, values, transaction and round trips (a statement's
 * first use on a connection sends its Parse with its Bind, as an unnamed one does).
 */
import { createHash } from "node:crypto";

/**
 * Distinct statements a connection prepares before it is retired (closed on release; the pool
 * opens a new one): each holds its parse tree and plans in the backend's memory, and the
 * statements whose text varies with their rows (a multi-row insert) would otherwise grow it
 * without bound. The services' steady set is a few dozen.
 */
export const PREPARED_PER_CONNECTION = 200;

/** A connection's named statements, and whether it has reached the bound. */
export class PreparedStatements {
  private readonly names = new Set<string>();

  /** True once the connection holds its bound of statements: it is retired when released. */
  get full(): boolean {
    return this.names.size >= PREPARED_PER_CONNECTION;
  }

  /**
   * The arguments of a `client.query` call with the statement named, when it has parameters
   * (Kysely's calls: text and values). Anything else (no values, a query config, a callback)
   * goes as it came: BEGIN and COMMIT stay single simple-protocol messages.
   */
  name(args: readonly unknown[]): unknown[] {
    const [text, values, ...rest] = args;
    if (typeof text !== "string" || !Array.isArray(values) || values.length === 0 || rest.length > 0)
      return [...args];
    const name = statementName(text);
    if (!this.names.has(name)) {
      if (this.full) return [...args];
      this.names.add(name);
    }
    return [{ name, text, values }];
  }
}

/** Statement names by text, computed once per text (a bounded cache, cleared when full). */
const NAMES = new Map<string, string>();
const NAMES_CACHED = 1000;

function statementName(text: string): string {
  let name = NAMES.get(text);
  if (name === undefined) {
    if (NAMES.size >= NAMES_CACHED) NAMES.clear();
    name = `s_${createHash("sha1").update(text).digest("base64url")}`;
    NAMES.set(text, name);
  }
  return name;
}

/**
 * Postgres refuses to run a prepared statement whose result columns a schema change altered
 * (a migration adding a column under `SELECT *`, SQLSTATE 0A000 "cached plan must not change
 * result type"): the statement fails once and its connection is retired, so that the next
 * statement prepares afresh on a new connection.
 */
export function isStalePreparedStatement(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return code === "0A000" && typeof message === "string" && message.includes("cached plan");
}
