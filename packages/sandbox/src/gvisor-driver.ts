import { randomBytes } from "node:crypto";
import { mkdir, realpath, rm, stat, symlink, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { PROCESS_DEFAULTS } from "@overseer/process";
import { execa } from "execa";
import { createBinSnapshot } from "./bin-snapshot.ts";
import { type BwrapHostLayout, SANDBOX_HOME, SANDBOX_RUNTIME_MOUNT } from "./bwrap-argv-builder.ts";
import {
  detectBwrapHostLayout,
  detectImageLayout,
  mergedUsrBin,
  requireDirectory,
  resolveCommands,
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
import {
  buildGvisorConfig,
  buildGvisorLauncher,
  buildRunscArgs,
  type OciConfig,
  skeletonEntries,
} from "./gvisor-bundle.ts";
import {
  detectRunscPlatform,
  findRunsc,
  RUNSC_INSTALL_FIX,
  runscFailureFix,
  runscRootless,
  runscVersion,
} from "./gvisor-runsc.ts";
import { buildEgressLauncher, pointAtEgressBridge } from "./launcher-script.ts";
import { canAccess } from "./path-access.ts";
import { stopProcessTree } from "./process-tree.ts";
import { createRunDir, defaultRuntimeRoot, ensurePrivateDir } from "./runtime-dir.ts";
import type {
  PreparedCommand,
  ProbeReport,
  SandboxCapabilities,
  SandboxDriver,
  StopOptions,
} from "./sandbox-driver.ts";
import { SandboxSetupError, SandboxSpecError, SandboxUnavailableError } from "./sandbox-errors.ts";
import { runSandboxProbe } from "./sandbox-probe.ts";
import {
  parseSandboxSpec,
  type ResolvedSandboxSpec,
  type SandboxLimits,
  type SandboxSpec,
} from "./sandbox-spec-schema.ts";

/**
 * `sandbox.driver: gvisor`: the run under gVisor's `runsc`, a user-space kernel between the agent
 * and the host, from an OCI bundle the driver writes per run (gvisor-bundle.ts for the policy).
 * The same layout, egress proxy, limits and scope checks as bwrap; the cost is start time and
 * syscall speed (README, "Sandbox drivers").
 *
 * Each run gets its own container id and its own runsc state dir (`--root`) in the run dir, so
 * `stop()` and `cleanup()` (`runsc delete --force`, the process tree, the run cgroup) can never
 * touch another run's container and nothing is left behind.
 */

export interface GvisorDriverOptions {
  /** runsc binary. Default `/usr/bin/runsc`, else the first `runsc` on PATH. */
  runscPath?: string;
  /** `ptrace`, `systrap` or `kvm`. Default: systrap where this runsc has it, else ptrace. */
  platform?: string;
  /** Parent of per-run directories (bundle, runsc state). Default `$TMPDIR/overseer-sandbox-<uid>`. */
  runtimeRoot?: string;
  /** Per-run cgroups (memory, cpu rate, kill) joined by runsc. Default `{ mode: "auto", parentName: "overseer" }`. */
  cgroups?: CgroupPlanOptions;
  /** Node binary that runs the in-sandbox egress bridge (proxy mode, no image). Default `/usr/bin/node`, else the worker's node. */
  nodePath?: string;
  egressBridgePort?: number;
  egress?: Omit<EgressProxyOptions, "socketPath" | "allowHosts" | "allowPorts">;
}

/** Host tasks the sentry and gofer need beyond the run's own processes (the host pids cgroup is a backstop). */
const SENTRY_TASKS = 512;

class GvisorPreparedCommand implements PreparedCommand {
  readonly driver = "gvisor" as const;
  readonly env: Readonly<Record<string, string>> = {};
  private cleaned = false;

  constructor(
    readonly runId: string,
    readonly file: string,
    readonly args: readonly string[],
    readonly cwd: string,
    private readonly runsc: { path: string; stateDir: string; containerId: string },
    private readonly runDir: string,
    readonly cgroup: RunCgroup | null,
    private readonly proxy: EgressProxy | null,
    /** The limits the host cgroup was given (memory as the run's; pids as the sentry's backstop). */
    private readonly hostLimits: SandboxLimits,
  ) {}

  /** What the host cgroup counted (memory, the pids backstop); gVisor's own rlimit refusals are not counted. */
  async limitsReached(): Promise<string[]> {
    return (await this.cgroup?.limitsReached(this.hostLimits)) ?? [];
  }

  private async deleteContainer(): Promise<void> {
    const { path, stateDir, containerId } = this.runsc;
    await execa(path, ["--root", stateDir, "delete", "--force", containerId], {
      timeout: 10_000,
      reject: false,
      extendEnv: false,
      env: {},
    });
  }

  async stop(pid: number | undefined, options: StopOptions = {}): Promise<void> {
    // SIGTERM to `runsc run` is forwarded to the container's init; then the whole host tree dies.
    if (pid !== undefined)
      await stopProcessTree(pid, {
        graceMs: options.graceMs ?? PROCESS_DEFAULTS.killGraceMs,
        spareRoot: false,
      });
    await this.cgroup?.killAll();
    await this.deleteContainer();
  }

  async cleanup(): Promise<void> {
    if (this.cleaned) return;
    this.cleaned = true;
    const errors: string[] = [];
    await this.deleteContainer().catch((error: Error) => errors.push(`runsc delete: ${error.message}`));
    await this.proxy?.close().catch((error: Error) => errors.push(`egress proxy: ${error.message}`));
    await this.cgroup?.destroy().catch((error: Error) => errors.push(`cgroup: ${error.message}`));
    await rm(this.runDir, { recursive: true, force: true }).catch((error: Error) =>
      errors.push(`runtime dir: ${error.message}`),
    );
    if (errors.length > 0)
      throw new SandboxSetupError(`sandbox cleanup of run ${this.runId} incomplete: ${errors.join("; ")}`);
  }
}

/** Where the run's files sit: bundle (config.json + skeleton root), runsc state, egress mount. */
interface RunLayout {
  bundleDir: string;
  rootDir: string;
  stateDir: string;
  runtimeMountDir: string | null;
}

export class GvisorDriver implements SandboxDriver {
  readonly name = "gvisor" as const;
  private readonly runtimeRoot: string;
  private runscPromise: Promise<string | null> | null = null;
  private platformPromise: Promise<string> | null = null;
  private planPromise: Promise<CgroupPlan> | null = null;
  private readonly layouts = new Map<string, Promise<BwrapHostLayout>>();
  private readonly snapshots = new Map<string, Promise<string>>();
  private readonly etcSnapshots = new Map<string, Promise<EtcSnapshot>>();

  constructor(private readonly options: GvisorDriverOptions = {}) {
    this.runtimeRoot = options.runtimeRoot ?? defaultRuntimeRoot();
  }

  private runscPath(): Promise<string | null> {
    this.runscPromise ??=
      process.platform === "linux" ? findRunsc(this.options.runscPath) : Promise.resolve(null);
    return this.runscPromise;
  }

  /** The platform runs use here (option, else detected). */
  async platform(): Promise<string | null> {
    const runsc = await this.runscPath();
    if (runsc === null) return null;
    this.platformPromise ??=
      this.options.platform !== undefined
        ? Promise.resolve(this.options.platform)
        : detectRunscPlatform(runsc);
    return this.platformPromise;
  }

  private plan(): Promise<CgroupPlan> {
    this.planPromise ??= detectCgroupPlan(this.options.cgroups);
    return this.planPromise;
  }

  private cached<T>(map: Map<string, Promise<T>>, key: string, create: () => Promise<T>): Promise<T> {
    let value = map.get(key);
    if (value === undefined) {
      value = create();
      value.catch(() => map.delete(key));
      map.set(key, value);
    }
    return value;
  }

  private async layout(rootfs?: string): Promise<BwrapHostLayout> {
    if (rootfs === undefined) return this.cached(this.layouts, "", () => detectBwrapHostLayout());
    const root = await requireDirectory("rootfs", rootfs);
    await requireDirectory("rootfs", join(root, "usr"));
    return this.cached(this.layouts, root, () => detectImageLayout(root));
  }

  /** The read-only /etc (synthetic root account) and /bin (commands' placeholders) of a layout. */
  private async snapshots_(layout: BwrapHostLayout, commandNames: readonly string[]) {
    await ensurePrivateDir(this.runtimeRoot);
    const system = layout.systemRoot ?? "";
    const etc = await this.cached(this.etcSnapshots, system, async () => {
      await sweepDeadWorkerDirs(this.runtimeRoot, "run");
      return createEtcSnapshot({
        root: this.runtimeRoot,
        entries: layout.etcEntries,
        source: `${system}/etc`,
        uid: 0,
        gid: 0,
        home: SANDBOX_HOME,
      });
    });
    const usrBin = mergedUsrBin(layout);
    if (commandNames.length === 0 || usrBin === null) return { etc, binDir: null };
    const listFrom = `${system}${usrBin}`;
    const key = `bin|${listFrom}:${(await stat(listFrom)).mtimeMs}:${[...commandNames].sort().join("/")}`;
    const binDir = await this.cached(
      this.snapshots,
      key,
      async () => (await createBinSnapshot({ root: this.runtimeRoot, usrBin, listFrom, commandNames })).dir,
    );
    return { etc, binDir };
  }

  async dispose(): Promise<void> {
    const dirs = await Promise.all(
      [
        ...this.snapshots.values(),
        ...[...this.etcSnapshots.values()].map((p) => p.then((etc) => etc.dir)),
      ].map((p) => p.catch(() => null)),
    );
    this.snapshots.clear();
    this.etcSnapshots.clear();
    this.layouts.clear();
    for (const dir of dirs) if (dir !== null) await rm(dir, { recursive: true, force: true });
  }

  async version(): Promise<string | null> {
    const runsc = await this.runscPath();
    return runsc === null ? null : runscVersion(runsc);
  }

  async capabilities(): Promise<SandboxCapabilities> {
    const described = describeCgroupPlan(await this.plan());
    const gvisorKernel = (detail: string) => ({ enforced: true, via: "rlimit" as const, detail });
    return {
      pids: gvisorKernel(
        `RLIMIT_NPROC in gVisor's kernel (it holds for the sandbox's uid 0 too)${described.pids.enforced ? `; host backstop: ${described.pids.detail}` : ""}`,
      ),
      memory: described.memory.enforced
        ? { ...described.memory, detail: `${described.memory.detail} (the sentry and every process in it)` }
        : gvisorKernel("RLIMIT_AS per process inside gVisor (no memory cgroup here)"),
      cpuTime: gvisorKernel("RLIMIT_CPU per process inside gVisor"),
      cpuRate: described.cpuRate,
      killAll: {
        enforced: true,
        via: described.killAll.enforced ? described.killAll.via : "pid-namespace",
        detail: `runsc delete --force of the run's own container, the host process tree${described.killAll.enforced ? `, and ${described.killAll.detail}` : ""}`,
      },
      seccomp: {
        enforced: true,
        via: "seccomp",
        detail:
          "every syscall is served by gVisor's kernel; the sentry itself runs under runsc's seccomp filter",
      },
    };
  }

  private async nodePath(rootfs: string | undefined): Promise<string> {
    if (rootfs !== undefined) {
      if (await canAccess(join(rootfs, "usr/bin/node"))) return "/usr/bin/node";
      throw new SandboxSpecError(
        "network_allow_hosts on a run image needs node at /usr/bin/node in the image (the egress bridge runs on it): add nodejs to the image, or leave network_allow_hosts empty",
      );
    }
    if (this.options.nodePath !== undefined) return this.options.nodePath;
    return (await canAccess("/usr/bin/node")) ? "/usr/bin/node" : process.execPath;
  }

  /** Proxy mode: the egress proxy on a socket in the run's /overseer mount, and the bridge's launcher. */
  private async startEgress(
    spec: ResolvedSandboxSpec,
    runtimeMountDir: string,
    env: Record<string, string>,
    userMounts: Awaited<ReturnType<typeof resolveUserMounts>>,
  ): Promise<{ proxy: EgressProxy; launcher: string }> {
    if (spec.network.mode !== "proxy") throw new SandboxSpecError("egress: the spec is not in proxy mode");
    await writeFile(join(runtimeMountDir, "egress-bridge.cjs"), EGRESS_BRIDGE_SOURCE, { mode: 0o644 });
    const proxy = new EgressProxy(
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
      const source = await realpath(dirname(nodePath));
      userMounts.push({ kind: "bind", source, dest: dirname(nodePath), writable: false });
    }
    pointAtEgressBridge(env, port);
    const launcher = buildEgressLauncher({
      nodePath,
      bridgeScript: `${SANDBOX_RUNTIME_MOUNT}/egress-bridge.cjs`,
      socketPath: `${SANDBOX_RUNTIME_MOUNT}/egress.sock`,
      port,
    });
    return { proxy, launcher };
  }

  private async createRunLayout(runDir: string, proxyMode: boolean): Promise<RunLayout> {
    const bundleDir = join(runDir, "bundle");
    const layout: RunLayout = {
      bundleDir,
      rootDir: join(bundleDir, "root"),
      stateDir: join(runDir, "state"),
      runtimeMountDir: proxyMode ? join(runDir, "mount") : null,
    };
    await mkdir(layout.rootDir, { recursive: true, mode: 0o755 });
    await mkdir(layout.stateDir, { mode: 0o700 });
    if (layout.runtimeMountDir !== null) {
      await mkdir(layout.runtimeMountDir, { mode: 0o755 });
      await mkdir(join(layout.runtimeMountDir, "control"), { mode: 0o755 });
    }
    return layout;
  }

  private async writeBundle(layout: RunLayout, config: OciConfig, system: BwrapHostLayout): Promise<void> {
    const files = new Set<string>();
    for (const mount of config.mounts) {
      if (mount.type === "bind" && (await stat(mount.source)).isFile()) files.add(mount.destination);
    }
    for (const entry of skeletonEntries(config, system, files)) {
      const path = join(layout.rootDir, entry.path);
      if (entry.kind === "dir") await mkdir(path, { recursive: true, mode: 0o755 });
      else if (entry.kind === "file") await writeFile(path, "", { mode: 0o644 });
      else await symlink(entry.target, path);
    }
    await writeFile(join(layout.bundleDir, "config.json"), JSON.stringify(config), { mode: 0o600 });
  }

  async prepare(argv: readonly string[], specInput: SandboxSpec): Promise<PreparedCommand> {
    if (argv.length === 0 || argv.some((arg) => typeof arg !== "string" || arg.includes("\0"))) {
      throw new SandboxSpecError("argv: expected a non-empty array of strings without NUL characters");
    }
    const spec = parseSandboxSpec(specInput);
    const runsc = await this.runscPath();
    const platform = await this.platform();
    if (runsc === null || platform === null) {
      throw new SandboxUnavailableError(
        `gvisor driver: runsc is not installed or this is not Linux; ${RUNSC_INSTALL_FIX}`,
      );
    }
    const system = await this.layout(spec.rootfs);
    const visibleRoots = ["/usr", ...system.etcEntries.map((e) => `/etc/${e}`)];
    const userMounts = await resolveUserMounts(spec, visibleRoots);
    const commands = await resolveCommands(spec);
    const { etc, binDir } = await this.snapshots_(
      system,
      commands.map((c) => c.name),
    );
    const runDir = await createRunDir(this.runtimeRoot);
    let cgroup: RunCgroup | null = null;
    let proxy: EgressProxy | null = null;
    try {
      const layout = await this.createRunLayout(runDir, spec.network.mode === "proxy");
      const env: Record<string, string> = { ...spec.env, HOME: SANDBOX_HOME, PWD: spec.checkoutDir };
      let innerArgv = [...argv];
      if (layout.runtimeMountDir !== null) {
        const egress = await this.startEgress(spec, layout.runtimeMountDir, env, userMounts);
        proxy = egress.proxy;
        innerArgv = ["/bin/sh", "-c", egress.launcher, "overseer-egress", ...argv];
      }
      const plan = await this.plan();
      const hostLimits = { ...spec.limits, pidsMax: spec.limits.pidsMax * 2 + SENTRY_TASKS };
      try {
        cgroup = await RunCgroup.create(plan, spec.runId, hostLimits);
      } catch (error) {
        throw new SandboxSetupError(
          `cannot create the run cgroup for ${spec.runId}: ${(error as Error).message}`,
        );
      }
      const config = buildGvisorConfig({
        spec,
        argv: innerArgv,
        layout: system,
        userMounts,
        env,
        memoryCgroup: plan.memory !== null,
        files: {
          rootDir: layout.rootDir,
          etcDir: etc.dir,
          etcBinds: etc.binds,
          runtimeDir: layout.runtimeMountDir,
          controlDir: await realpath(spec.controlDir),
          binDir,
          commands,
        },
      });
      await this.writeBundle(layout, config, system);
      const containerId = `overseer-${spec.runId}-${randomBytes(4).toString("hex")}`;
      const runscArgs = buildRunscArgs({
        stateDir: layout.stateDir,
        bundleDir: layout.bundleDir,
        containerId,
        platform,
        rootless: runscRootless(),
        egressSocket: proxy !== null,
      });
      const launcher = buildGvisorLauncher({ runscPath: runsc, procsFiles: cgroup?.procsFiles ?? [] });
      return new GvisorPreparedCommand(
        spec.runId,
        "/usr/bin/env",
        ["-i", "/bin/sh", "-c", launcher, "overseer-gvisor", ...runscArgs],
        spec.checkoutDir,
        { path: runsc, stateDir: layout.stateDir, containerId },
        runDir,
        cgroup,
        proxy,
        hostLimits,
      );
    } catch (error) {
      await proxy?.close().catch(() => undefined);
      await cgroup?.destroy().catch(() => undefined);
      await rm(runDir, { recursive: true, force: true });
      throw error;
    }
  }

  async probe(): Promise<ProbeReport> {
    const [version, capabilities, platform] = await Promise.all([
      this.version(),
      this.capabilities(),
      this.platform(),
    ]);
    const report = await runSandboxProbe(this, {
      version:
        version === null ? null : `${version} (platform ${platform}${runscRootless() ? ", rootless" : ""})`,
      capabilities,
      unsafe: false,
      // gVisor's /proc does not report NoNewPrivs; no_new_privs is set in the bundle all the same.
      noNewPrivsReported: false,
      spec: { limits: { pidsMax: 64, memoryBytes: 256 * 1024 ** 2 } },
    });
    if (version === null) report.problems.push(`runsc not found: ${RUNSC_INSTALL_FIX}`);
    else {
      const failed = report.problems.find((p) => p.startsWith("probe"));
      if (failed !== undefined) report.problems.push(`fix: ${runscFailureFix(failed, runscRootless())}`);
    }
    return report;
  }
}
