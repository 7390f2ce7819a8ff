import { dirname } from "node:path";
import {
  type BwrapHostLayout,
  orderUserMounts,
  SANDBOX_CONTROL_MOUNT,
  SANDBOX_HOME,
  SANDBOX_HOSTNAME,
  SANDBOX_RUNTIME_MOUNT,
  type UserMount,
} from "./bwrap-argv-builder.ts";
import { LAUNCHER_SETUP_FAILED_EXIT, shQuote } from "./launcher-script.ts";
import type { ResolvedSandboxSpec } from "./sandbox-spec-schema.ts";

/**
 * The OCI runtime bundle of a gVisor run (`config.json`) and the host-side command around
 * `runsc run`. Pure, so the policy reads and unit-tests in one place, like bwrap-argv-builder.ts.
 *
 * The policy is bwrap's, expressed as OCI:
 * - The root is a per-run SKELETON directory (read-only): empty mount points and the merged-usr
 *   symlinks, nothing of the host. /usr, the top-level system dirs (and /opt on an image) are bound
 *   read-only from the host or from the image's unpacked rootfs; /etc is the driver's snapshot
 *   (allow-listed entries, synthetic passwd/group) — the same layout bwrap builds.
 * - The checkout and the control dir (at its own path and at SANDBOX_CONTROL_MOUNT) are the only
 *   writable host paths; /tmp, /dev/shm and HOME are size-capped tmpfs.
 * - `--network=none`: gVisor's own netstack with loopback only. Proxy mode binds the run's egress
 *   socket read-only at /overseer and runs the same in-sandbox bridge as bwrap (127.0.0.1:3128 →
 *   unix socket); `--host-uds=open` lets the sandbox connect to that socket (and create none).
 * - The process runs as uid 0 OF GVISOR'S KERNEL with every capability dropped and
 *   no_new_privs: the checkout is owned by the worker (host root), and gVisor has no user-namespace
 *   mapping (bwrap maps its uid 1000 to host root the same way).
 * - Limits: RLIMIT_NPROC (gVisor's kernel enforces it for uid 0 too, unlike Linux), RLIMIT_CPU,
 *   RLIMIT_FSIZE and, without a memory cgroup, RLIMIT_AS; the host launcher puts `runsc` (and so
 *   the sentry and gofer) in the run's cgroup, which caps memory and CPU rate and kills everything.
 */

export interface OciMount {
  destination: string;
  type: "bind" | "tmpfs" | "proc";
  source: string;
  options?: string[];
}

export interface OciConfig {
  ociVersion: string;
  process: {
    terminal: false;
    user: { uid: number; gid: number };
    args: string[];
    env: string[];
    cwd: string;
    capabilities: Record<"bounding" | "effective" | "permitted" | "inheritable" | "ambient", string[]>;
    noNewPrivileges: true;
    rlimits: { type: string; hard: number; soft: number }[];
  };
  root: { path: string; readonly: true };
  hostname: string;
  mounts: OciMount[];
  linux: { namespaces: { type: string }[] };
}

export interface GvisorBundleFiles {
  /** The skeleton root directory (see `skeletonEntries`). */
  rootDir: string;
  /** Host directory bound read-only as /etc. */
  etcDir: string;
  /** Large allow-listed /etc directories bound read-only over their mount points in `etcDir`. */
  etcBinds: readonly { source: string; dest: string }[];
  /** Host directory bound read-only at SANDBOX_RUNTIME_MOUNT (proxy mode), or null. */
  runtimeDir: string | null;
  /** The run's control dir on the host (resolved). */
  controlDir: string;
  /** Host directory bound read-only at /bin (commands' placeholders), or null. */
  binDir: string | null;
  commands: readonly { name: string; source: string }[];
}

export interface GvisorBundleInput {
  spec: ResolvedSandboxSpec;
  argv: readonly string[];
  layout: BwrapHostLayout;
  userMounts: readonly UserMount[];
  files: GvisorBundleFiles;
  /** The final environment (spec env + HOME + proxy variables). */
  env: Readonly<Record<string, string>>;
  /** Whether a memory cgroup bounds the run (else RLIMIT_AS stands in, as for bwrap). */
  memoryCgroup: boolean;
}

