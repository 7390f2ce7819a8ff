import { TASK_STATUS_ORDER } from "../api/types.ts";
import { STATUS_LABEL } from "../lib/format.ts";

/** Tasks by status as one stacked bar; the counts are also in its accessible label. */
export function ProgressBar({ counts }: { counts: Record<string, number> }) {
  const total = counts.total ?? TASK_STATUS_ORDER.reduce((a, s) => a + (counts[s] ?? 0), 0);
  const label =
    total === 0
      ? "No task"
      : TASK_STATUS_ORDER.filter((s) => (counts[s] ?? 0) > 0)
          .map((s) => `${counts[s]} ${STATUS_LABEL[s]?.toLowerCase()}`)
          .join(", ");
  return (
    <div class="progress" role="img" aria-label={`Tasks: ${label}`} title={label}>
      {total === 0
        ? null
        : TASK_STATUS_ORDER.map((s) =>
            (counts[s] ?? 0) > 0 ? (
              <span key={s} class={`seg s-${s}`} style={{ width: `${((counts[s] ?? 0) / total) * 100}%` }} />
            ) : null,
          )}
    </div>
  );
}

/** A small SVG line of recent values (oldest first). */
export function Sparkline({ values, label }: { values: readonly number[]; label: string }) {
  const w = 96;
  const h = 24;
  const max = Math.max(1, ...values);
  const step = values.length > 1 ? w / (values.length - 1) : w;
  const points = values.map((v, i) => `${(i * step).toFixed(1)},${(h - 2 - (v / max) * (h - 4)).toFixed(1)}`);
  const total = values.reduce((a, b) => a + b, 0);
  return (
    <svg
      class="spark"
      width={w}
      height={h}
      viewBox={`0 0 ${w} ${h}`}
      role="img"
      aria-label={`${label}: ${total}`}
    >
      <polyline points={points.join(" ")} fill="none" stroke="currentColor" stroke-width="1.5" />
    </svg>
  );
}

export function StatusPill({ status }: { status: string }) {
  return <span class={`pill st-${status}`}>{STATUS_LABEL[status] ?? status}</span>;
}

export function Legend() {
  return (
    <ul class="legend" aria-label="Task status colours">
      {TASK_STATUS_ORDER.map((s) => (
        <li key={s}>
          <span class={`swatch s-${s}`} aria-hidden="true" /> {STATUS_LABEL[s]}
        </li>
      ))}
    </ul>
  );
}
