import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import type { TranscriptEntry } from "../../api/types.ts";
import { searchRows, transcriptRows, usageTotals } from "../../lib/transcript-model.ts";
import { TranscriptRowView } from "./transcript-row.tsx";
import { UsageMeter } from "./usage-meter.tsx";

/**
 * A transcript with its token and cost meter and a search box: the rows that mention the
 * search text stay, the count says how many. Follows new entries (auto-scroll) until the
 * operator scrolls up. `runHeader(runId)` labels the first row of each run in a task's transcript.
 */
export function TranscriptPanel({
  entries,
  live,
  onShowDiff,
  runHeader,
  emptyText,
}: {
  entries: readonly TranscriptEntry[];
  live: boolean;
  onShowDiff?: ((path: string, runId: string | undefined) => void) | undefined;
  runHeader?: ((runId: string) => preact.ComponentChildren) | undefined;
  emptyText: string;
}) {
  const [search, setSearch] = useState("");
  const [follow, setFollow] = useState(true);
  const box = useRef<HTMLOListElement>(null);
  const rows = useMemo(() => transcriptRows(entries), [entries]);
  const shown = useMemo(() => searchRows(rows, search), [rows, search]);
  const totals = useMemo(() => usageTotals(entries), [entries]);
  useEffect(() => {
    if (follow && box.current) box.current.scrollTop = box.current.scrollHeight;
  }, [shown, follow]);
  return (
    <div class="transcript">
      <UsageMeter totals={totals} live={live} />
      <div class="toolbar">
        <label>
          Search the transcript{" "}
          <input
            type="search"
            value={search}
            onInput={(e) => setSearch((e.currentTarget as HTMLInputElement).value)}
            data-testid="transcript-search"
          />
        </label>
        <label>
          <input
            type="checkbox"
            checked={follow}
            onChange={(e) => setFollow((e.currentTarget as HTMLInputElement).checked)}
          />{" "}
          Follow
        </label>
        {search ? (
          <span class="muted" role="status">
            {shown.length} of {rows.length} entries match
          </span>
        ) : null}
      </div>
      {rows.length === 0 ? (
        <p class="muted state empty">{emptyText}</p>
      ) : (
        <ol
          ref={box}
          class="transcript-list"
          // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard
          tabIndex={0}
          aria-label="Transcript"
          data-testid="transcript"
          onScroll={(e) => {
            const el = e.currentTarget as HTMLOListElement;
            if (el.scrollHeight - el.scrollTop - el.clientHeight > 24 && follow) setFollow(false);
          }}
        >
          {shown.flatMap((row, i) => {
            const runId = row.entry.runId;
            const item = <TranscriptRowView key={row.key} row={row} onShowDiff={onShowDiff} />;
            if (!runHeader || !runId || shown[i - 1]?.entry.runId === runId) return [item];
            return [
              <li key={`h-${runId}-${row.key}`} class="tr-run">
                {runHeader(runId)}
              </li>,
              item,
            ];
          })}
        </ol>
      )}
    </div>
  );
}
