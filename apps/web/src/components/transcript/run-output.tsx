import { useState } from "preact/hooks";
import type { Run } from "../../api/types.ts";
import { useRunTranscript } from "../../lib/use-transcript.ts";
import { LogBox } from "../log-box.tsx";
import { TranscriptPanel } from "./transcript-panel.tsx";

/**
 * What a run did, two ways: its transcript as the worker parsed it (stored, and while the run
 * goes, live from the project stream), and, one click away, the raw log exactly as the agent
 * CLI wrote it (its own SSE stream).
 */
export function RunOutput({
  run,
  log,
  logState,
  onShowDiff,
}: {
  run: Run;
  log: string;
  logState: string;
  onShowDiff: ((path: string) => void) | null;
}) {
  const [tab, setTab] = useState<"transcript" | "raw">("transcript");
  const running = run.status === "running" || run.status === "queued";
  const transcript = useRunTranscript(run.project_id, run.id, running);
  const { entries, agent } = transcript;
  return (
    <section aria-labelledby="output-title" class="run-output">
      <h2 id="output-title">Output</h2>
      <div role="tablist" aria-label="Run output" class="tabs">
        {(["transcript", "raw"] as const).map((k) => (
          <button
            key={k}
            type="button"
            role="tab"
            id={`tab-${k}`}
            aria-selected={tab === k}
            aria-controls={tab === k ? `panel-${k}` : undefined}
            onClick={() => setTab(k)}
          >
            {k === "transcript" ? `Transcript (${entries.length})` : "Raw log"}
          </button>
        ))}
      </div>
      <p class="live" role="status" data-testid="transcript-state">
        {agent ? `Read from ${agent}'s output` : "No agent kind in the runner config: lines shown as printed"}
        {transcript.truncated ? " · the oldest entries were left out (size bound)" : ""} ·{" "}
        {running ? logState : "run ended"}
      </p>
      <div role="tabpanel" id={`panel-${tab}`} aria-labelledby={`tab-${tab}`}>
        {tab === "transcript" && transcript.error ? (
          <p class="error" role="alert">
            The transcript could not be read: {transcript.error}
          </p>
        ) : null}
        {tab === "raw" ? (
          <LogBox log={log} state={logState} />
        ) : (
          <TranscriptPanel
            entries={entries}
            live={running && logState === "live"}
            onShowDiff={onShowDiff ? (path) => onShowDiff(path) : undefined}
            emptyText={
              transcript.loading
                ? "Loading…"
                : running
                  ? "Waiting for the agent's first words…"
                  : "No output."
            }
          />
        )}
      </div>
    </section>
  );
}
