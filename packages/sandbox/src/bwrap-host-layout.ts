import { lstatSync, realpathSync, statSync } from "node:fs";
import { lstat, readdir, readlink } from "node:fs/promises";
import { join, resolve } from "node:path";
import {
  type BwrapHostLayout,
  ETC_ALLOWLIST,
  PROC_MASKED_FILES,
  PROC_READ_ONLY,
  SYSTEM_TOP_LEVEL,
  type TopLevelEntry,
  type UserMount,
} from "./bwrap-argv-builder.ts";
import { canAccess } from "./path-access.ts";
import { SandboxSetupError, SandboxSpecError } from "./sandbox-errors.ts";
import type { ResolvedSandboxSpec } from "./sandbox-spec-schema.ts";

/**
 * What the bwrap driver reads from the filesystem before it builds a sandbox: the system layout
 * (the host's, or an unpacked image's) and the spec's binds, masks and commands resolved against
 * the host.
 */

/** `/etc` entries that may never be exposed, even through `extraEtcEntries`. */
const ETC_NEVER =
  /^(shadow|gshadow|shadow-|gshadow-|sudoers|sudoers\.d|ssh|ssl\/private|security|passwd|group)(\/|$)/;

/** Reads the host facts `buildBwrapArgs` needs. */
export async function detectBwrapHostLayout(
  extraEtcEntries: readonly string[] = [],
): Promise<BwrapHostLayout> {
  const etcEntries: string[] = [];
  for (const entry of [...ETC_ALLOWLIST, ...extraEtcEntries]) {
    if (entry.includes("..") || entry.startsWith("/") || ETC_NEVER.test(entry)) {
      throw new SandboxSpecError(
        `extraEtcEntries: ${JSON.stringify(entry)} is not allowed (relative, no "..", never shadow/sudoers/ssh/ssl/private/passwd/group)`,
      );
    }
    if (!etcEntries.includes(entry) && (await canAccess(`/etc/${entry}`))) etcEntries.push(entry);
  }
  return { ...(await kernelFacts()), topLevel: await topLevelEntries("", SYSTEM_TOP_LEVEL), etcEntries };
}

/**
 * The layout of a sandbox whose system is an unpacked image (`rootfs`): its /usr, merged-usr
 * links, /lib* and /opt instead of the host's, and every entry of ITS /etc (the image's own
 * files, no host secret) except the accounts, which stay synthetic. /proc facts are the host's.
 */
export async function detectImageLayout(rootfs: string): Promise<BwrapHostLayout> {
  const names = await readdir(join(rootfs, "etc")).catch(() => [] as string[]);
  const etcEntries = names.filter((name) => !ETC_NEVER.test(name) && !ETC_IMAGE_SKIPPED.has(name)).sort();
  return {
    ...(await kernelFacts()),
    // The image's /opt entry by entry: the worker's own install may live under /opt (the
    // production image's /opt/overseer), and its binds need mount points there.
    topLevel: [...(await topLevelEntries(rootfs, SYSTEM_TOP_LEVEL)), ...(await imageOpt(rootfs))],
    etcEntries,
    systemRoot: rootfs,
  };
}

async function imageOpt(rootfs: string): Promise<TopLevelEntry[]> {
  const info = await lstat(join(rootfs, "opt")).catch(() => null);
  if (info === null) return [];
  if (info.isSymbolicLink())
    return [{ path: "/opt", kind: "symlink", target: await readlink(join(rootfs, "opt")) }];
  if (!info.isDirectory()) return [];
  return [{ path: "/opt", kind: "dir", entries: (await readdir(join(rootfs, "opt"))).sort() }];
}

/** Image /etc entries the snapshot makes itself (mtab) or that describe the image's host. */
const ETC_IMAGE_SKIPPED = new Set(["mtab", "hostname"]);

async function topLevelEntries(root: string, paths: readonly string[]): Promise<TopLevelEntry[]> {
  const topLevel: TopLevelEntry[] = [];
  for (const path of paths) {
    try {
      const info = await lstat(`${root}${path}`);
      if (info.isSymbolicLink())
        topLevel.push({ path, kind: "symlink", target: await readlink(`${root}${path}`) });
      else if (info.isDirectory()) topLevel.push({ path, kind: "dir" });
    } catch {
      // absent on this host
    }
  }
  return topLevel;
}

async function kernelFacts(): Promise<Pick<BwrapHostLayout, "procReadOnly" | "procMasked">> {
  const procReadOnly: string[] = [];
  for (const entry of PROC_READ_ONLY) if (await canAccess(`/proc/${entry}`)) procReadOnly.push(entry);
  const procMasked: string[] = [];
  for (const entry of PROC_MASKED_FILES) if (await canAccess(`/proc/${entry}`)) procMasked.push(entry);
  return { procReadOnly, procMasked };
}

