import { lstat, mkdir, rm, stat, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import { PROCESS_DEFAULTS } from "@overseer/process";
import { execa } from "execa";
import { SANDBOX_HOME, SANDBOX_RUNTIME_MOUNT } from "./bwrap-argv-builder.ts";
import { DEFAULT_EGRESS_BRIDGE_PORT, EGRESS_BRIDGE_SOURCE } from "./egress-bridge-script.ts";
import { EgressProxy, type EgressProxyOptions } from "./egress-proxy.ts";
import { buildEgressLauncher, pointAtEgressBridge } from "./launcher-script.ts";
import { stopProcessTree, waitForProcessExit } from "./process-tree.ts";
import { createRunDir, defaultRuntimeRoot } from "./runtime-dir.ts";
import type {
  PreparedCommand,
  ProbeReport,
  SandboxCapabilities,
  SandboxDriver,
  StopOptions,
} from "./sandbox-driver.ts";
import { SandboxSetupError, SandboxSpecError } from "./sandbox-errors.ts";
import { runSandboxProbe } from "./sandbox-probe.ts";
import { parseSandboxSpec, type ResolvedSandboxSpec, type SandboxSpec } from "./sandbox-spec-schema.ts";

/**
 * Driver for hosts with a Docker engine (the compose deployment). Each run is one `docker run`
 * container: read-only root filesystem, the checkout and control dir bind-mounted read-write at
 * their host paths, `readOnlyBinds` read-only, private tmpfs /tmp and HOME, no network (or the
 * egress proxy's unix socket in proxy mode), every capability dropped, no-new-privileges, an
 * unprivileged user (default 65534:65534), pids/memory/cpu limits, and `--init` so orphans are
 * reaped. The environment reaches the container only through a 0600 `--env-file` (never the
 * command line, never the docker client's own environment).
 *
 * Killing the `docker run` client does NOT stop the container: `stop()` (or `killCommand(runId)`,
 * i.e. `docker rm -f <name>`) must be used. Names are deterministic: `overseer-run-<runId>`.
 *
 * Paths are host paths for the engine: a worker running in a container must see its data dir
 * (checkouts, runtimeRoot) at the same path as the host.
 */

export interface DockerDriverOptions {
  /** Image the agent runs in (must contain /bin/sh, and node + mkfifo for proxy mode). Default `overseer-agent-sandbox:latest`. */
  image?: string;
  /** docker client binary. Default `docker` (from PATH). */
  dockerPath?: string;
  /** Container name prefix; the name is `<prefix><runId>`. Default `overseer-run-`. */
  namePrefix?: string;
  /** Parent of per-run runtime directories (must be a host path the engine can bind). Default `$TMPDIR/overseer-sandbox-<uid>`. */
  runtimeRoot?: string;
  /** Node binary inside the image for the egress bridge. Default `node` (PATH inside the image). */
  nodePath?: string;
  /** Port of the egress bridge inside the container (proxy mode). Default 3128. */
  egressBridgePort?: number;
  /** Bound on `docker version` / `docker rm` / `docker stop` client calls. Default 15 000 ms. */
  clientTimeoutMs?: number;
  /** Egress proxy tuning for proxy-mode runs. */
  egress?: Omit<EgressProxyOptions, "socketPath" | "allowHosts" | "allowPorts">;
}

export const DOCKER_DEFAULT_IMAGE = "overseer-agent-sandbox:latest";
export const DOCKER_DEFAULT_UID = 65534;
export const DOCKER_DEFAULT_GID = 65534;
const DEFAULT_NAME_PREFIX = "overseer-run-";

/** Worker environment variables the docker CLI itself needs (never forwarded into the container). */
const CLIENT_ENV = [
  "PATH",
  "HOME",
  "DOCKER_HOST",
  "DOCKER_CONFIG",
  "DOCKER_CONTEXT",
  "DOCKER_CERT_PATH",
  "DOCKER_TLS_VERIFY",
];

export function dockerContainerName(runId: string, prefix = DEFAULT_NAME_PREFIX): string {
  return `${prefix}${runId}`;
}

export interface DockerRunInput {
  spec: ResolvedSandboxSpec;
  image: string;
  name: string;
  envFile: string;
  /** Host directory mounted read-only at /overseer (proxy mode), or null. */
  runtimeMountDir: string | null;
  /** Hidden paths that exist on the host, with their kind. */
  masks: ReadonlyArray<{ path: string; isDirectory: boolean }>;
  /** The command run in the container (argv, possibly wrapped by the egress launcher). */
  command: readonly string[];
}

function mountValue(path: string): string {
  // --mount is CSV: commas and quotes would split or corrupt the option.
  if (/[",\n]/.test(path)) {
    throw new SandboxSpecError(
      `docker driver: path ${JSON.stringify(path)} contains a comma, quote or newline, which docker --mount cannot express; rename it`,
    );
  }
  return path;
}

/** Builds the `docker run …` arguments (after the `docker` binary). Pure, for tests and review. */
export function buildDockerRunArgs(input: DockerRunInput): string[] {
  const { spec } = input;
  const uid = spec.uid ?? DOCKER_DEFAULT_UID;
  const gid = spec.gid ?? DOCKER_DEFAULT_GID;
  const size = spec.limits.tmpfsBytes;
  const args = [
    "run",
    "--rm",
    "--init",
    "--interactive",
    "--name",
    input.name,
    "--label",
    `overseer.run-id=${spec.runId}`,
    "--user",
    `${uid}:${gid}`,
    "--read-only",
    "--cap-drop",
    "ALL",
    "--security-opt",
    "no-new-privileges",
    "--network",
    "none",
    "--pids-limit",
    String(spec.limits.pidsMax),
    "--memory",
    String(spec.limits.memoryBytes),
    "--memory-swap",
    String(spec.limits.memoryBytes),
    "--ulimit",
    `cpu=${spec.limits.cpuSeconds}:${spec.limits.cpuSeconds}`,
    "--ulimit",
    "core=0:0",
    ...(spec.limits.fileSizeBytes === undefined
      ? []
      : ["--ulimit", `fsize=${spec.limits.fileSizeBytes}:${spec.limits.fileSizeBytes}`]),
    "--log-driver",
    "none",
    "--tmpfs",
    `/tmp:rw,nosuid,nodev,size=${size},mode=1777`,
    "--tmpfs",
    `${SANDBOX_HOME}:rw,nosuid,nodev,size=${size},mode=1777`,
  ];
  if (spec.limits.cpus !== undefined) args.push("--cpus", String(spec.limits.cpus));
  for (const path of spec.readOnlyBinds) {
    args.push("--mount", `type=bind,src=${mountValue(path)},dst=${mountValue(path)},readonly`);
  }
  args.push("--mount", `type=bind,src=${mountValue(spec.checkoutDir)},dst=${mountValue(spec.checkoutDir)}`);
  args.push("--mount", `type=bind,src=${mountValue(spec.controlDir)},dst=${mountValue(spec.controlDir)}`);
  for (const mask of input.masks) {
    args.push(
      "--mount",
      mask.isDirectory
        ? `type=tmpfs,dst=${mountValue(mask.path)},tmpfs-size=4096`
        : `type=bind,src=/dev/null,dst=${mountValue(mask.path)},readonly`,
    );
  }
  if (input.runtimeMountDir !== null) {
    args.push(
      "--mount",
      `type=bind,src=${mountValue(input.runtimeMountDir)},dst=${SANDBOX_RUNTIME_MOUNT},readonly`,
    );
  }
  args.push("--workdir", spec.checkoutDir, "--env-file", input.envFile, input.image, ...input.command);
  return args;
}

/** Serialises an environment for `--env-file` (one KEY=VALUE per line; values cannot hold newlines). */
export function formatEnvFile(env: Readonly<Record<string, string>>): string {
  return Object.entries(env)
    .map(([key, value]) => {
      if (/[\r\n]/.test(value)) {
        throw new SandboxSpecError(
          `env.${key}: the docker driver cannot pass values containing newlines (docker --env-file format); encode the value`,
        );
      }
      return `${key}=${value}\n`;
    })
    .join("");
}

/** True when `uid`/`gid` can write into the directory described by `info` (plain mode bits). */
export function isWritableBy(
  info: { uid: number; gid: number; mode: number },
  uid: number,
  gid: number,
): boolean {
  if (info.uid === uid) return (info.mode & 0o200) !== 0;
  if (info.gid === gid) return (info.mode & 0o020) !== 0;
  return (info.mode & 0o002) !== 0;
}

class DockerPreparedCommand implements PreparedCommand {
  readonly driver = "docker" as const;
  private cleaned = false;

  constructor(
    readonly runId: string,
    readonly file: string,
    readonly args: readonly string[],
    readonly env: Readonly<Record<string, string>>,
    readonly cwd: string,
    private readonly name: string,
    private readonly dockerPath: string,
    private readonly clientTimeoutMs: number,
    private readonly runDir: string,
    private readonly proxy: EgressProxy | null,
  ) {}

  private async client(args: string[]): Promise<void> {
    await execa(this.dockerPath, args, {
      env: this.env,
      extendEnv: false,
      timeout: this.clientTimeoutMs,
      reject: false,
    });
  }

  async stop(pid: number | undefined, options: StopOptions = {}): Promise<void> {
    const graceMs = options.graceMs ?? PROCESS_DEFAULTS.killGraceMs;
    // `docker stop` delivers SIGTERM to the container's init and SIGKILLs after the grace period.
    await this.client(["stop", "--time", String(Math.ceil(graceMs / 1000)), this.name]);
    await this.client(["rm", "--force", this.name]);
    if (pid !== undefined && !(await waitForProcessExit(pid, 1_000))) {
      await stopProcessTree(pid, { graceMs: 0, spareRoot: false });
    }
  }

  async cleanup(): Promise<void> {
    if (this.cleaned) return;
    this.cleaned = true;
    await this.client(["rm", "--force", this.name]);
    await this.proxy?.close();
    await rm(this.runDir, { recursive: true, force: true });
  }
}

export class DockerDriver implements SandboxDriver {
  readonly name = "docker" as const;
  private readonly dockerPath: string;
  private readonly image: string;
  private readonly namePrefix: string;
  private readonly clientTimeoutMs: number;

  constructor(private readonly options: DockerDriverOptions = {}) {
    this.dockerPath = options.dockerPath ?? "docker";
    this.image = options.image ?? DOCKER_DEFAULT_IMAGE;
    this.namePrefix = options.namePrefix ?? DEFAULT_NAME_PREFIX;
    this.clientTimeoutMs = options.clientTimeoutMs ?? 15_000;
  }

  /** The command that force-removes a run's container (use on timeout if `stop()` is not at hand). */
  killCommand(runId: string): { file: string; args: string[] } {
    return { file: this.dockerPath, args: ["rm", "--force", dockerContainerName(runId, this.namePrefix)] };
  }

  private clientEnv(): Record<string, string> {
    const env: Record<string, string> = {};
    for (const key of CLIENT_ENV) {
      const value = process.env[key];
      if (value !== undefined) env[key] = value;
    }
    env.DOCKER_CONFIG ??= join(homedir(), ".docker");
    return env;
  }

  async version(): Promise<string | null> {
    try {
      const { stdout, exitCode } = await execa(
        this.dockerPath,
        ["version", "--format", "{{.Server.Version}}"],
        {
          env: this.clientEnv(),
          extendEnv: false,
          timeout: this.clientTimeoutMs,
          reject: false,
        },
      );
      const version = typeof stdout === "string" ? stdout.trim() : "";
      return exitCode === 0 && version !== "" ? version : null;
    } catch {
      return null;
    }
  }

  async capabilities(): Promise<SandboxCapabilities> {
    const engine = (await this.version()) !== null;
    const why = engine ? "" : " (no Docker engine reachable)";
    return {
      pids: { enforced: engine, via: "docker", detail: `--pids-limit${why}` },
      memory: {
        enforced: engine,
        via: "docker",
        detail: `--memory with --memory-swap equal (no swap)${why}`,
      },
      cpuTime: { enforced: engine, via: "docker", detail: `--ulimit cpu (RLIMIT_CPU per process)${why}` },
      cpuRate: { enforced: engine, via: "docker", detail: `--cpus when limits.cpus is set${why}` },
      killAll: { enforced: engine, via: "docker", detail: `docker stop / docker rm --force <name>${why}` },
      seccomp: { enforced: engine, via: "docker", detail: `the engine's default seccomp profile${why}` },
    };
  }

  async prepare(argv: readonly string[], specInput: SandboxSpec): Promise<PreparedCommand> {
    if (argv.length === 0) throw new SandboxSpecError("argv: expected a non-empty array of strings");
    const spec = parseSandboxSpec(specInput);
    const uid = spec.uid ?? DOCKER_DEFAULT_UID;
    const gid = spec.gid ?? DOCKER_DEFAULT_GID;
    for (const field of ["checkoutDir", "controlDir"] as const) {
      const info = await stat(spec[field]).catch(() => null);
      if (info === null || !info.isDirectory())
        throw new SandboxSpecError(`${field}: ${spec[field]} is not an existing directory`);
      if (!isWritableBy(info, uid, gid)) {
        throw new SandboxSpecError(
          `${field}: ${spec[field]} is not writable by the container user ${uid}:${gid}; chown it to that user, or set spec.uid/gid to its owner (${info.uid}:${info.gid})`,
        );
      }
    }
    for (const [index, path] of spec.readOnlyBinds.entries()) {
      if ((await stat(path).catch(() => null)) === null) {
        throw new SandboxSpecError(
          `readOnlyBinds[${index}]: ${path} does not exist; bind only existing paths`,
        );
      }
    }
    const masks: Array<{ path: string; isDirectory: boolean }> = [];
    for (const path of spec.hiddenPaths) {
      const visible = [...spec.readOnlyBinds, spec.checkoutDir, spec.controlDir].some((root) =>
        path.startsWith(`${root}/`),
      );
      const info = visible ? await lstat(path).catch(() => null) : null;
      if (info !== null) masks.push({ path, isDirectory: info.isDirectory() });
    }

    const runDir = await createRunDir(this.options.runtimeRoot ?? defaultRuntimeRoot());
    let proxy: EgressProxy | null = null;
    try {
      const env: Record<string, string> = { ...spec.env, HOME: SANDBOX_HOME };
      let command = [...argv];
      let runtimeMountDir: string | null = null;
      if (spec.network.mode === "proxy") {
        runtimeMountDir = join(runDir, "mount");
        await mkdir(runtimeMountDir, { mode: 0o755 });
        await writeFile(join(runtimeMountDir, "egress-bridge.cjs"), EGRESS_BRIDGE_SOURCE, { mode: 0o644 });
        proxy = new EgressProxy({
          ...this.options.egress,
          socketPath: join(runtimeMountDir, "egress.sock"),
          allowHosts: spec.network.allowHosts,
          ...(spec.network.allowPorts ? { allowPorts: spec.network.allowPorts } : {}),
        });
        await proxy.start();
        const port = this.options.egressBridgePort ?? DEFAULT_EGRESS_BRIDGE_PORT;
        pointAtEgressBridge(env, port);
        const launcher = buildEgressLauncher({
          nodePath: this.options.nodePath ?? "node",
          bridgeScript: `${SANDBOX_RUNTIME_MOUNT}/egress-bridge.cjs`,
          socketPath: `${SANDBOX_RUNTIME_MOUNT}/egress.sock`,
          port,
        });
        command = ["/bin/sh", "-c", launcher, "overseer-egress", ...argv];
      }
      const envFile = join(runDir, "env");
      await writeFile(envFile, formatEnvFile(env), { mode: 0o600 });
      const name = dockerContainerName(spec.runId, this.namePrefix);
      const args = buildDockerRunArgs({
        spec,
        image: this.image,
        name,
        envFile,
        runtimeMountDir,
        masks,
        command,
      });
      return new DockerPreparedCommand(
        spec.runId,
        this.dockerPath,
        args,
        this.clientEnv(),
        spec.checkoutDir,
        name,
        this.dockerPath,
        this.clientTimeoutMs,
        runDir,
        proxy,
      );
    } catch (error) {
      await proxy?.close().catch(() => undefined);
      await rm(runDir, { recursive: true, force: true });
      if (error instanceof SandboxSpecError) throw error;
      throw new SandboxSetupError(
        `docker driver: cannot prepare run ${spec.runId}: ${(error as Error).message}`,
      );
    }
  }

  async dispose(): Promise<void> {
    // Per-run files are removed by each command's cleanup(); nothing is kept per driver.
  }

  async probe(): Promise<ProbeReport> {
    const [version, capabilities] = await Promise.all([this.version(), this.capabilities()]);
    // The container user is not the owner of the probe's temp dirs: open them up for it.
    return runSandboxProbe(this, { version, capabilities, unsafe: false, writableDirMode: 0o777 });
  }
}
