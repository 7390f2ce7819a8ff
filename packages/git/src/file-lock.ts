import { randomBytes } from "node:crypto";
import { promises as fs } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { isProcessAlive } from "@overseer/process";
import { LockTimeoutError } from "./git-error.ts";

/**
 * A host-wide mutual-exclusion lock on a file path, safe across async tasks of one process and
 * across processes (and, with a shared filesystem, across hosts).
 *
 * Protocol.
 * - Acquire: `open(path, O_CREAT|O_EXCL)` and write `{pid, host, token, since}`. Exactly one
 *   contender can create the file.
 * - Hold: the holder keeps the descriptor open and touches the file's mtime every
 *   `staleMs / 3` through that descriptor (futimes), so a live holder never looks stale, and a
 *   holder whose lock was already broken only touches its own orphaned inode.
 * - Stale: a lock is broken when its holder is a dead process on this host (checked with
 *   `kill(pid, 0)`, so a SIGKILLed holder is detected at once) or when its mtime is older than
 *   `staleMs` (holder frozen, on another host, or died before writing its record).
 * - Break: rename the stale file to a unique name, check by inode that the file renamed is the
 *   one judged stale, delete it, and contend again. If the inode differs, a fresh lock was
 *   taken between the check and the rename; it is linked back (`link` fails if someone already
 *   re-created the path) and we keep waiting.
 * - Release: delete the path only if it is still our inode.
 *
 * Waiting. Contenders inside one process queue in memory first (FIFO, no polling), so only one
 * of them at a time contends for the file; between processes, waiting polls with a backoff
 * (5 ms doubling to 100 ms). Both waits together are bounded by `timeoutMs`.
 */

export interface FileLockOptions {
  /** A lock not refreshed for this long is considered abandoned and broken. Default 30 000 ms. */
  staleMs?: number;
  /** Give up (LockTimeoutError) after waiting this long. Default 900 000 ms (15 min). */
  timeoutMs?: number;
}

export const DEFAULT_LOCK_STALE_MS = 30_000;
export const DEFAULT_LOCK_TIMEOUT_MS = 900_000;

interface LockRecord {
  pid: number;
  host: string;
  token: string;
  since: string;
}

export interface FileLock {
  readonly path: string;
  release(): Promise<void>;
}

function parseRecord(text: string): LockRecord | null {
  try {
    const value = JSON.parse(text) as Partial<LockRecord>;
    if (typeof value.pid === "number" && typeof value.host === "string" && typeof value.token === "string") {
      return value as LockRecord;
    }
  } catch {
    // A holder killed between create and write leaves an empty file: judged by mtime alone.
  }
  return null;
}

function isStale(record: LockRecord | null, mtimeMs: number, staleMs: number): boolean {
  if (record && record.host === os.hostname() && record.pid !== process.pid && !isProcessAlive(record.pid))
    return true;
  return Date.now() - mtimeMs > staleMs;
}

async function tryCreate(lockPath: string, record: LockRecord): Promise<FileHandle | null> {
  let handle: FileHandle;
  try {
    handle = await fs.open(lockPath, "wx", 0o644);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return null;
    throw error;
  }
  try {
    await handle.writeFile(JSON.stringify(record));
  } catch (error) {
    await handle.close().catch(() => undefined);
    await fs.rm(lockPath, { force: true });
    throw error;
  }
  return handle;
}

