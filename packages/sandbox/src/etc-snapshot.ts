import { chmod, cp, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { isProcessAlive } from "@overseer/process";
import { buildGroup, buildPasswd } from "./sandbox-identity.ts";

/**
 * The sandbox's /etc: a private copy of the allow-listed host entries plus synthetic passwd and
 * group, bound read-only as ONE mount. Binding the ~30 entries one by one costs about 5 ms per
 * spawn (bwrap mounts are sequential syscalls); one directory bind costs one. Symlinks are copied
 * verbatim, so `/etc/localtime -> /usr/share/zoneinfo/…` resolves against the sandbox's /usr.
 *
 * A snapshot is taken once per driver instance and uid/gid pair (host /etc changes are picked up
 * by the next worker start) and removed by `dispose()`. Snapshot directories are named
 * `etc-<workerPid>-*`; those of dead workers are removed when a new one is taken.
 */

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

/** Creates the snapshot directory and returns its path. */
export async function createEtcSnapshot(input: EtcSnapshotInput): Promise<string> {
  await sweepDeadWorkerDirs(input.root, "etc");
  const dir = await mkdtemp(join(input.root, `etc-${process.pid}-`));
  await chmod(dir, 0o755);
  for (const entry of input.entries) {
    const target = join(dir, entry);
    await mkdir(dirname(target), { recursive: true });
    await cp(join(input.source ?? "/etc", entry), target, {
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
  return dir;
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
