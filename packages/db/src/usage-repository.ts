import type { Usage } from "@overseer/domain";
import { sql } from "kysely";
import type { Db } from "./connection.ts";

/**
 * Records a run's usage as the largest of what it already has and `usage`, field by field, and
 * adds what grew to its project. Reports are cumulative (the worker counts as the run goes,
 * usage-tracker.ts in the worker), so a repeat, a reordered or redelivered report and the run's
 * final result never count twice, and a smaller report lowers nothing. Usage without a cost is
 * unpriced: its tokens go to `tokens_unpriced`, never to the spend as $0. True when something
 * grew.
 */
export async function recordRunUsage(
  db: Db,
  projectId: string,
  runId: string,
  usage: Usage,
): Promise<boolean> {
  const count = (n: number | undefined) => Math.max(0, Math.round(Number.isFinite(n) ? (n as number) : 0));
  const tokensIn = count(usage.tokensIn);
  const tokensOut = count(usage.tokensOut);
  const tokensCached = Math.min(count(usage.tokensCached), tokensIn);
  const priced = usage.costUsd !== undefined && Number.isFinite(usage.costUsd);
  const cost = priced ? Math.max(0, usage.costUsd as number) : 0;
  const unpriced = priced ? 0 : tokensIn + tokensOut;
  if (tokensIn === 0 && tokensOut === 0 && cost === 0) return false;
  const grown = await sql<{ id: string }>`
    WITH old AS (
      SELECT id, tokens_in, tokens_out, tokens_cached, cost_usd, tokens_unpriced
      FROM runs WHERE id = ${runId} AND project_id = ${projectId} FOR UPDATE
    ), grown AS (
      UPDATE runs r SET
        tokens_in = GREATEST(old.tokens_in, ${tokensIn}),
        tokens_out = GREATEST(old.tokens_out, ${tokensOut}),
        tokens_cached = GREATEST(old.tokens_cached, ${tokensCached}),
        cost_usd = GREATEST(old.cost_usd, ${cost}::double precision),
        tokens_unpriced = GREATEST(old.tokens_unpriced, ${unpriced}),
        usage_source = ${usage.source ?? "unknown"}
      FROM old
      WHERE r.id = old.id AND (
        ${tokensIn} > old.tokens_in OR ${tokensOut} > old.tokens_out OR ${tokensCached} > old.tokens_cached
        OR ${cost}::double precision > old.cost_usd OR ${unpriced} > old.tokens_unpriced
      )
      RETURNING r.id,
        r.tokens_in - old.tokens_in AS d_in, r.tokens_out - old.tokens_out AS d_out,
        r.tokens_cached - old.tokens_cached AS d_cached, r.cost_usd - old.cost_usd AS d_cost,
        r.tokens_unpriced - old.tokens_unpriced AS d_unpriced
    )
    UPDATE projects p SET
      tokens_in = p.tokens_in + grown.d_in,
      tokens_out = p.tokens_out + grown.d_out,
      tokens_cached = p.tokens_cached + grown.d_cached,
      cost_usd = p.cost_usd + grown.d_cost,
      tokens_unpriced = p.tokens_unpriced + grown.d_unpriced
    FROM grown
    WHERE p.id = ${projectId}
    RETURNING grown.id
  `.execute(db);
  return grown.rows.length > 0;
}