/** Breaks the lock at `lockPath` if it is still the stale inode `ino`. */
async function breakStale(lockPath: string, ino: number): Promise<void> {
  const aside = `${lockPath}.stale-${randomBytes(6).toString("hex")}`;
  try {
    await fs.rename(lockPath, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
    throw error;
  }
  const moved = await fs.stat(aside);
  if (moved.ino !== ino) {
    // We moved a lock that was taken after our staleness check: give it back.
    await fs.link(aside, lockPath).catch(() => undefined);
  }
  await fs.rm(aside, { force: true });
}

async function describeHolder(lockPath: string): Promise<string> {
  const text = await fs.readFile(lockPath, "utf8").catch(() => "");
  const record = parseRecord(text);
  return record ? `pid ${record.pid} on ${record.host} since ${record.since}` : "an unknown holder";
}

/** Per-path FIFO of this process's contenders: each entry settles when its holder is done. */
const localQueues = new Map<string, Promise<void>>();

export async function acquireFileLock(lockPath: string, options: FileLockOptions = {}): Promise<FileLock> {
  const staleMs = options.staleMs ?? DEFAULT_LOCK_STALE_MS;
  const timeoutMs = options.timeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS;
  if (!(staleMs > 0)) throw new RangeError("lockStaleMs must be greater than 0");
  if (!(timeoutMs >= 0)) throw new RangeError("lockTimeoutMs must be 0 or more");

  const key = path.resolve(lockPath);
  const previous = localQueues.get(key) ?? Promise.resolve();
  let leave: () => void = () => undefined;
  const turn = new Promise<void>((resolve) => {
    leave = resolve;
  });
  const tail = previous.then(() => turn);
  localQueues.set(key, tail);
  const leaveQueue = () => {
    leave();
    if (localQueues.get(key) === tail) localQueues.delete(key);
  };

  const started = Date.now();
  const abort = new AbortController();
  const timedOut = await Promise.race([
    previous.then(() => false),
    delay(timeoutMs, true, { signal: abort.signal }).catch(() => false),
  ]);
  abort.abort();
  if (timedOut) {
    leaveQueue();
    throw new LockTimeoutError(
      lockPath,
      Date.now() - started,
      `another task of this process (pid ${process.pid})`,
    );
  }
  try {
    const lock = await acquireFileOnly(lockPath, staleMs, Math.max(0, timeoutMs - (Date.now() - started)));
    return {
      path: lock.path,
      async release() {
        try {
          await lock.release();
        } finally {
          leaveQueue();
        }
      },
    };
  } catch (error) {
    leaveQueue();
    throw error;
  }
}

async function acquireFileOnly(lockPath: string, staleMs: number, timeoutMs: number): Promise<FileLock> {
  const record: LockRecord = {
    pid: process.pid,
    host: os.hostname(),
    token: randomBytes(12).toString("hex"),
    since: new Date().toISOString(),
  };
  const started = Date.now();
  let backoff = 5;
  for (;;) {
    const handle = await tryCreate(lockPath, record);
    if (handle) return holdLock(lockPath, handle, staleMs);

    let stat: Awaited<ReturnType<typeof fs.stat>> | null = null;
    let text = "";
    try {
      stat = await fs.stat(lockPath);
      text = await fs.readFile(lockPath, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
    if (stat === null) continue; // released between our attempts: contend again at once
    if (isStale(parseRecord(text), stat.mtimeMs, staleMs)) {
      await breakStale(lockPath, stat.ino);
      continue;
    }
    if (Date.now() - started >= timeoutMs) {
      throw new LockTimeoutError(lockPath, Date.now() - started, await describeHolder(lockPath));
    }
    await delay(backoff);
    backoff = Math.min(backoff * 2, 100);
  }
}

async function holdLock(lockPath: string, handle: FileHandle, staleMs: number): Promise<FileLock> {
  const { ino } = await handle.stat();
  const heartbeat = setInterval(
    () => {
      const now = new Date();
      handle.utimes(now, now).catch(() => undefined);
    },
    Math.max(10, Math.floor(staleMs / 3)),
  );
  heartbeat.unref();
  let released = false;
  return {
    path: lockPath,
    async release() {
      if (released) return;
      released = true;
      clearInterval(heartbeat);
      try {
        const current = await fs.stat(lockPath);
        if (current.ino === ino) await fs.rm(lockPath, { force: true });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      } finally {
        await handle.close().catch(() => undefined);
      }
    },
  };
}

/** Runs `fn` while holding the lock at `lockPath`; the lock is released however `fn` ends. */
export async function withFileLock<T>(
  lockPath: string,
  options: FileLockOptions,
  fn: () => Promise<T>,
): Promise<T> {
  const lock = await acquireFileLock(lockPath, options);
  try {
    return await fn();
  } finally {
    await lock.release();
  }
}