const RO_BIND = ["rbind", "ro", "nosuid", "nodev"];
const RW_BIND = ["rbind", "rw", "nosuid", "nodev"];

function rlimit(type: string, value: number): { type: string; hard: number; soft: number } {
  return { type, hard: value, soft: value };
}

function systemMounts(input: GvisorBundleInput): OciMount[] {
  const { layout, files } = input;
  const system = layout.systemRoot ?? "";
  const mounts: OciMount[] = [
    { destination: "/usr", type: "bind", source: `${system}/usr`, options: RO_BIND },
  ];
  for (const entry of layout.topLevel) {
    if (entry.path === "/bin" && files.binDir !== null)
      mounts.push({ destination: "/bin", type: "bind", source: files.binDir, options: RO_BIND });
    else if (entry.kind === "dir")
      mounts.push({
        destination: entry.path,
        type: "bind",
        source: `${system}${entry.path}`,
        options: RO_BIND,
      });
  }
  if (files.binDir !== null) {
    for (const command of files.commands)
      mounts.push({
        destination: `/bin/${command.name}`,
        type: "bind",
        source: command.source,
        options: RO_BIND,
      });
  }
  mounts.push({ destination: "/etc", type: "bind", source: files.etcDir, options: RO_BIND });
  for (const bind of files.etcBinds)
    mounts.push({ destination: bind.dest, type: "bind", source: bind.source, options: RO_BIND });
  return mounts;
}

function userMountEntries(mounts: readonly UserMount[]): OciMount[] {
  return orderUserMounts(mounts).map((mount): OciMount => {
    if (mount.kind === "bind")
      return {
        destination: mount.dest,
        type: "bind",
        source: mount.source,
        options: mount.writable ? RW_BIND : RO_BIND,
      };
    return mount.isDirectory
      ? {
          destination: mount.dest,
          type: "tmpfs",
          source: "tmpfs",
          options: ["size=4096", "ro", "nosuid", "nodev"],
        }
      : { destination: mount.dest, type: "bind", source: "/dev/null", options: RO_BIND };
  });
}

/** The bundle's config.json for one run. */
export function buildGvisorConfig(input: GvisorBundleInput): OciConfig {
  const { spec, files } = input;
  const tmpfs = (destination: string): OciMount => ({
    destination,
    type: "tmpfs",
    source: "tmpfs",
    options: ["nosuid", "nodev", `size=${spec.limits.tmpfsBytes}`, "mode=1777"],
  });
  const mounts: OciMount[] = [
    { destination: "/proc", type: "proc", source: "proc" },
    { destination: "/dev", type: "tmpfs", source: "tmpfs", options: ["nosuid", "mode=755", "size=65536"] },
    tmpfs("/dev/shm"),
    ...systemMounts(input),
    tmpfs("/tmp"),
    { ...tmpfs(SANDBOX_HOME), options: ["nosuid", "nodev", `size=${spec.limits.tmpfsBytes}`, "mode=700"] },
  ];
  if (files.runtimeDir !== null)
    mounts.push({
      destination: SANDBOX_RUNTIME_MOUNT,
      type: "bind",
      source: files.runtimeDir,
      options: RO_BIND,
    });
  mounts.push({
    destination: SANDBOX_CONTROL_MOUNT,
    type: "bind",
    source: files.controlDir,
    options: RW_BIND,
  });
  mounts.push(...userMountEntries(input.userMounts));

  const rlimits = [
    rlimit("RLIMIT_NPROC", spec.limits.pidsMax),
    rlimit("RLIMIT_CPU", spec.limits.cpuSeconds),
    rlimit("RLIMIT_CORE", 0),
  ];
  if (!input.memoryCgroup) rlimits.push(rlimit("RLIMIT_AS", spec.limits.memoryBytes));
  if (spec.limits.fileSizeBytes !== undefined)
    rlimits.push(rlimit("RLIMIT_FSIZE", spec.limits.fileSizeBytes));

  return {
    ociVersion: "1.0.2",
    process: {
      terminal: false,
      user: { uid: 0, gid: 0 },
      args: [...input.argv],
      env: Object.keys(input.env)
        .sort()
        .map((key) => `${key}=${input.env[key]}`),
      cwd: spec.checkoutDir,
      capabilities: { bounding: [], effective: [], permitted: [], inheritable: [], ambient: [] },
      noNewPrivileges: true,
      rlimits,
    },
    root: { path: files.rootDir, readonly: true },
    hostname: SANDBOX_HOSTNAME,
    mounts,
    linux: {
      namespaces: [{ type: "pid" }, { type: "ipc" }, { type: "uts" }, { type: "mount" }, { type: "network" }],
    },
  };
}

