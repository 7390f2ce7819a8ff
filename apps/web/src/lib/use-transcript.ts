import { createTranscriptFeed, type TranscriptFeed } from "@overseer/transcript";
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { client } from "../api/client.ts";
import type { RunSummary, TranscriptEntry } from "../api/types.ts";

/**
 * Transcripts in the browser: the run's output, as it streams over SSE or as stored, read by
 * the same parser the worker and `overseer logs` use (`@overseer/transcript`, chosen by the
 * runner config's `agent`). Lines no parser understands stay as raw entries.
 */

/** The runner config's `agent` of a project (null: a generic CLI, every line raw). */
export function useProjectAgent(projectId: string): { agent: string | null; known: boolean } {
  const [state, setState] = useState<{ agent: string | null; known: boolean }>({ agent: null, known: false });
  useEffect(() => {
    let alive = true;
    client.project(projectId).then(
      (p) => {
        const agent = (p.runner_config as { agent?: unknown }).agent;
        if (alive) setState({ agent: typeof agent === "string" ? agent : null, known: true });
      },
      () => alive && setState({ agent: null, known: true }),
    );
    return () => {
      alive = false;
    };
  }, [projectId]);
  return state;
}

/**
 * The transcript of a growing log: only what was appended since the last render is parsed;
 * a log that was cut at its head (the client's cap) or another agent starts over.
 */
export function useLogTranscript(log: string, agent: string | null, ended: boolean): TranscriptEntry[] {
  const state = useRef<{
    feed: TranscriptFeed;
    agent: string | null;
    read: string;
    entries: TranscriptEntry[];
  }>();
  return useMemo(() => {
    let s = state.current;
    if (!s || s.agent !== agent || !log.startsWith(s.read)) {
      s = { feed: createTranscriptFeed(agent), agent, read: "", entries: [] };
      state.current = s;
    }
    const added = s.feed.write(log.slice(s.read.length));
    s.read = log;
    // A last line without its newline is only complete once the run ended.
    const tail = ended ? s.feed.end() : [];
    if (added.length > 0 || tail.length > 0) s.entries = [...s.entries, ...added, ...tail];
    if (ended) state.current = undefined;
    return s.entries;
  }, [log, agent, ended]);
}

export interface TaskTranscriptState {
  /** Every ended run's entries, runs oldest first, each entry with its `runId`. */
  entries: TranscriptEntry[];
  loading: boolean;
  error: string | null;
}

/** Ended runs read per task page (the newest; older ones stay on their run pages). */
const TASK_RUNS_READ = 30;

/**
 * "What the agents did": the stored output of each ended run of a task, parsed, oldest run
 * first. A run's log is read once (ended output does not change); `runs` growing reads the new ones.
 */
export function useTaskTranscript(runs: readonly RunSummary[], agent: string | null): TaskTranscriptState {
  const cache = useRef(new Map<string, TranscriptEntry[]>());
  const [version, setVersion] = useState(0);
  const [error, setError] = useState<string | null>(null);
  const ended = runs
    .filter((r) => r.status !== "running" && r.status !== "queued")
    .slice(0, TASK_RUNS_READ)
    .reverse();
  const key = `${agent ?? ""}|${ended.map((r) => r.id).join(",")}`;
  // `key` names exactly the runs to read.
  useEffect(() => {
    let alive = true;
    const missing = ended.filter((r) => !cache.current.has(r.id));
    Promise.all(
      missing.map(async (r) => {
        const log = await client.runLog(r.id);
        const feed = createTranscriptFeed(agent);
        const entries = [...feed.write(log.output ?? ""), ...feed.end()].map((e) => ({ ...e, runId: r.id }));
        cache.current.set(r.id, entries);
      }),
    ).then(
      () => alive && setVersion((v) => v + 1),
      (e: Error) => alive && setError(e.message),
    );
    return () => {
      alive = false;
    };
  }, [key]);
  const entries = useMemo(
    () => ended.flatMap((r) => cache.current.get(r.id) ?? []),
    // Recomputed when a read completes (`version`).
    [key, version],
  );
  const loading = ended.some((r) => !cache.current.has(r.id)) && error === null;
  return { entries, loading, error };
}
