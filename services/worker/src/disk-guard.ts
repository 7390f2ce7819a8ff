import { lstat, readdir } from "node:fs/promises";
import path from "node:path";

/**
 * Disk used by directory trees: allocated blocks (`st_blocks` × 512, so a sparse file counts
 * what it really takes), each inode once (hard links), symlinks never followed. Entries that
 * vanish while the walk runs are skipped.
 */
export async function diskUsage(roots: readonly string[]): Promise<number> {
  const seen = new Set<string>();
  let total = 0;
  const visit = async (entry: string): Promise<void> => {
    let stat: Awaited<ReturnType<typeof lstat>>;
    try {
      stat = await lstat(entry, { bigint: false });
    } catch {
      return;
    }
    const key = `${stat.dev}:${stat.ino}`;
    if (seen.has(key)) return;
    seen.add(key);
    total += stat.blocks * 512;
    if (!stat.isDirectory()) return;
    let names: string[];
    try {
      names = await readdir(entry);
    } catch {
      return;
    }
    // Bounded fan-out: a directory of a million entries must not open a million handles.
    for (let i = 0; i < names.length; i += 64) {
      await Promise.all(names.slice(i, i + 64).map((name) => visit(path.join(entry, name))));
    }
  };
  for (const root of roots) await visit(root);
  return total;
}

export interface DiskGuardOptions {
  /** Trees the run may write (its checkout and control dir). */
  paths: readonly string[];
  /** Bytes the run may add to what `paths` held when the guard started. */
  limitBytes: number;
  /** Pause between two measurements. A measurement that takes longer spaces them out further. */
  intervalMs: number;
  /** Called once, as soon as a measurement exceeds the limit. */
  onExceeded(usage: { addedBytes: number; limitBytes: number }): void;
}

export interface DiskGuard {
  /** The breach, once one was seen; null while the run stays within its limit. */
  readonly exceeded: { addedBytes: number; limitBytes: number } | null;
  /** Measures once more (a write just before the end is not missed), then stops watching. */
  stop(): Promise<void>;
}

/**
 * Watches how much disk a run adds to its checkout and control dir while it runs, and reports
 * the first measurement over the limit (the caller then ends the run's process group).
 *
 * Why polling: an unprivileged worker cannot mount a size-limited filesystem for each checkout
 * (a loop device or tmpfs needs root, and a tmpfs would hold the checkout in memory), and Linux
 * has no per-directory quota without XFS project quotas set up by an administrator. So the
 * guard measures allocated blocks every `intervalMs`, and the sandbox caps every single file at
 * the same limit with RLIMIT_FSIZE (sandbox-wrap.ts), which bounds a one-file flood exactly.
 * A flood spread over many files can overshoot by what the agent writes in one interval plus
 * one measurement. The next measurement starts `intervalMs` after the previous one ended, so a
 * huge tree is measured less often instead of keeping a core busy.
 */
export async function startDiskGuard(options: DiskGuardOptions): Promise<DiskGuard> {
  const baseline = await diskUsage(options.paths);
  let exceeded: DiskGuard["exceeded"] = null;
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  let pending: Promise<void> = Promise.resolve();
  let final: Promise<void> | null = null;

  const measure = async (): Promise<void> => {
    if (exceeded) return;
    const addedBytes = (await diskUsage(options.paths)) - baseline;
    if (addedBytes > options.limitBytes && !exceeded) {
      exceeded = { addedBytes, limitBytes: options.limitBytes };
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
