import { randomBytes } from "node:crypto";
import { chmodSync, lstatSync, mkdirSync, statfsSync, unlinkSync, writeFileSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SandboxSetupError } from "./sandbox-errors.ts";

/**
 * Host directory for per-run driver files (bwrap options, synthetic passwd, egress socket). It may
 * sit in a world-writable place such as /tmp, so before use we insist it is a real directory owned
 * by the worker's uid with no group/other access: another host user must not be able to pre-create
 * it, swap it for a symlink, or read a run's files.
 */

/** Default parent of per-run runtime directories. */
export function defaultRuntimeRoot(): string {
  return join(tmpdir(), `overseer-sandbox-${process.getuid?.() ?? "user"}`);
}

/** statfs(2) f_type of a tmpfs. */
const TMPFS_MAGIC = 0x01021994;

/**
 * Default parent of the per-run options files ({@link writeRunFile}): a private directory on
 * /dev/shm when that is a tmpfs, else null (they go to the runtime root). A file created and
 * removed on every sandboxed spawn costs the worker's thread ~150-500 µs of CPU (and up to
 * 2 ms of blocked event loop) on an ext4 /tmp, against ~27 µs on a tmpfs (measured: 2,000
 * create+write+unlink of a 2.5 KB file). The directory gets the runtime root's checks
 * (0700, owned by the worker, no symlink), and the sandbox never sees the host's /dev/shm (it
 * has a private tmpfs there). Only the options file moves: the snapshots stay in the runtime
 * root, where /bin's hard links to the commands' files can be made.
 */
export function defaultRunFileRoot(shmDir = "/dev/shm"): string | null {
  try {
    if (statfsSync(shmDir).type !== TMPFS_MAGIC) return null;
  } catch {
    return null;
  }
  return join(shmDir, `overseer-sandbox-${process.getuid?.() ?? "user"}`);
}

/**
 * Creates (or checks) the runtime root: a 0700 directory owned by this process's uid. The same
 * check as {@link writeRunFile}'s (synchronous: a local mkdir and lstat).
 */
export async function ensurePrivateDir(path: string): Promise<void> {
  ensurePrivateDirSync(path);
}

/** A 0700 directory owned by this process's uid at `path`, made if absent; anything else is refused. */
function ensurePrivateDirSync(path: string): void {
  mkdirSync(path, { recursive: true, mode: 0o700 });
  const stat = lstatSync(path);
  const uid = process.getuid?.();
  if (!stat.isDirectory() || (uid !== undefined && stat.uid !== uid)) {
    throw new SandboxSetupError(
      `sandbox runtime directory ${path} is not a directory owned by uid ${uid}; remove it or set the driver option runtimeRoot to a private directory`,
    );
  }
  if ((stat.mode & 0o077) !== 0) chmodSync(path, 0o700);
}

/** A fresh private directory for one run under `root`. */
export async function createRunDir(root: string): Promise<string> {
  await ensurePrivateDir(root);
  // The worker pid in the name lets a later worker remove a crashed one's leftovers.
  return mkdtemp(join(root, `run-${process.pid}-`));
}

/**
 * Writes a run's one private file straight into `root` (0600, never over an existing file): a
 * run that needs no more than that is spared a directory of its own (mkdtemp, then a recursive
 * rm at cleanup). Named like a run directory, so a crashed worker's leftovers are swept the same way.
 *
 * Synchronous, like {@link removeRunFile}: a few KiB into the local temp dir return in
 * microseconds, while the promise API's five thread-pool round trips (mkdir, lstat, open, write,
 * close) cost the worker ~1 ms of CPU on every sandboxed spawn (measured: writeFile was 1.3 ms of
 * the worker's 2.4 ms prepare per run).
 */
export function writeRunFile(root: string, content: string): string {
  ensurePrivateDirSync(root);
  const file = join(root, `run-${process.pid}-${randomBytes(6).toString("hex")}`);
  writeFileSync(file, content, { mode: 0o600, flag: "wx" });
  return file;
}

/** Removes a file written by {@link writeRunFile}; one that is already gone is fine. */
export function removeRunFile(file: string): void {
  try {
    unlinkSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
}
