import { useEffect, useRef, useState } from "preact/hooks";
import { client } from "../api/client.ts";
import type { RunSummary, TranscriptEntry } from "../api/types.ts";
import { openSse } from "./sse.ts";

/**
 * Transcripts in the browser, as the worker parsed them (docs/transcripts.md): the stored one
 * from `GET …/runs/{run_id}/transcript` (`…/tasks/{task_id}/transcript` for a task), and while a
 * run goes, the project stream's `run.transcript` events. Every preset reads the same, Copilot
 * (whose transcript comes from its session file, not its printed lines) included; nothing is
 * parsed here.
 */

export interface RunTranscriptState {
  entries: TranscriptEntry[];
  /** The agent kind whose output the worker parsed (null: unknown). */
  agent: string | null;
  /** The oldest entries were left out to respect the stored size bound. */
  truncated: boolean;
  loading: boolean;
  error: string | null;
}

const byId = encodeURIComponent;

/**
 * A run's transcript: read once, then, while the run goes, each `run.transcript` batch of this
 * run merged by `seq` (a batch that skips a `seq` means events were missed: the route is read
 * again). Once the run has ended the stored transcript is read and replaces what was merged.
 */
export function useRunTranscript(projectId: string, runId: string, running: boolean): RunTranscriptState {
  const [state, setState] = useState<RunTranscriptState>({
    entries: [],
    agent: null,
    truncated: false,
    loading: true,
    error: null,
  });
  const seen = useRef(new Map<number, TranscriptEntry>());
  /** Reads of the route in flight are numbered; only the newest one's answer counts. */
  const reads = useRef(0);
  const publish = (patch: Partial<RunTranscriptState> = {}) =>
    setState((s) => ({
      ...s,
      ...patch,
      entries: [...seen.current.values()].sort((a, b) => a.seq - b.seq),
    }));
  const merge = (entries: readonly TranscriptEntry[]) => {
    for (const entry of entries) seen.current.set(entry.seq, entry);
  };
  const read = (replace: boolean) => {
    const mine = ++reads.current;
    client.runTranscript(projectId, runId).then(
      (t) => {
        if (mine !== reads.current) return;
        if (replace) seen.current.clear();
        merge(t.entries);
        publish({ agent: t.agent, truncated: t.truncated, loading: false, error: null });
      },
      (error: Error) =>
        mine === reads.current && setState((s) => ({ ...s, loading: false, error: error.message })),
    );
  };

  useEffect(() => {
    seen.current = new Map();
    setState({ entries: [], agent: null, truncated: false, loading: true, error: null });
  }, [runId]);

  useEffect(() => {
    if (!running) {
      // Ended (or opened after it ended): the stored transcript is the whole of it.
      read(true);
      return;
    }
    const close = openSse(`/api/projects/${byId(projectId)}/events/stream`, {
      onMessage: (m) => {
        if (m.event !== "run.transcript") return;
        const batch = JSON.parse(m.data) as { runId: string; entries: TranscriptEntry[] };
        if (batch.runId !== runId || batch.entries.length === 0) return;
        const last = Math.max(-1, ...seen.current.keys());
        const first = batch.entries[0]?.seq ?? 0;
        merge(batch.entries);
        publish();
        if (first > last + 1) read(false);
      },
    });
    read(false);
    return close;
  }, [projectId, runId, running]);
  return state;
}

export interface TaskTranscriptState {
  /** Every ended run's entries, runs oldest first, each entry with its `runId`. */
  entries: TranscriptEntry[];
  loading: boolean;
  error: string | null;
}

/**
 * "What the agents did": the task's transcript (every run, oldest first), keeping the runs that
 * have ended (a running one is followed on its own page); read again when another run ends.
 */
export function useTaskTranscript(
  projectId: string,
  taskId: string,
  runs: readonly RunSummary[],
): TaskTranscriptState {
  const [state, setState] = useState<TaskTranscriptState>({ entries: [], loading: true, error: null });
  const ended = runs.filter((r) => r.status !== "running" && r.status !== "queued").map((r) => r.id);
  // `key` names exactly the runs to show.
  const key = ended.join(",");
  useEffect(() => {
    let alive = true;
    const keep = new Set(ended);
    client.taskTranscript(projectId, taskId).then(
      (t) =>
        alive &&
        setState({
          entries: t.entries.filter((e) => e.runId !== undefined && keep.has(e.runId)),
          loading: false,
          error: null,
        }),
      (error: Error) => alive && setState((s) => ({ ...s, loading: false, error: error.message })),
    );
    return () => {
      alive = false;
    };
  }, [projectId, taskId, key]);
  return state;
}
