import {
  chmod,
  cp,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rm,
  symlink,
  writeFile,
} from "node:fs/promises";
import { dirname, join } from "node:path";
import { isProcessAlive } from "@overseer/process";
import { buildGroup, buildPasswd } from "./sandbox-identity.ts";

/**
 * The sandbox's /etc: a private copy of the allow-listed host entries plus synthetic passwd and
 * group, bound read-only as ONE mount. Binding the ~30 entries one by one costs about 5 ms per
 * spawn (bwrap mounts are sequential syscalls); one directory bind costs one. Symlinks are copied
 * verbatim, so `/etc/localtime -> /usr/share/zoneinfo/…` resolves against the sandbox's /usr.
 *
 * A directory entry holding more than ETC_COPY_LIMIT entries (Debian's /etc/alternatives, ~400
 * symlinks; /etc/ssl/certs, ~300) is not copied but bound read-only over an empty directory in
 * the snapshot: a sandbox sees the same tree either way, and two binds per spawn cost far less
 * than ~700 symlinks per snapshot. Measured on a 2-core VM: a whole copy took 400–600 ms and as
 * much CPU, most of it the kernel's ext4 inode allocation for symlinks, which slows further as
 * snapshots are made and removed (each worker start, each test's driver).
 *
 * A snapshot is taken once per driver instance and uid/gid pair (host /etc changes are picked up
 * by the next worker start) and removed by `dispose()`. Snapshot directories are named
 * `etc-<workerPid>-*`; those of dead workers are removed when a new one is taken.
 */

/** A directory entry with more entries than this in its tree is bound, not copied. */
export const ETC_COPY_LIMIT = 64;

/** Removes `<prefix>-<pid>-*` entries of `root` whose pid is no longer alive. */
export async function sweepDeadWorkerDirs(root: string, prefix: string): Promise<void> {
  let entries: string[];
  try {
    entries = await readdir(root);
  } catch {
    return;
  }
  for (const entry of entries) {
    const match = new RegExp(`^${prefix}-(\\d+)-`).exec(entry);
    if (match !== null && Number(match[1]) !== process.pid && !isProcessAlive(Number(match[1]))) {
      await rm(join(root, entry), { recursive: true, force: true }).catch(() => undefined);
    }
  }
}

export interface EtcSnapshotInput {
  /** Private runtime root to create the snapshot in. */
  root: string;
  /** Allow-listed entries that exist on the host, relative to /etc. */
  entries: readonly string[];
  /** The /etc the entries are copied from. Default `/etc` (an image's: `<rootfs>/etc`). */
  source?: string;
  uid: number;
  gid: number;
  home: string;
}

/** A host directory bound read-only over its empty mount point in the snapshot. */
export interface EtcBind {
  /** Host path (under the snapshot's source /etc). */
  readonly source: string;
  /** Path inside the sandbox, under /etc. */
  readonly dest: string;
}

export interface EtcSnapshot {
  /** The snapshot directory, bound read-only as /etc. */
  readonly dir: string;
  /** The large directories bound over it, in order, right after it. */
  readonly binds: readonly EtcBind[];
}

/** Creates the snapshot directory. */
export async function createEtcSnapshot(input: EtcSnapshotInput): Promise<EtcSnapshot> {
  await sweepDeadWorkerDirs(input.root, "etc");
  const dir = await mkdtemp(join(input.root, `etc-${process.pid}-`));
  await chmod(dir, 0o755);
  const binds: EtcBind[] = [];
  for (const entry of input.entries) {
    const source = join(input.source ?? "/etc", entry);
    const target = join(dir, entry);
    await mkdir(dirname(target), { recursive: true });
    if (await largeDirectory(source)) {
      await mkdir(target, { mode: 0o755 });
      binds.push({ source, dest: `/etc/${entry}` });
      continue;
    }
    await cp(source, target, {
      recursive: true,
      dereference: false,
      verbatimSymlinks: true,
      preserveTimestamps: true,
      errorOnExist: false,
    });
  }
  await writeLoginProfile(dir, input.entries.includes("profile"));
  await writeFile(join(dir, "passwd"), buildPasswd(input.uid, input.gid, input.home), { mode: 0o644 });
  await writeFile(join(dir, "group"), buildGroup(input.gid), { mode: 0o644 });
  await symlink("../proc/self/mounts", join(dir, "mtab"));
  return { dir, binds };
}

/** Whether `path` is a directory (not a symlink to one) whose tree holds over ETC_COPY_LIMIT entries. */
async function largeDirectory(path: string): Promise<boolean> {
  const stats = await lstat(path).catch(() => null);
  if (stats === null || !stats.isDirectory()) return false;
  const names = await readdir(path, { recursive: true }).catch(() => []);
  return names.length > ETC_COPY_LIMIT;
}

/**
 * Login shells (`sh -lc`, `bash -l`: Codex runs tool commands that way) read /etc/profile, which
 * on Debian and most distributions sets PATH from scratch, dropping what the run put on it (the
 * `overseer-agent` directory, the CLI's own bin). The sandbox's /etc/profile therefore keeps the
 * PATH the shell started with in front of whatever the host profile sets.
 */
// biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansion, not a JS template
export const LOGIN_PATH_PROLOGUE = '__overseer_login_path="${PATH:-}"';
export const LOGIN_PATH_EPILOGUE = [
  // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansion, not a JS template
  'if [ -n "$__overseer_login_path" ]; then PATH="$__overseer_login_path${PATH:+:$PATH}"; fi',
  "export PATH",
  "unset __overseer_login_path",
].join("\n");

async function writeLoginProfile(dir: string, copied: boolean): Promise<void> {
  const target = join(dir, "profile");
  const host = copied ? await readFile(target, "utf8").catch(() => "") : "";
  await rm(target, { force: true });
  const body = [
    "# Overseer sandbox: the host's /etc/profile between lines that keep the run's PATH first.",
    LOGIN_PATH_PROLOGUE,
    host,
    LOGIN_PATH_EPILOGUE,
    "",
  ].join("\n");
  await writeFile(target, body, { mode: 0o644 });
}
