import { createContext } from "preact";
import { useCallback, useContext, useEffect, useRef, useState } from "preact/hooks";
import type { Session } from "../api/types.ts";
import { openSse } from "./sse.ts";

export interface Loaded<T> {
  data: T | null;
  error: Error | null;
  loading: boolean;
  reload(): void;
}

/**
 * Loads `fn()` when `key` changes, again on `reload()`, and every `pollMs` while the tab is
 * visible (the last good answer stays on screen while a reload runs or fails).
 */
export function useLoad<T>(fn: () => Promise<T>, key: string, pollMs = 0): Loaded<T> {
  const [state, setState] = useState<{ data: T | null; error: Error | null; loading: boolean }>({
    data: null,
    error: null,
    loading: true,
  });
  const fnRef = useRef(fn);
  fnRef.current = fn;
  const seq = useRef(0);
  const run = useCallback(() => {
    const mine = ++seq.current;
    fnRef.current().then(
      (data) => {
        // An answer revalidated unchanged (api/revalidation.ts) is the same object: the state
        // stays as it is, so a poll of an unchanged fleet re-renders nothing.
        if (mine === seq.current)
          setState((s) =>
            s.data === data && s.error === null && !s.loading ? s : { data, error: null, loading: false },
          );
      },
      (error: Error) => {
        if (mine === seq.current) setState((s) => ({ data: s.data, error, loading: false }));
      },
    );
  }, []);
  useEffect(() => {
    setState({ data: null, error: null, loading: true });
    run();
    if (pollMs <= 0) return;
    const timer = setInterval(() => {
      if (document.visibilityState === "visible") run();
    }, pollMs);
    return () => clearInterval(timer);
  }, [key, pollMs, run]);
  return { ...state, reload: run };
}

/**
 * Calls `onChange` (debounced) for every event of the project's live stream, except the
 * `run.transcript` entries it carries while agents run.
 */
export function useProjectEvents(projectId: string, onChange: () => void, debounceMs = 300): string {
  const [state, setState] = useState("connecting");
  const ref = useRef(onChange);
  ref.current = onChange;
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const close = openSse(`/api/projects/${encodeURIComponent(projectId)}/events/stream`, {
      onMessage: (m) => {
        // A running agent's transcript entries are no change of the project's state.
        if (m.event === "run.transcript") return;
        clearTimeout(timer);
        timer = setTimeout(() => ref.current(), debounceMs);
      },
      onState: (s) => setState(s === "open" ? "live" : s),
    });
    return () => {
      clearTimeout(timer);
      close();
    };
  }, [projectId, debounceMs]);
  return state;
}

export const SessionContext = createContext<Session | null>(null);

export function useSession(): Session | null {
  return useContext(SessionContext);
}