function isUnder(path: string, dir: string): boolean {
  return path === dir || dir === "/" || path.startsWith(`${dir}/`);
}

/**
 * `path`, resolved, when it is a directory. Like every host path a prepare resolves (here, in
 * resolveUserMounts and resolveCommands), checked with synchronous calls: a local stat or
 * realpath(3) costs ~10 µs of the worker's CPU, the promise API's thread-pool round trip 30-50
 * µs, and a run's prepare resolves a dozen paths for each sandboxed spawn.
 */
export async function requireDirectory(field: string, path: string): Promise<string> {
  return requireDirectorySync(field, path);
}

function requireDirectorySync(field: string, path: string): string {
  let info: ReturnType<typeof statSync>;
  try {
    info = statSync(path);
  } catch {
    throw new SandboxSpecError(`${field}: ${path} does not exist; create it before preparing the sandbox`);
  }
  if (!info.isDirectory())
    throw new SandboxSpecError(`${field}: expected a directory, received ${path} (not a directory)`);
  return realpathSync.native(path);
}

/** Resolves the spec's binds and masks against the host filesystem (synchronously: requireDirectory). */
export async function resolveUserMounts(
  spec: ResolvedSandboxSpec,
  visibleRoots: readonly string[],
): Promise<UserMount[]> {
  const mounts: UserMount[] = [];
  for (const [index, path] of spec.readOnlyBinds.entries()) {
    let source: string;
    try {
      source = realpathSync.native(path);
    } catch {
      throw new SandboxSpecError(`readOnlyBinds[${index}]: ${path} does not exist; bind only existing paths`);
    }
    mounts.push({ kind: "bind", source, dest: path, writable: false });
  }
  mounts.push({
    kind: "bind",
    source: requireDirectorySync("checkoutDir", spec.checkoutDir),
    dest: spec.checkoutDir,
    writable: true,
  });
  mounts.push({
    kind: "bind",
    source: requireDirectorySync("controlDir", spec.controlDir),
    dest: spec.controlDir,
    writable: true,
  });
  const visible = [...visibleRoots, ...mounts.map((m) => m.dest)];
  for (const [index, path] of spec.hiddenPaths.entries()) {
    if (path === spec.checkoutDir || path === spec.controlDir) {
      throw new SandboxSpecError(
        `hiddenPaths[${index}]: ${path} is the checkout or control dir itself; it cannot be hidden`,
      );
    }
    if (!visible.some((root) => isUnder(path, root))) continue; // not visible anyway
    let info: ReturnType<typeof lstatSync>;
    try {
      info = lstatSync(path);
    } catch {
      continue; // does not exist on the host: nothing to hide
    }
    mounts.push({ kind: "mask", dest: path, isDirectory: info.isDirectory() });
  }
  return mounts;
}

/** The resolved host source of the writable bind at `dest` (the checkout or control dir). */
export function resolvedSource(mounts: readonly UserMount[], dest: string): string {
  const bind = mounts.find((m) => m.kind === "bind" && m.writable && m.dest === dest);
  if (bind?.kind !== "bind") throw new SandboxSetupError(`no resolved bind for ${dest}`);
  return bind.source;
}

/** A command of the spec with its host file resolved. */
export interface ResolvedCommand {
  name: string;
  source: string;
  /** The file's inode and mtime when resolved (`ino:mtimeMs`): a changed file gets a new /bin snapshot. */
  version: string;
}

/** The spec's commands with their host files resolved; each must be an existing regular file. */
export async function resolveCommands(spec: ResolvedSandboxSpec): Promise<ResolvedCommand[]> {
  const commands: ResolvedCommand[] = [];
  for (const [name, path] of Object.entries(spec.commands)) {
    const source = resolvedOrNull(path);
    const info = source === null ? undefined : statSync(source, { throwIfNoEntry: false });
    if (source === null || info === undefined || !info.isFile()) {
      throw new SandboxSpecError(
        `commands.${name}: ${path} is not an existing file; name the command's file`,
      );
    }
    commands.push({ name, source, version: `${info.ino}:${info.mtimeMs}` });
  }
  return commands;
}

function resolvedOrNull(path: string): string | null {
  try {
    return realpathSync.native(path);
  } catch {
    return null;
  }
}

/** Where /bin points on a merged-/usr host (`/usr/bin`), or null when /bin is not such a symlink. */
export function mergedUsrBin(layout: BwrapHostLayout): string | null {
  const bin = layout.topLevel.find((entry) => entry.path === "/bin");
  if (bin?.kind !== "symlink") return null;
  const target = resolve("/", bin.target);
  return target.startsWith("/usr/") ? target : null;
}
