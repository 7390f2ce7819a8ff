import { type ActivityWatcher, watchActivity } from "./activity-watcher.ts";

export interface RunDeadlineOptions {
  /** Hard limit on the run. */
  readonly timeoutMs: number;
  /** No output and no file change for this long is a stall; 0 = off. */
  readonly idleTimeoutMs: number;
  /** Trees whose file changes count as activity (usually the checkout). */
  readonly watchPaths?: readonly string[] | undefined;
  /** `performance.now()` of the last output. */
  readonly lastOutputAt: () => number;
  readonly signal?: AbortSignal | undefined;
  /** A deadline passed (the caller re-reads the control dir first: a just-written transition wins). */
  readonly onDeadline: (reason: "timeout" | "stall") => void;
  readonly onAbort: () => void;
}

/** Armed deadlines; `disarm` clears every timer, watcher and listener. */
export interface RunDeadlines {
  disarm(): void;
}

/**
 * Phase 5 of a run: the hard timeout, the idle watchdog (output or a file change under
 * `watchPaths` resets it) and the caller's abort signal. An already aborted signal calls
 * `onAbort` at once.
 */
export function armDeadlines(options: RunDeadlineOptions): RunDeadlines {
  const hardTimer = setTimeout(() => options.onDeadline("timeout"), options.timeoutMs);
  let idleTimer: NodeJS.Timeout | null = null;
  let activityWatcher: ActivityWatcher | null = null;
  if (options.idleTimeoutMs > 0) {
    let lastFileChange = performance.now();
    if (options.watchPaths && options.watchPaths.length > 0) {
      activityWatcher = watchActivity({
        paths: [...options.watchPaths],
        onActivity: () => {
          lastFileChange = performance.now();
        },
      });
    }
    const armIdle = (delay: number) => {
      idleTimer = setTimeout(() => {
        const idleFor = performance.now() - Math.max(lastFileChange, options.lastOutputAt());
        if (idleFor >= options.idleTimeoutMs) options.onDeadline("stall");
        else armIdle(options.idleTimeoutMs - idleFor);
      }, delay);
    };
    armIdle(options.idleTimeoutMs);
  }
  const onAbort = () => options.onAbort();
  options.signal?.addEventListener("abort", onAbort, { once: true });
  if (options.signal?.aborted) options.onAbort();
  return {
    disarm() {
      clearTimeout(hardTimer);
      if (idleTimer) clearTimeout(idleTimer);
      activityWatcher?.close();
      options.signal?.removeEventListener("abort", onAbort);
    },
  };
}
