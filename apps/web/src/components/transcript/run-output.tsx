import { useState } from "preact/hooks";
import type { Run } from "../../api/types.ts";
import { useLogTranscript, useProjectAgent } from "../../lib/use-transcript.ts";
import { LogBox } from "../log-box.tsx";
import { TranscriptPanel } from "./transcript-panel.tsx";

/**
 * What a run printed, two ways: its transcript, read from the log as it streams over SSE, and,
 * one click away, the raw log exactly as the agent CLI wrote it.
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
  const { agent, known } = useProjectAgent(run.project_id);
  const streamDone = logState === "ended" || logState.startsWith("closed");
  const entries = useLogTranscript(log, agent, streamDone);
  const running = run.status === "running" || run.status === "queued";
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
        {agent ? `Read as ${agent} output` : "No agent kind in the runner config: lines shown as printed"} ·{" "}
        {running ? logState : "run ended"}
      </p>
      <div role="tabpanel" id={`panel-${tab}`} aria-labelledby={`tab-${tab}`}>
        {tab === "raw" ? (
          <LogBox log={log} state={logState} />
        ) : (
          <TranscriptPanel
            entries={entries}
            live={running && logState === "live"}
            onShowDiff={onShowDiff ? (path) => onShowDiff(path) : undefined}
            emptyText={!known ? "Loading…" : running ? "Waiting for the agent's first words…" : "No output."}
          />
        )}
      </div>
    </section>
  );
}
