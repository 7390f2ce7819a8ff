import { lstatSync, readdirSync, type Stats } from "node:fs";
import path from "node:path";
import { setImmediate as nextTurn } from "node:timers/promises";

/** What directory trees hold, as the host-side git will meet it. */
export interface TreeUsage {
  /**
   * Apparent bytes (`st_size`: what `git add` reads and hashes, so a sparse file counts its full
   * length, not the few blocks it holds), each inode once (hard links).
   */
  bytes: number;
  /** Entries (files, directories, links: every path a commit or a checkout walks). */
  files: number;
}

/**
 * Entries measured between two turns of the event loop: a slice of synchronous lstat and readdir
 * calls takes ~1–2 ms, so a huge tree never stalls the worker's other runs (lock renewals, live
 * logs) for longer than that.
 */
const ENTRIES_PER_SLICE = 512;

/**
 * Usage of directory trees (see TreeUsage); symlinks are never followed. Entries that vanish
 * while the walk runs are skipped.
 *
 * Synchronous calls in slices (ENTRIES_PER_SLICE), not one promise per entry: a promise-based
 * lstat costs a thread-pool round trip, a promise and a microtask per entry, ~5 times the CPU of
 * the walk itself (2,100 entries: 45 ms against 9 ms of CPU), and the guard walks every run's
 * checkout at its start, every `intervalMs` and at its end. Only inodes that can be met twice
 * are remembered: directories (a bind mount can show one twice) and files with more than one
 * link (a file with one link has one path). A link made while the walk runs may count its file
 * twice: more, never less.
 */
export async function diskUsage(roots: readonly string[]): Promise<TreeUsage> {
  const seen = new Set<string>();
  let bytes = 0;
  let files = 0;
  let slice = 0;
  const pending = roots.map((root) => path.resolve(root)).reverse();
  for (let entry = pending.pop(); entry !== undefined; entry = pending.pop()) {
    if (++slice >= ENTRIES_PER_SLICE) {
      slice = 0;
      await nextTurn();
    }
    const stat = lstatOrSkip(entry);
    if (stat === undefined) continue;
    files += 1;
    const directory = stat.isDirectory();
    if (directory || stat.nlink > 1) {
      const key = `${stat.dev}:${stat.ino}`;
      if (seen.has(key)) continue;
      seen.add(key);
    }
    if (!directory) {
      bytes += stat.size;
      continue;
    }
    const names = readdirOrSkip(entry);
    // Depth first, in directory order: the stack takes the names back to front.
    for (let i = names.length - 1; i >= 0; i--) pending.push(`${entry}/${names[i]}`);
  }
  return { bytes, files };
}

function lstatOrSkip(entry: string): Stats | undefined {
  try {
    return lstatSync(entry, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}

function readdirOrSkip(entry: string): string[] {
  try {
    return readdirSync(entry);
  } catch {
    return [];
  }
}

export interface DiskGuardOptions {
  /** Trees the run may write (its checkout and control dir). */
  paths: readonly string[];
  /** Apparent bytes the run may add to what `paths` held when the guard started; null: no limit. */
  limitBytes: number | null;
  /** Entries the run may add (the file cap); null: no cap. */
  maxFiles: number | null;
  /** Pause between two measurements. A measurement that takes longer spaces them out further. */
  intervalMs: number;
  /** Called once, as soon as a measurement exceeds a limit. */
  onExceeded(usage: DiskBreach): void;
}

/** The first measurement over a limit: what the run added, and which limit it crossed. */
export interface DiskBreach {
  over: "bytes" | "files";
  addedBytes: number;
  limitBytes: number | null;
  addedFiles: number;
  maxFiles: number | null;
}

export interface DiskGuard {
  /** The breach, once one was seen; null while the run stays within its limits. */
  readonly exceeded: DiskBreach | null;
  /** Measures once more (a write just before the end is not missed), then stops watching. */
  stop(): Promise<void>;
}

/**
 * Watches how much a run adds to its checkout and control dir while it runs — apparent bytes
 * and entries, what the host-side `git add`, commit, push and the next checkout will have to
 * read and write — and reports the first measurement over a limit (the caller then ends the
 * run's process group).
 *
 * Why polling: an unprivileged worker cannot mount a size-limited filesystem for each checkout
 * (a loop device or tmpfs needs root, and a tmpfs would hold the checkout in memory), and Linux
 * has no per-directory quota without XFS project quotas set up by an administrator. So the
 * guard measures every `intervalMs`, and the sandbox caps every single file just above the byte
 * limit with RLIMIT_FSIZE (sandbox-wrap.ts), which bounds a one-file flood (sparse or not)
 * exactly. A flood spread over many files can overshoot by what the agent writes in one
 * interval plus one measurement. The next measurement starts `intervalMs` after the previous one
 * ended, so a huge tree is measured less often instead of keeping a core busy. Hard links count
 * their bytes once: what they make git read again is bounded by the time bound of each host-side
 * git step (run-executor.ts).
 */
export async function startDiskGuard(options: DiskGuardOptions): Promise<DiskGuard> {
  const baseline = await diskUsage(options.paths);
  let exceeded: DiskBreach | null = null;
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  let pending: Promise<void> = Promise.resolve();
  let final: Promise<void> | null = null;

  const measure = async (): Promise<void> => {
    if (exceeded) return;
    const now = await diskUsage(options.paths);
    const addedBytes = now.bytes - baseline.bytes;
    const addedFiles = now.files - baseline.files;
    const overBytes = options.limitBytes !== null && addedBytes > options.limitBytes;
    const overFiles = options.maxFiles !== null && addedFiles > options.maxFiles;
    if ((overBytes || overFiles) && !exceeded) {
      exceeded = {
        over: overBytes ? "bytes" : "files",
        addedBytes,
        limitBytes: options.limitBytes,
        addedFiles,
        maxFiles: options.maxFiles,
      };
      options.onExceeded(exceeded);
    }
  };
  const schedule = () => {
    if (stopped || exceeded) return;
    timer = setTimeout(() => {
      pending = measure().finally(schedule);
    }, options.intervalMs);
    timer.unref();
  };
  schedule();

  return {
    get exceeded() {
      return exceeded;
    },
    stop() {
      if (final === null) {
        stopped = true;
        if (timer) clearTimeout(timer);
        final = pending.then(measure);
      }
      return final;
    },
  };
}
