import { type FSWatcher, watch } from "node:fs";
import { lstat, readdir } from "node:fs/promises";
import { basename, join } from "node:path";
import { HARNESS_DEFAULTS } from "./harness-defaults.ts";

/** Directory names never watched by default (huge and agent-irrelevant, or git internals). */
export const DEFAULT_WATCH_IGNORE = [".git", "node_modules"] as const;
/** Default cap on watched directories (one inotify watch each): 4096. */
export const DEFAULT_MAX_WATCHED_DIRS = HARNESS_DEFAULTS.maxWatchedDirs;

export interface ActivityWatcherOptions {
  /** Directory trees whose file changes count as activity. */
  paths: readonly string[];
  /** Called on every change event (cheap: the caller only records a timestamp). */
  onActivity: () => void;
  /** Directory names skipped at any depth. Default {@link DEFAULT_WATCH_IGNORE}. */
  ignoreNames?: readonly string[];
  /** At most this many directories are watched. Default {@link DEFAULT_MAX_WATCHED_DIRS}. */
  maxDirs?: number;
}

export interface ActivityWatcher {
  close(): void;
}

/**
 * Watches directory trees for file changes, to tell a working agent from a stalled one.
 *
 * Node 20's `fs.watch(…, {recursive: true})` on Linux walks the tree synchronously and puts an
 * inotify watch on every file, which blocks the worker's event loop and exhausts inotify limits
 * on a checkout with dependencies installed. This watcher instead puts one non-recursive watch
 * on each directory (inotify reports changes to the files inside), walks asynchronously,
 * skips `.git`/`node_modules`, adds directories as they are created, and stops adding at
 * `maxDirs`. Changes in unwatched directories are missed; output still counts as activity, so
 * the worst case is a stall reported for an agent that only wrote files deep in a huge tree.
 */
export function watchActivity(options: ActivityWatcherOptions): ActivityWatcher {
  const ignore = new Set(options.ignoreNames ?? DEFAULT_WATCH_IGNORE);
  const maxDirs = options.maxDirs ?? DEFAULT_MAX_WATCHED_DIRS;
  const watchers = new Map<string, FSWatcher>();
  let closed = false;

  const addTree = async (root: string): Promise<void> => {
    const queue = [root];
    while (queue.length > 0 && !closed && watchers.size < maxDirs) {
      const dir = queue.shift() as string;
      if (watchers.has(dir) || !watchDir(dir)) continue;
      let entries: import("node:fs").Dirent[];
      try {
        entries = await readdir(dir, { withFileTypes: true });
      } catch {
        continue;
      }
      for (const entry of entries) {
        if (entry.isDirectory() && !ignore.has(entry.name)) queue.push(join(dir, entry.name));
      }
    }
  };

  const watchDir = (dir: string): boolean => {
    if (closed || watchers.size >= maxDirs) return false;
    let watcher: FSWatcher;
    try {
      watcher = watch(dir, { persistent: false }, (event, filename) => {
        options.onActivity();
        if (event === "rename" && filename) void maybeAddDir(join(dir, filename.toString()));
      });
    } catch {
      return false;
    }
    watcher.on("error", () => {
      watcher.close();
      watchers.delete(dir);
    });
    watchers.set(dir, watcher);
    return true;
  };

  const maybeAddDir = async (path: string): Promise<void> => {
    if (closed || watchers.has(path) || ignore.has(basename(path))) return;
    try {
      const stat = await lstat(path);
      if (stat.isDirectory()) await addTree(path);
    } catch {
      // Removed again before we looked: nothing to watch.
    }
  };

  for (const path of options.paths) void addTree(path);

  return {
    close() {
      closed = true;
      for (const watcher of watchers.values()) watcher.close();
      watchers.clear();
    },
  };
}
