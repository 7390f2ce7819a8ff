import type { ProjectStatus } from "../api/types.ts";
import { formatCount, formatTime, formatUsd } from "../lib/format.ts";
import { ProgressBar } from "./bits.tsx";

type Mission = NonNullable<ProjectStatus["mission"]>;

const STATE_LABEL: Record<string, string> = {
  running: "Running",
  paused_by_bound: "Paused at a bound",
  paused: "Paused",
  stopped: "Stopped",
  completed: "Completed",
};

/**
 * The mission of a project as the status route reports it (one summary, computed by the
 * gateway): objective, round, state, tasks, spend against the budget, the last verified
 * evidence, and the bound it stands paused by.
 */
export function MissionPanel({ mission }: { mission: Mission }) {
  const state = mission.state ?? "running";
  const spend = mission.spend;
  return (
    <section class="card mission" aria-labelledby="mission-title" data-testid="mission-panel">
      <h2 id="mission-title">
        Mission <span class={`pill mission-${state}`}>{STATE_LABEL[state] ?? state}</span>
      </h2>
      <p>{mission.objective}</p>
      <p class="muted">
        Round {mission.round} of {mission.max_rounds}
        {mission.stage ? ` · stage ${mission.stage}` : ""}
        {mission.completed_at ? ` · completed ${formatTime(mission.completed_at)}` : ""}
      </p>
      {mission.tasks ? <ProgressBar counts={mission.tasks} /> : null}
      {spend ? (
        <p class="muted" data-testid="mission-spend">
          Spent {spend.cost}
          {spend.budget_usd === null ? " (no budget)" : ` of ${formatUsd(spend.budget_usd)}`} ·{" "}
          {formatCount(spend.tokens_in + spend.tokens_out)} tokens ({formatCount(spend.tokens_cached)} cached)
          · sessions {spend.sessions_used}
          {spend.sessions_limit === null ? "" : ` of ${spend.sessions_limit}`}
        </p>
      ) : null}
      {mission.bound ? (
        <p class="warn" role="status">
          Paused by the {mission.bound.bound} bound: {mission.bound.reason}
        </p>
      ) : null}
      {mission.last_evidence ? (
        <div data-testid="mission-evidence">
          <h3>
            {mission.last_evidence.kind === "completion"
              ? "Completion evidence"
              : `Last approved summary (${mission.last_evidence.task_id})`}
          </h3>
          <p class="evidence">{mission.last_evidence.text}</p>
        </div>
      ) : (
        <p class="muted small">No verified evidence yet.</p>
      )}
    </section>
  );
}
