import type { Run } from "../api/types.ts";
import { formatDuration } from "../lib/format.ts";

type Phase = Run["phases"][number];

const LABELS: Record<string, string> = {
  queue_wait: "queue wait",
  agent_cli: "agent CLI",
  environment_setup: "environment setup",
  setup_hook: "setup hook",
  after_run_hook: "after_run hook",
  scope_check: "scope check",
  result_applied: "result applied",
};

/**
 * Where a run's time went (README "Watching runs"): its phases back to back, as one bar whose
 * segments are the phases' shares of the run, and the same phases listed with their durations.
 * The data is the run's stored `phases`, the same timings its OpenTelemetry trace is built from.
 */
export function PhaseTimeline({ phases }: { phases: readonly Phase[] }) {
  if (phases.length === 0) {
    return <p class="muted">No phase timings: the run has no applied worker result (yet).</p>;
  }
  const total = phases.reduce((sum, p) => sum + p.duration_ms, 0) || 1;
  const share = (p: Phase) => (p.duration_ms / total) * 100;
  return (
    <section class="phase-timeline" aria-label="Phase timeline" data-testid="phase-timeline">
      <h2>Phases ({formatDuration(Math.round(total))})</h2>
      <div class="phase-bar" aria-hidden="true">
        {phases.map((p, i) => (
          <span
            key={`${p.name}-${i}`}
            class={`phase phase-${p.name}`}
            style={{ width: `${share(p)}%` }}
            title={`${LABELS[p.name] ?? p.name}: ${formatDuration(Math.round(p.duration_ms))}`}
          />
        ))}
      </div>
      <ol class="phase-list">
        {phases.map((p, i) => (
          <li key={`${p.name}-${i}`} data-phase={p.name}>
            <span class={`phase-swatch phase-${p.name}`} /> {LABELS[p.name] ?? p.name}{" "}
            <span class="muted">
              {formatDuration(Math.round(p.duration_ms))} · {share(p).toFixed(1)} %
            </span>
          </li>
        ))}
      </ol>
    </section>
  );
}