function isUnder(path: string, dir: string): boolean {
  return path !== dir && path.startsWith(dir === "/" ? "/" : `${dir}/`);
}

export type SkeletonEntry =
  | { path: string; kind: "dir" }
  | { path: string; kind: "file" }
  | { path: string; kind: "symlink"; target: string };

/**
 * What the skeleton root must hold for `config`: a mount point for every mount that does not sit
 * inside another mount (those inside are the mounted source's own entries), the layout's
 * merged-usr symlinks, and /var/tmp → /tmp. `fileMounts` names the destinations that are files.
 */
export function skeletonEntries(
  config: OciConfig,
  layout: BwrapHostLayout,
  fileMounts: ReadonlySet<string>,
): SkeletonEntry[] {
  const destinations = config.mounts.map((m) => m.destination);
  const entries: SkeletonEntry[] = [];
  const seen = new Set<string>();
  const addDir = (path: string) => {
    for (let dir = path; dir !== "/" && !seen.has(dir); dir = dirname(dir)) {
      seen.add(dir);
      entries.push({ path: dir, kind: "dir" });
    }
  };
  for (const destination of destinations) {
    if (destinations.some((other) => isUnder(destination, other))) continue;
    if (fileMounts.has(destination)) {
      addDir(dirname(destination));
      entries.push({ path: destination, kind: "file" });
    } else addDir(destination);
  }
  for (const entry of layout.topLevel) {
    if (entry.kind === "symlink" && !destinations.includes(entry.path))
      entries.push({ path: entry.path, kind: "symlink", target: entry.target });
  }
  addDir("/var");
  entries.push({ path: "/var/tmp", kind: "symlink", target: "/tmp" });
  // Parents before children, so they can be created in order.
  return entries.sort((a, b) => a.path.split("/").length - b.path.split("/").length);
}

export interface RunscArgsInput {
  stateDir: string;
  bundleDir: string;
  containerId: string;
  platform: string;
  rootless: boolean;
  /** Proxy mode: the sandbox may connect to the host unix socket bound at /overseer. */
  egressSocket: boolean;
}

/** `runsc` global flags and the `run` command of one run. */
export function buildRunscArgs(input: RunscArgsInput): string[] {
  return [
    "--root",
    input.stateDir,
    "--network=none",
    "--ignore-cgroups",
    `--platform=${input.platform}`,
    ...(input.rootless ? ["--rootless"] : []),
    ...(input.egressSocket ? ["--host-uds=open"] : []),
    "run",
    "--bundle",
    input.bundleDir,
    input.containerId,
  ];
}

export interface GvisorLauncherInput {
  runscPath: string;
  procsFiles: readonly string[];
}

/**
 * The host launcher (spawned as `/usr/bin/env -i /bin/sh -c SCRIPT overseer-gvisor RUNSC-ARGS…`):
 * closes inherited descriptors 3-9, joins every run cgroup (aborting with 125 if one fails: a run
 * never starts unconfined), disables core files and execs runsc, which stays the spawned pid.
 */
export function buildGvisorLauncher(input: GvisorLauncherInput): string {
  const fail = (what: string) =>
    `{ echo ${shQuote(`overseer-gvisor: ${what}`)} >&2; exit ${LAUNCHER_SETUP_FAILED_EXIT}; }`;
  const lines = ["exec 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&-"];
  for (const file of input.procsFiles)
    lines.push(`echo $$ > ${shQuote(file)} || ${fail(`cannot join cgroup ${file}`)}`);
  lines.push("ulimit -c 0");
  lines.push(`exec ${shQuote(input.runscPath)} "$@"`);
  return lines.join("\n");
}
