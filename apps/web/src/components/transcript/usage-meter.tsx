import { formatCount } from "../../lib/format.ts";
import type { UsageTotals } from "../../lib/transcript-model.ts";

/** The live token and cost meter: the run's usage entries summed as they arrive. */
export function UsageMeter({ totals, live }: { totals: UsageTotals; live: boolean }) {
  const cost =
    totals.costUsd === null ? (totals.calls > 0 ? "unpriced" : "–") : `$${totals.costUsd.toFixed(4)}`;
  return (
    <div class="meter-box">
      <dl class="meter" data-testid="usage-meter" aria-live="polite">
        <div>
          <dt>Tokens in</dt>
          <dd>
            {formatCount(totals.inputTokens)}
            {totals.cachedInputTokens ? (
              <small> ({formatCount(totals.cachedInputTokens)} cached)</small>
            ) : null}
          </dd>
        </div>
        <div>
          <dt>Tokens out</dt>
          <dd>{formatCount(totals.outputTokens)}</dd>
        </div>
        <div>
          <dt>Cost</dt>
          <dd data-testid="meter-cost">{cost}</dd>
        </div>
        {totals.models.length ? (
          <div>
            <dt>Model</dt>
            <dd>{totals.models.join(", ")}</dd>
          </div>
        ) : null}
      </dl>
      {live ? <p class="live">live</p> : null}
    </div>
  );
}
