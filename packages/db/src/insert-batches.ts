/**
 * Bind parameters one statement may use (Postgres allows 65535); multi-row inserts are split
 * so that no statement goes beyond it, whatever the number of rows.
 */
const MAX_BIND_PARAMETERS = 60_000;

/** `rows` in chunks whose column count times row count stays within `MAX_BIND_PARAMETERS`. */
export function* insertBatches<T extends object>(rows: readonly T[]): Generator<T[]> {
  const columns = rows[0] ? Object.keys(rows[0]).length : 1;
  const size = Math.max(1, Math.floor(MAX_BIND_PARAMETERS / columns));
  for (let start = 0; start < rows.length; start += size) yield rows.slice(start, start + size);
}
