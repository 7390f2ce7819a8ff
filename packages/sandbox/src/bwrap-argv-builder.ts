import type { ResolvedSandboxSpec } from "./sandbox-spec-schema.ts";

/**
 * Builds bwrap's options (everything before `--` COMMAND) from a resolved spec and facts about the
 * host gathered by the driver. Pure, so the policy can be read and unit-tested in one place.
 *
 * Threat model and the reasoning behind each group of options:
 * - The worker is root. bwrap run by root keeps every capability unless told otherwise, so we
 *   unshare the user namespace (`--unshare-user --uid/--gid`, the sandbox user maps to host uid 0)
 *   AND drop every capability (`--cap-drop ALL`); `--disable-userns` stops the agent from creating
 *   a nested user namespace in which it would hold capabilities again.
 * - Because the sandbox user IS host uid 0 for permission checks, every root-owned file it can see
 *   is readable (and writable unless the mount is read-only). So visibility is the read barrier:
 *   nothing of the host root is bound, only /usr, the merged-usr links, a copy of allow-listed
 *   /etc entries (no shadow, sudoers, ssh keys, npmrc…) with synthetic passwd/group, and the
 *   caller's binds. /proc/sys and other writable /proc knobs are re-bound read-only (bwrap leaves
 *   /proc/sys writable here, which would let the sandbox rewrite kernel.core_pattern on the host).
 * - Fresh pid/ipc/uts/cgroup/net namespaces (`--unshare-all`): no host processes, no abstract
 *   unix sockets, no loopback services (Postgres, Redis). Proxy mode keeps the empty net namespace
 *   and reaches the egress proxy through a unix socket bound at /overseer/egress.sock.
 * - `--die-with-parent` + the pid namespace: when the outer bwrap dies (process-group kill), the
 *   namespace's init gets SIGKILL and the kernel kills every process in it, setsid'd or not.
 * - `--new-session`: no controlling terminal, so TIOCSTI cannot inject keystrokes into the
 *   worker's terminal (the seccomp filter blocks the ioctl as well).
 * - `--clearenv` + `--setenv`: the environment is exactly the spec's (HOME forced to the tmpfs home).
 * - Private size-capped tmpfs for /tmp, HOME and /dev/shm; `/` and `/dev` remounted read-only so
 *   nothing else inside is writable.
 * - Fixed places for a process that lost its environment (`env -i`): the control dir is bound a
 *   second time at SANDBOX_CONTROL_MOUNT (the same directory, no new writable path), and the
 *   spec's commands sit read-only in /bin, which glibc's and the shells' PATH-less search reads
 *   (bin-snapshot.ts).
 * - A run on an image (`spec.rootfs`, a digest's unpacked root filesystem from the image cache)
 *   gets the image's /usr, merged-usr links, /lib* and /opt in place of the host's, and a copy of
 *   the image's /etc with the same synthetic accounts; everything else above stays the same.
 */

/** HOME inside every bwrap sandbox: a private tmpfs. */
export const SANDBOX_HOME = "/home/agent";
/** Where run-time files the driver provides (egress socket, bridge script) appear inside. */
export const SANDBOX_RUNTIME_MOUNT = "/overseer";
/**
 * The run's control dir, bound (writable) here as well as at its own path: a fixed place where a
 * command that lost its environment (`env -i overseer-agent …`) still finds it.
 */
export const SANDBOX_CONTROL_MOUNT = `${SANDBOX_RUNTIME_MOUNT}/control`;
/** Hostname inside the sandbox (its own UTS namespace). */
export const SANDBOX_HOSTNAME = "overseer-sandbox";

/** `/etc` entries visible read-only inside. Anything not listed (shadow, sudoers, ssh, npmrc, …) is absent. */
export const ETC_ALLOWLIST: readonly string[] = [
  "alternatives",
  "bash.bashrc",
  "ca-certificates",
  "crypto-policies/back-ends",
  "debian_version",
  "gai.conf",
  "host.conf",
  "hosts",
  "inputrc",
  "ld.so.cache",
  "ld.so.conf",
  "ld.so.conf.d",
  "locale.alias",
  "locale.conf",
  "localtime",
  "lsb-release",
  "magic",
  "magic.mime",
  "mime.types",
  "nsswitch.conf",
  "os-release",
  "pki/ca-trust/extracted",
  "pki/tls/certs",
  "profile",
  "protocols",
  "resolv.conf",
  "rpc",
  "services",
  "shells",
  "ssl/certs",
  "ssl/openssl.cnf",
  "terminfo",
  "timezone",
];

