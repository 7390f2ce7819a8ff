import { randomBytes } from "node:crypto";
import { statSync } from "node:fs";
import { mkdir, realpath, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { PROCESS_DEFAULTS, type PreludeLaunch } from "@overseer/process";
import { execa } from "execa";
import { type BinSnapshot, createBinSnapshot } from "./bin-snapshot.ts";
import {
  type BwrapHostLayout,
  buildBwrapArgs,
  SANDBOX_HOME,
  SANDBOX_RUNTIME_MOUNT,
} from "./bwrap-argv-builder.ts";
import {
  detectBwrapHostLayout,
  detectImageLayout,
  mergedUsrBin,
  type ResolvedCommand,
  requireDirectory,
  resolveCommands,
  resolvedSource,
  resolveUserMounts,
} from "./bwrap-host-layout.ts";
import {
  type CgroupPlan,
  type CgroupPlanOptions,
  describeCgroupPlan,
  detectCgroupPlan,
  RunCgroup,
} from "./cgroup-limits.ts";
import { DEFAULT_EGRESS_BRIDGE_PORT, EGRESS_BRIDGE_SOURCE } from "./egress-bridge-script.ts";
import { EgressProxy } from "./egress-proxy.ts";
import { type EgressProxyOptions, resolveEgressProxyOptions } from "./egress-proxy-options.ts";
import { createEtcSnapshot, type EtcSnapshot, sweepDeadWorkerDirs } from "./etc-snapshot.ts";
import { buildEgressLauncher, hostLaunchCommand, pointAtEgressBridge } from "./launcher-script.ts";
import { canAccess, findOnPath } from "./path-access.ts";
import { stopProcessTree } from "./process-tree.ts";
import {
  createRunDir,
  defaultRunFileRoot,
  defaultRuntimeRoot,
  ensurePrivateDir,
  removeRunFile,
  writeRunFile,
} from "./runtime-dir.ts";
import type {
  PreparedCommand,
  ProbeReport,
  SandboxCapabilities,
  SandboxDriver,
  StopOptions,
} from "./sandbox-driver.ts";
import { SandboxSetupError, SandboxSpecError, SandboxUnavailableError } from "./sandbox-errors.ts";
import { runSandboxProbe } from "./sandbox-probe.ts";
import { parseSandboxSpec, type SandboxLimits, type SandboxSpec } from "./sandbox-spec-schema.ts";
import { buildSeccompFilter, seccompSupported } from "./seccomp-filter.ts";

/**
 * The default driver on Linux: bubblewrap, run by the (root) worker. See `bwrap-argv-builder.ts`
 * for the namespace/mount policy and `launcher-script.ts` for how limits and the environment are
 * applied before bwrap starts.
 *
 * Identity: the agent runs as uid/gid 1000 ("agent") by default. Any unprivileged id works; 1000
 * is chosen over 65534 because inside the user namespace host-root-owned files (the checkout)
 * show as owned by the sandbox uid while files of other host users show as 65534 ("nobody"), so
 * with 1000 "mine" and "not mine" stay distinguishable for tools (git, npm) that look at owners.
 */

export interface BwrapDriverOptions {
  /** bwrap binary. Default: `/usr/bin/bwrap`, else the first `bwrap` on PATH. */
  bwrapPath?: string;
  /** Parent of per-run runtime directories (0700, owned by the worker). Default `$TMPDIR/overseer-sandbox-<uid>`. */
  runtimeRoot?: string;
  /**
   * Parent of the per-run bwrap options files (0700, owned by the worker). Default: a private
   * directory on /dev/shm when that is a tmpfs and `runtimeRoot` is not set, else `runtimeRoot`
   * (runtime-dir.ts, `defaultRunFileRoot`, says why).
   */
  runFileRoot?: string;
  /** Per-run cgroups (pids/memory/cpu). Default `{ mode: "auto", parentName: "overseer" }`. */
  cgroups?: CgroupPlanOptions;
  /** Install the seccomp filter (setuid bits, TIOCSTI, io_uring, syslog) where supported. Default true. */
  seccomp?: boolean;
  /** Node binary that runs the in-sandbox egress bridge (proxy mode). Default `/usr/bin/node`, else the worker's node. */
  nodePath?: string;
  /** Port of the egress bridge inside the sandbox (proxy mode). Default 3128. */
  egressBridgePort?: number;
  /** Extra `/etc` entries (relative, e.g. `"java-17-openjdk"`) to expose read-only. Default none. */
  extraEtcEntries?: readonly string[];
  /** Egress proxy tuning for proxy-mode runs (resolver/address check are injectable for tests). */
  egress?: Omit<EgressProxyOptions, "socketPath" | "allowHosts" | "allowPorts">;
}

/** Default unprivileged identity inside a bwrap sandbox. */
export const BWRAP_DEFAULT_UID = 1000;
export const BWRAP_DEFAULT_GID = 1000;

/**
 * The snapshot directory cached under `key`, created by `create` on first use; a failed creation
 * is forgotten, so the next run tries again.
 */
function snapshotOnce<T>(cache: Map<string, Promise<T>>, key: string, create: () => Promise<T>): Promise<T> {
  let snapshot = cache.get(key);
  if (snapshot === undefined) {
    snapshot = create();
    snapshot.catch(() => cache.delete(key));
    cache.set(key, snapshot);
  }
  return snapshot;
}

class BwrapPreparedCommand implements PreparedCommand {
  readonly driver = "bwrap" as const;
  private cleaned = false;

  constructor(
    readonly runId: string,
    readonly file: string,
    readonly args: readonly string[],
    readonly cwd: string,
    /** The run's private directory (proxy mode) or its one options file, removed by cleanup. */
    private readonly runPath: string,
    readonly cgroup: RunCgroup | null,
    private readonly proxy: EgressProxy | null,
    private readonly limits: SandboxLimits,
    readonly preludeLaunch: PreludeLaunch,
  ) {}

  async limitsReached(): Promise<string[]> {
    return (await this.cgroup?.limitsReached(this.limits)) ?? [];
  }

  readonly env: Readonly<Record<string, string>> = {};

  async stop(pid: number | undefined, options: StopOptions = {}): Promise<void> {
    if (pid !== undefined)
      await stopProcessTree(pid, {
        graceMs: options.graceMs ?? PROCESS_DEFAULTS.killGraceMs,
        spareRoot: true,
      });
    await this.cgroup?.killAll();
  }

  async cleanup(): Promise<void> {
    if (this.cleaned) return;
    this.cleaned = true;
    const errors: string[] = [];
    await this.proxy?.close().catch((error: Error) => errors.push(`egress proxy: ${error.message}`));
    await this.cgroup?.destroy().catch((error: Error) => errors.push(`cgroup: ${error.message}`));
    try {
      // The options file alone is unlinked: rm's recursive walk costs the worker more.
      if (this.proxy === null) removeRunFile(this.runPath);
      else await rm(this.runPath, { recursive: true, force: true });
    } catch (error) {
      errors.push(`runtime dir: ${(error as Error).message}`);
    }
    if (errors.length > 0)
      throw new SandboxSetupError(`sandbox cleanup of run ${this.runId} incomplete: ${errors.join("; ")}`);
  }
}

export class BwrapDriver implements SandboxDriver {
  readonly name = "bwrap" as const;
  private readonly runtimeRoot: string;
  private readonly runFileRoot: string;
  private layoutPromise: Promise<BwrapHostLayout> | null = null;
  private planPromise: Promise<CgroupPlan> | null = null;
  private bwrapPathPromise: Promise<string | null> | null = null;
  private seccompFilePromise: Promise<string | null> | null = null;
  private launcherShellPromise: Promise<string> | null = null;
  private readonly imageLayouts = new Map<string, Promise<BwrapHostLayout>>();
  private readonly etcSnapshots = new Map<string, Promise<EtcSnapshot>>();
  private readonly binSnapshots = new Map<string, Promise<BinSnapshot>>();

  constructor(private readonly options: BwrapDriverOptions = {}) {
    this.runtimeRoot = options.runtimeRoot ?? defaultRuntimeRoot();
    this.runFileRoot =
      options.runFileRoot ??
      (options.runtimeRoot === undefined ? defaultRunFileRoot() : null) ??
      this.runtimeRoot;
  }

  /**
   * Writes a run's bwrap options file into the run-file root, or into the runtime root when that
   * fails (a full /dev/shm must not stop runs).
   */
  private writeOptionsFile(content: string): string {
    try {
      return writeRunFile(this.runFileRoot, content);
    } catch (error) {
      if (this.runFileRoot === this.runtimeRoot) throw error;
      return writeRunFile(this.runtimeRoot, content);
    }
  }

  private bwrapPath(): Promise<string | null> {
    this.bwrapPathPromise ??= (async () => {
      if (this.options.bwrapPath !== undefined)
        return (await canAccess(this.options.bwrapPath)) ? this.options.bwrapPath : null;
      if (await canAccess("/usr/bin/bwrap")) return "/usr/bin/bwrap";
      return findOnPath("bwrap");
    })();
    return this.bwrapPathPromise;
  }

  /**
   * The host's layout, or the image's when the run has a rootfs: each read and checked once per
   * path (an image's rootfs is content-addressed, so a path keeps its content; every prepare of
   * every run on a cached image skips the checks and the reads).
   */
  private async layout(rootfs?: string): Promise<BwrapHostLayout> {
    if (rootfs === undefined) {
      this.layoutPromise ??= detectBwrapHostLayout(this.options.extraEtcEntries);
      return this.layoutPromise;
    }
    let layout = this.imageLayouts.get(rootfs);
    if (layout === undefined) {
      layout = (async () => {
        const root = await requireDirectory("rootfs", rootfs);
        await requireDirectory("rootfs", join(root, "usr"));
        return detectImageLayout(root);
      })();
      layout.catch(() => this.imageLayouts.delete(rootfs));
      this.imageLayouts.set(rootfs, layout);
    }
    return layout;
  }

  private plan(): Promise<CgroupPlan> {
    this.planPromise ??= detectCgroupPlan(this.options.cgroups);
    return this.planPromise;
  }

  /** The seccomp program, written once per driver instance (null when disabled/unsupported). */
  private seccompFile(): Promise<string | null> {
    this.seccompFilePromise ??= (async () => {
      const program = this.options.seccomp === false ? null : buildSeccompFilter();
      if (program === null) return null;
      await ensurePrivateDir(this.runtimeRoot);
      const file = join(this.runtimeRoot, `seccomp-${process.pid}-${randomBytes(4).toString("hex")}.bpf`);
      await writeFile(file, program, { mode: 0o600 });
      return file;
    })();
    this.seccompFilePromise.catch(() => {
      this.seccompFilePromise = null;
    });
    return this.seccompFilePromise;
  }

  async dispose(): Promise<void> {
    const files = [
      ...(await Promise.all(
        [
          ...[...this.etcSnapshots.values(), ...this.binSnapshots.values()].map((p) =>
            p.then((snapshot) => snapshot.dir),
          ),
        ].map((p) => p.catch(() => null)),
      )),
      await (this.seccompFilePromise ?? Promise.resolve(null)).catch(() => null),
    ];
    this.etcSnapshots.clear();
    this.imageLayouts.clear();
    this.binSnapshots.clear();
    this.seccompFilePromise = null;
    for (const path of files) if (path !== null) await rm(path, { recursive: true, force: true });
  }

  /** The read-only /etc for `uid:gid`, created on first use. */
  private etcSnapshot(layout: BwrapHostLayout, uid: number, gid: number): Promise<EtcSnapshot> {
    const system = layout.systemRoot ?? "";
    return snapshotOnce(this.etcSnapshots, `${system}|${uid}:${gid}`, async () => {
      await ensurePrivateDir(this.runtimeRoot);
      await sweepDeadWorkerDirs(this.runtimeRoot, "run");
      if (this.runFileRoot !== this.runtimeRoot) await sweepDeadWorkerDirs(this.runFileRoot, "run");
      await sweepDeadWorkerDirs(this.runtimeRoot, "seccomp");
      return createEtcSnapshot({
        root: this.runtimeRoot,
        entries: layout.etcEntries,
        source: `${system}/etc`,
        uid,
        gid,
        home: SANDBOX_HOME,
      });
    });
  }

  /**
   * The read-only /bin holding the commands (bin-snapshot.ts: hard links to their files where
   * possible, else placeholders the commands are bound over), or null when there are none or /bin
   * is not a merged-/usr symlink (then the commands cannot be placed and /bin stays as it is).
   * A changed /usr/bin (new mtime) or command file (new inode or mtime) gets a new snapshot; older
   * ones stay until `dispose()`, since running sandboxes still show them.
   */
  private async binSnapshot(
    layout: BwrapHostLayout,
    commands: readonly ResolvedCommand[],
  ): Promise<BinSnapshot | null> {
    const usrBin = mergedUsrBin(layout);
    if (commands.length === 0 || usrBin === null) return null;
    const listFrom = `${layout.systemRoot ?? ""}${usrBin}`;
    // Each file's inode and mtime as resolveCommands read them in this same prepare.
    const files = commands.map(({ name, source, version }) => `${name}=${source}@${version}`);
    const key = `${listFrom}:${statSync(listFrom).mtimeMs}:${files.sort().join("/")}`;
    return snapshotOnce(this.binSnapshots, key, async () => {
      await ensurePrivateDir(this.runtimeRoot);
      return createBinSnapshot({
        root: this.runtimeRoot,
        usrBin,
        listFrom,
        commandNames: commands.map((command) => command.name),
        linkFrom: Object.fromEntries(commands.map((command) => [command.name, command.source])),
      });
    });
  }

  /** bash when present (it can close every inherited fd), else POSIX sh. */
  private launcherShell(): Promise<string> {
    this.launcherShellPromise ??= canAccess("/bin/bash").then((bash) => (bash ? "/bin/bash" : "/bin/sh"));
    return this.launcherShellPromise;
  }

  private async nodePath(rootfs: string | undefined): Promise<string> {
    if (rootfs !== undefined) {
      // The bridge runs inside the sandbox, so on an image it runs on the image's node.
      if (await canAccess(join(rootfs, "usr/bin/node"))) return "/usr/bin/node";
      throw new SandboxSpecError(
        "network_allow_hosts on a run image needs node at /usr/bin/node in the image (the egress bridge runs on it): add nodejs to the image, or leave network_allow_hosts empty",
      );
    }
    if (this.options.nodePath !== undefined) return this.options.nodePath;
    return (await canAccess("/usr/bin/node")) ? "/usr/bin/node" : process.execPath;
  }

  async version(): Promise<string | null> {
    const bwrap = await this.bwrapPath();
    if (bwrap === null || process.platform !== "linux") return null;
    try {
      const { stdout } = await execa(bwrap, ["--version"], { timeout: 5_000, extendEnv: false, env: {} });
      return stdout.trim();
    } catch {
      return null;
    }
  }

  async capabilities(): Promise<SandboxCapabilities> {
    const described = describeCgroupPlan(await this.plan());
    const seccompOn = this.options.seccomp !== false && seccompSupported();
    return {
      ...described,
      cpuTime: {
        enforced: true,
        via: "rlimit",
        detail: "RLIMIT_CPU per process (limits.cpuSeconds), SIGKILL when exceeded",
      },
      seccomp: seccompOn
        ? {
            enforced: true,
            via: "seccomp",
            detail: "no setuid/setgid bits, no TIOCSTI/TIOCLINUX, no io_uring, no syslog",
          }
        : {
            enforced: false,
            via: "none",
            detail:
              this.options.seccomp === false
                ? "disabled by the driver option seccomp=false"
                : `no seccomp table for ${process.arch}; --new-session still blocks TIOCSTI`,
          },
    };
  }

  async prepare(argv: readonly string[], specInput: SandboxSpec): Promise<PreparedCommand> {
    if (argv.length === 0 || argv.some((arg) => typeof arg !== "string" || arg.includes("\0"))) {
      throw new SandboxSpecError("argv: expected a non-empty array of strings without NUL characters");
    }
    const spec = parseSandboxSpec(specInput);
    const bwrap = await this.bwrapPath();
    if (bwrap === null || process.platform !== "linux") {
      throw new SandboxUnavailableError(
        "bwrap driver: bubblewrap is not installed (apt-get install bubblewrap) or this is not Linux; install it or choose another driver",
      );
    }
    const layout = await this.layout(spec.rootfs);
    const visibleRoots = ["/usr", ...layout.etcEntries.map((e) => `/etc/${e}`)];
    const userMounts = await resolveUserMounts(spec, visibleRoots);
    // The control dir as resolveUserMounts resolved it for its own bind, a moment ago.
    const controlDir = resolvedSource(userMounts, spec.controlDir);
    const commands = await resolveCommands(spec);
    const uid = spec.uid ?? BWRAP_DEFAULT_UID;
    const gid = spec.gid ?? BWRAP_DEFAULT_GID;

    const etc = await this.etcSnapshot(layout, uid, gid);
    const bin = await this.binSnapshot(layout, commands);
    // Proxy mode needs a directory (the egress socket, the bridge); other runs only the options file.
    const runDir = spec.network.mode === "proxy" ? await createRunDir(this.runtimeRoot) : null;
    let runPath = runDir;
    let cgroup: RunCgroup | null = null;
    let proxy: EgressProxy | null = null;
    try {
      const env: Record<string, string> = { ...spec.env, HOME: SANDBOX_HOME };
      let innerArgv = [...argv];
      let runtimeMountDir: string | null = null;

      if (spec.network.mode === "proxy" && runDir !== null) {
        runtimeMountDir = join(runDir, "mount");
        await mkdir(runtimeMountDir, { mode: 0o755 });
        // Mount point of the control dir's fixed bind (SANDBOX_CONTROL_MOUNT) inside this read-only bind.
        await mkdir(join(runtimeMountDir, "control"), { mode: 0o755 });
        const bridge = join(runtimeMountDir, "egress-bridge.cjs");
        await writeFile(bridge, EGRESS_BRIDGE_SOURCE, { mode: 0o644 });
        proxy = new EgressProxy(
          resolveEgressProxyOptions({
            ...this.options.egress,
            socketPath: join(runtimeMountDir, "egress.sock"),
            allowHosts: spec.network.allowHosts,
            ...(spec.network.allowPorts ? { allowPorts: spec.network.allowPorts } : {}),
          }),
        );
        await proxy.start();
        const port = this.options.egressBridgePort ?? DEFAULT_EGRESS_BRIDGE_PORT;
        const nodePath = await this.nodePath(spec.rootfs);
        if (!nodePath.startsWith("/usr/")) {
          userMounts.push({
            kind: "bind",
            source: await realpath(dirname(nodePath)),
            dest: dirname(nodePath),
            writable: false,
          });
        }
        pointAtEgressBridge(env, port);
        const launcher = buildEgressLauncher({
          nodePath,
          bridgeScript: `${SANDBOX_RUNTIME_MOUNT}/egress-bridge.cjs`,
          socketPath: `${SANDBOX_RUNTIME_MOUNT}/egress.sock`,
          port,
        });
        innerArgv = ["/bin/sh", "-c", launcher, "overseer-egress", ...argv];
      }

      const plan = await this.plan();
      try {
        cgroup = await RunCgroup.create(plan, spec.runId, spec.limits);
      } catch (error) {
        throw new SandboxSetupError(
          `cannot create the run cgroup for ${spec.runId}: ${(error as Error).message}`,
        );
      }
      const seccompFile = await this.seccompFile();
      const bwrapArgs = buildBwrapArgs({
        spec,
        uid,
        gid,
        layout,
        userMounts,
        env,
        files: {
          etcDir: etc.dir,
          etcBinds: etc.binds,
          runtimeDir: runtimeMountDir,
          controlDir,
          binDir: bin?.dir ?? null,
          // A command linked into the bin dir is there already; the others are bound over their placeholders.
          commands: commands.filter((command) => !bin?.linked.has(command.name)),
          seccompFd: seccompFile === null ? null : 4,
        },
      });
      const bwrapOptions = `${bwrapArgs.join("\0")}\0`;
      const argsFile = runDir === null ? this.writeOptionsFile(bwrapOptions) : join(runDir, "bwrap-args");
      if (runDir !== null) await writeFile(argsFile, bwrapOptions, { mode: 0o600 });
      runPath = runDir ?? argsFile;
      const launch = hostLaunchCommand(await this.launcherShell(), innerArgv, {
        bwrapPath: bwrap,
        argsFile,
        procsFiles: cgroup?.procsFiles ?? [],
        cpuSeconds: spec.limits.cpuSeconds,
        addressSpaceKb: plan.memory === null ? Math.ceil(spec.limits.memoryBytes / 1024) : null,
        fileSizeBytes: spec.limits.fileSizeBytes ?? null,
        seccompFile,
      });
      return new BwrapPreparedCommand(
        spec.runId,
        launch.file,
        launch.args,
        spec.checkoutDir,
        runPath,
        cgroup,
        proxy,
        spec.limits,
        launch.preludeLaunch,
      );
    } catch (error) {
      await proxy?.close().catch(() => undefined);
      await cgroup?.destroy().catch(() => undefined);
      if (runPath !== null) await rm(runPath, { recursive: true, force: true });
      throw error;
    }
  }

  async probe(): Promise<ProbeReport> {
    const [version, capabilities] = await Promise.all([this.version(), this.capabilities()]);
    return runSandboxProbe(this, {
      version,
      capabilities,
      unsafe: false,
      spec: { limits: { pidsMax: 64, memoryBytes: 256 * 1024 ** 2 } },
      inspect: async (prepared, problems) => {
        const cgroup = prepared instanceof BwrapPreparedCommand ? prepared.cgroup : null;
        if (cgroup === null) return;
        const pidsPeak = await cgroup.readCounter("pids.peak");
        if (capabilities.pids.enforced && pidsPeak !== null) {
          if (pidsPeak > 0) capabilities.pids.detail += `; verified by the probe (pids.peak=${pidsPeak})`;
          else problems.push("the probe's processes were not accounted in the run's pids cgroup");
        }
        const memoryPeak =
          (await cgroup.readCounter("memory.peak")) ??
          (await cgroup.readCounter("memory.max_usage_in_bytes"));
        if (capabilities.memory.via.startsWith("cgroup") && memoryPeak !== null) {
          if (memoryPeak > 0)
            capabilities.memory.detail += `; verified by the probe (peak ${memoryPeak} bytes)`;
          else problems.push("the probe's memory was not accounted in the run's memory cgroup");
        }
      },
    });
  }
}

/** Exposed for tests: the run cgroup of a prepared bwrap command, if any. */
export function preparedRunCgroup(prepared: PreparedCommand): RunCgroup | null {
  return prepared instanceof BwrapPreparedCommand ? prepared.cgroup : null;
}
