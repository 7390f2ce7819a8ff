import type { RunSummary } from "../../api/types.ts";
import { href } from "../../lib/router.ts";
import { useTaskTranscript } from "../../lib/use-transcript.ts";
import { TranscriptPanel } from "./transcript-panel.tsx";

/**
 * "What the agents did": the transcripts of the task's ended runs, oldest run first, each headed
 * by its run (a link to the run page, where file edits open the commit diff); a running run is
 * followed live on its own page and joins here once it ends.
 */
export function TaskTranscript({
  projectId,
  taskId,
  runs,
}: {
  projectId: string;
  taskId: string;
  /** The task's runs, newest first (as the runs route answers). */
  runs: readonly RunSummary[];
}) {
  const t = useTaskTranscript(projectId, taskId, runs);
  const byId = new Map(runs.map((r) => [r.id, r]));
  const running = runs.filter((r) => r.status === "running");
  return (
    <section aria-labelledby="agents-did-title">
      <h2 id="agents-did-title">What the agents did</h2>
      {running.map((r) => (
        <p key={r.id} class="live">
          {r.action} #{r.number} is running: <a href={href.run(r.id)}>follow its transcript live</a>.
        </p>
      ))}
      {t.error ? (
        <p class="error" role="alert">
          The task's transcript could not be read: {t.error}
        </p>
      ) : (
        <TranscriptPanel
          entries={t.entries}
          live={false}
          onShowDiff={(_path, runId) => {
            if (runId) location.hash = href.run(runId);
          }}
          runHeader={(runId) => {
            const r = byId.get(runId);
            return <a href={href.run(runId)}>{r ? `${r.action} #${r.number} · ${r.status}` : runId}</a>;
          }}
          emptyText={t.loading ? "Loading the transcript…" : "No run of this task has ended yet."}
        />
      )}
    </section>
  );
}