/** Top-level paths that are either merged-usr symlinks or directories of system libraries/binaries. */
export const SYSTEM_TOP_LEVEL: readonly string[] = ["/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];

/**
 * /proc entries re-bound read-only over the fresh procfs: knobs whose only protection is file
 * ownership, which host uid 0 passes (kernel.core_pattern in /proc/sys alone is a host takeover;
 * sysrq-trigger reboots; acpi wakeup…). Entries guarded by a capability check (mtrr, kpage*,
 * kmsg) need no bind: every capability is dropped. BWRAP_COVERED_PROC lists the ones bwrap
 * covers itself. /proc/sys stays here although bwrap's list names it too: bwrap binds an entry
 * only when access(W_OK) on it succeeds, and the kernel refuses W_OK on the sysctl root
 * directory (proc_sys_permission), so bwrap leaves /proc/sys writable.
 */
export const PROC_READ_ONLY: readonly string[] = [
  "sys",
  "sysrq-trigger",
  "fs",
  "acpi",
  "scsi",
  "driver",
  "asound",
];
/**
 * /proc entries bwrap's own `--proc` re-binds read-only (nosuid, nodev, noexec) right after
 * mounting the procfs, whenever its setup, privileged in the sandbox's user namespace where host
 * uid 0 is mapped, may write them (bubblewrap.c, cover_proc_dirs, unchanged since 0.3): irq
 * affinity and the bus directories. A bind of ours over them showed the same files with the same
 * flags (less noexec) and cost bwrap a mount and a parse of /proc/self/mountinfo (~0.2 ms of
 * CPU per spawn each). Test: bwrap-proc-read-only.test.ts proves them read-only inside.
 * sysrq-trigger is on bwrap's list as well but stays in PROC_READ_ONLY: absent on the kernels
 * the tests run on, so its cover cannot be proven there.
 */
export const BWRAP_COVERED_PROC: readonly string[] = ["irq", "bus"];
/** /proc files hidden behind /dev/null (kernel memory/addresses, host-wide timers and latency knobs). */
export const PROC_MASKED_FILES: readonly string[] = [
  "kcore",
  "kallsyms",
  "timer_list",
  "sched_debug",
  "latency_stats",
];

/**
 * A top-level entry of the sandbox's system: a symlink, a directory bound whole, or (`entries`) a
 * directory made on the sandbox's root with each of its entries bound, so binds below it (the
 * worker's own files under an image's /opt, e.g. /opt/overseer/dist/bin) still get their mount
 * points.
 */
export type TopLevelEntry =
  | { path: string; kind: "symlink"; target: string }
  | { path: string; kind: "dir"; entries?: readonly string[] };

/** Host facts the builder needs; gathered (and cached) by the driver. */
export interface BwrapHostLayout {
  topLevel: readonly TopLevelEntry[];
  /** Allow-listed /etc entries that exist on this host, relative to /etc (copied into the /etc snapshot). */
  etcEntries: readonly string[];
  /** Entries of PROC_READ_ONLY that exist on this host. */
  procReadOnly: readonly string[];
  /** Entries of PROC_MASKED_FILES that exist on this host. */
  procMasked: readonly string[];
  /**
   * Where /usr, the top-level entries and the /etc snapshot come from: absent for the host, an
   * unpacked image's root filesystem otherwise (bwrap-host-layout.ts, `detectImageLayout`).
   */
  systemRoot?: string;
}

/** A caller-requested bind or mask, with the host source already resolved (realpath). */
export type UserMount =
  | { kind: "bind"; source: string; dest: string; writable: boolean }
  | { kind: "mask"; dest: string; isDirectory: boolean };

export interface BwrapRunFiles {
  /** Host directory bound read-only as /etc (allow-listed copies + synthetic passwd/group, see etc-snapshot.ts). */
  etcDir: string;
  /** Large allow-listed /etc directories bound read-only over their mount points in `etcDir`. */
  etcBinds: readonly { source: string; dest: string }[];
  /** Host directory bound read-only at SANDBOX_RUNTIME_MOUNT (proxy mode; holds a `control` mount point), or null. */
  runtimeDir: string | null;
  /** The run's control dir on the host (resolved), bound writable at SANDBOX_CONTROL_MOUNT. */
  controlDir: string;
  /** Host directory bound read-only at /bin instead of the merged-/usr symlink (bin-snapshot.ts), or null. */
  binDir: string | null;
  /** Commands bound read-only at `/bin/NAME` over the bin dir's placeholders (only with a bin dir). */
  commands: readonly { name: string; source: string }[];
  /** Whether a seccomp program is passed on fd `seccompFd`. */
  seccompFd: number | null;
}

export interface BwrapBuildInput {
  spec: ResolvedSandboxSpec;
  uid: number;
  gid: number;
  layout: BwrapHostLayout;
  userMounts: readonly UserMount[];
  files: BwrapRunFiles;
  /** The final environment (spec env + HOME + proxy variables). */
  env: Readonly<Record<string, string>>;
}

function depth(path: string): number {
  return path === "/" ? 0 : path.split("/").length - 1;
}

/** Parents before children; at equal depth binds before masks, read-only before writable. */
export function orderUserMounts(mounts: readonly UserMount[]): UserMount[] {
  const rank = (m: UserMount) => (m.kind === "mask" ? 2 : m.writable ? 1 : 0);
  return mounts
    .map((mount, index) => ({ mount, index }))
    .sort(
      (a, b) =>
        depth(a.mount.dest) - depth(b.mount.dest) || rank(a.mount) - rank(b.mount) || a.index - b.index,
    )
    .map(({ mount }) => mount);
}

function within(path: string, dir: string): boolean {
  return path === dir || path.startsWith(`${dir}/`);
}

/** Whether read-only bind `outer` shows at `inner.dest` exactly `inner.source` (same relative path below both). */
function shows(outer: UserMount, inner: UserMount & { kind: "bind" }): boolean {
  if (outer.kind !== "bind" || outer.writable || outer.dest === "/" || !within(inner.dest, outer.dest))
    return false;
  return inner.source === `${outer.source}${inner.dest.slice(outer.dest.length)}`;
}

/**
 * The user mounts without the read-only binds another read-only bind already shows: a bind whose
 * source and destination lie at the same relative path below an outer bind's (a worktree's admin
 * directory inside its mirror, both bound read-only), with no other mount at or between the two
 * destinations (a mask there, or a writable bind, would change what the outer bind shows, and
 * then the inner one stays). bwrap binds recursively and remounts read-only recursively, so the
 * sandbox sees the same tree, the same files, read-only all the same; each bind dropped saves
 * bwrap one parse of /proc/self/mountinfo (~0.2 ms of CPU per spawn).
 */
export function withoutCoveredBinds(mounts: readonly UserMount[]): UserMount[] {
  const dropped = new Set<UserMount>();
  const shallowFirst = [...mounts].sort((a, b) => depth(a.dest) - depth(b.dest));
  for (const inner of shallowFirst) {
    if (inner.kind !== "bind" || inner.writable) continue;
    const outer = shallowFirst.find((m) => m !== inner && !dropped.has(m) && shows(m, inner));
    if (outer === undefined) continue;
    const between = mounts.some(
      (m) =>
        m !== outer &&
        m !== inner &&
        !dropped.has(m) &&
        within(m.dest, outer.dest) &&
        within(inner.dest, m.dest),
    );
    if (!between) dropped.add(inner);
  }
  return mounts.filter((m) => !dropped.has(m));
}

export function buildBwrapArgs(input: BwrapBuildInput): string[] {
  const { spec, layout, files } = input;
  const size = String(spec.limits.tmpfsBytes);
  const args: string[] = [
    "--unshare-all",
    "--unshare-user",
    "--uid",
    String(input.uid),
    "--gid",
    String(input.gid),
    "--disable-userns",
    "--cap-drop",
    "ALL",
    "--die-with-parent",
    "--new-session",
    "--hostname",
    SANDBOX_HOSTNAME,
    "--clearenv",
  ];
  for (const key of Object.keys(input.env).sort()) args.push("--setenv", key, input.env[key] as string);

  const system = layout.systemRoot ?? "";
  args.push("--ro-bind", `${system}/usr`, "/usr");
  for (const entry of layout.topLevel) {
    if (entry.path === "/bin" && files.binDir !== null) args.push("--ro-bind", files.binDir, "/bin");
    else if (entry.kind === "symlink") args.push("--symlink", entry.target, entry.path);
    else if (entry.entries === undefined) args.push("--ro-bind", `${system}${entry.path}`, entry.path);
    else {
      args.push("--dir", entry.path);
      for (const name of entry.entries)
        args.push("--ro-bind", `${system}${entry.path}/${name}`, `${entry.path}/${name}`);
    }
  }
  if (files.binDir !== null) {
    for (const command of files.commands) args.push("--ro-bind", command.source, `/bin/${command.name}`);
  }
  args.push("--ro-bind", files.etcDir, "/etc");
  for (const bind of files.etcBinds) args.push("--ro-bind", bind.source, bind.dest);

  args.push("--proc", "/proc");
  for (const entry of layout.procReadOnly) args.push("--ro-bind", `/proc/${entry}`, `/proc/${entry}`);
  for (const entry of layout.procMasked) args.push("--ro-bind", "/dev/null", `/proc/${entry}`);

  args.push("--dev", "/dev", "--size", size, "--tmpfs", "/dev/shm");
  args.push("--size", size, "--tmpfs", "/tmp");
  args.push("--dir", "/var", "--symlink", "/tmp", "/var/tmp");
  args.push("--size", size, "--tmpfs", SANDBOX_HOME);
  if (files.runtimeDir !== null) args.push("--ro-bind", files.runtimeDir, SANDBOX_RUNTIME_MOUNT);
  args.push("--bind", files.controlDir, SANDBOX_CONTROL_MOUNT);

  for (const mount of orderUserMounts(withoutCoveredBinds(input.userMounts))) {
    if (mount.kind === "bind") args.push(mount.writable ? "--bind" : "--ro-bind", mount.source, mount.dest);
    else if (mount.isDirectory)
      args.push("--size", "4096", "--tmpfs", mount.dest, "--remount-ro", mount.dest);
    else args.push("--ro-bind", "/dev/null", mount.dest);
  }

  args.push("--remount-ro", "/dev", "--remount-ro", "/");
  args.push("--chdir", spec.checkoutDir);
  if (files.seccompFd !== null) args.push("--seccomp", String(files.seccompFd));
  return args;
}
