import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import {
  agentBinDir,
  agentCommands,
  buildHarnessEnv,
  classifyFailure,
  expandArgv,
  fixFor,
  harvestUsage,
  lastLines,
  readSessionFiles,
} from "@overseer/harness";
import { createRedactor } from "@overseer/input-errors";
import {
  AGENT_PRESETS,
  type AgentKind,
  commandForRole,
  configKeyEnv,
  type RunnerConfig,
} from "@overseer/project-config";
import { type Cidr, parseCidr, type SandboxDriverName } from "@overseer/run-contract";
import {
  createSandboxDriver,
  runPreparedCommand,
  runSandboxSpec,
  type SandboxDriver,
} from "@overseer/sandbox";
import type { ServiceSettings } from "@overseer/settings";
import {
  authVariablesFix,
  cliInSandboxFix,
  deepProbeFix,
  probeArgvFix,
  sandboxDriverFix,
} from "./doctor-fixes.ts";

/**
 * `overseer doctor --deep`: each role's real agent CLI, run THROUGH THE SAME SANDBOX A RUN USES
 * (the worker's sandbox driver with its egress opt-in, the spec built by `runSandboxSpec` from the
 * project's policy, the harness environment with the project's secrets), in a scratch checkout:
 * 1. its version (`CLI --version`): the CLI starts inside the sandbox;
 * 2. its auth variables: the names (never the values) of the key variables that arrive set
 *    inside the sandbox;
 * 3. a non-mutating call: the project's `probe_argv` (presets: the run command with a one-line
 *    prompt asking for no action, in an empty scratch checkout), which reaches the model API
 *    through the egress proxy with the real key.
 * Every failure names its fix.
 */

/** What each probe answers to doctor (the same shape as its other checks). */
export interface DeepCheck {
  name: string;
  status: "ok" | "warn" | "fail";
  detail: string;
  required: boolean;
  fix?: string;
}

/** The prompt of the non-mutating call. */
export const PROBE_PROMPT =
  "This is a connectivity check by `overseer doctor`. Reply with the single word OK. Do not run any command, do not read or change any file.";

/** Shells whose `-c SCRIPT NAME ARGS…` form the presets use to pass the prompt as an argument. */
const SHELLS = new Set(["sh", "bash", "dash", "/bin/sh", "/bin/bash", "/usr/bin/sh", "/usr/bin/bash"]);

/** The program a run command starts: argv[0], or `$0` of a `sh -c SCRIPT $0 …` wrapper. */
export function cliOf(argv: readonly string[]): string {
  const [first, flag, , zero] = argv;
  if (first !== undefined && SHELLS.has(first) && flag === "-c" && zero !== undefined) return zero;
  return first ?? "";
}

/** Names of the variables that must be set for the CLI to authenticate (never their values). */
export function authVariableNames(config: RunnerConfig): string[] {
  const names = new Set(Object.keys(config.secrets));
  const kind = config.agent as AgentKind | null;
  if (kind && AGENT_PRESETS[kind]) names.add(configKeyEnv(kind, config.env));
  return [...names].sort();
}

export interface DeepProbeOptions {
  projectId: string;
  config: RunnerConfig;
  roles: readonly string[];
  settings: Pick<ServiceSettings, "sandbox" | "sandboxUnsafeNone" | "egressAllowPrivate" | "dataDir">;
  /** The environment `env_allow` reads from (the worker's, when doctor runs on a worker host). */
  env: Readonly<Record<string, string | undefined>>;
  timeoutMs: number;
  /** A driver to use instead of the worker's (tests); the caller disposes it. */
  driver?: SandboxDriver;
}

interface RoleCommand {
  argv: string[];
  role: string;
  action: "execute" | "review";
}

/** Each distinct command of a project's roles, with the first role/action that uses it. */
function distinctCommands(config: RunnerConfig, roles: readonly string[]): RoleCommand[] {
  const commands = new Map<string, RoleCommand>();
  for (const role of roles) {
    for (const action of ["execute", "review"] as const) {
      const argv = commandForRole(config, role, action);
      const key = JSON.stringify(argv);
      if (argv.length > 0 && !commands.has(key)) commands.set(key, { argv: [...argv], role, action });
    }
  }
  return [...commands.values()];
}

/**
 * Runs `probe` for every distinct command in the worker's sandbox driver (or the given one);
 * `noDriver` is the check reported when no driver can be created.
 */
async function withEachCommand(
  options: DeepProbeOptions,
  noDriver: (message: string) => DeepCheck,
  probe: (driver: SandboxDriver, command: RoleCommand) => Promise<DeepCheck[]>,
): Promise<DeepCheck[]> {
  const commands = distinctCommands(options.config, options.roles);
  if (commands.length === 0) return [];
  let driver = options.driver;
  const owned = driver === undefined;
  try {
    driver ??= createSandboxDriver(options.settings.sandbox as SandboxDriverName, {
      allowUnsafeNone: options.settings.sandboxUnsafeNone,
      bwrap: {
        egress: { allowPrivateCidrs: options.settings.egressAllowPrivate.map((c) => parseCidr(c) as Cidr) },
      },
    });
  } catch (error) {
    return [noDriver((error as Error).message)];
  }
  try {
    const checks: DeepCheck[] = [];
    for (const command of commands) checks.push(...(await probe(driver, command)));
    return checks;
  } finally {
    if (owned) await driver.dispose();
  }
}

/** Runs the deep probes of every distinct command of a project's roles. */
export function deepProbeProject(options: DeepProbeOptions): Promise<DeepCheck[]> {
  return withEachCommand(
    options,
    (message) => ({
      name: `${options.projectId}: deep probe`,
      status: "fail",
      detail: `no sandbox to probe in: ${message}`,
      required: true,
      fix: sandboxDriverFix(options.settings.sandbox as SandboxDriverName),
    }),
    (driver, command) => probeCommand(driver, options, command),
  );
}

/**
 * Plain `overseer doctor`: each role's CLI (argv[0], or `$0` of a preset's `sh -c` wrapper) is
 * looked up INSIDE the sandbox a run uses, so a harness the worker's host has but the sandbox
 * cannot see (a script outside the bound paths) is named before a run fails on it.
 */
export function sandboxVisibilityChecks(options: DeepProbeOptions): Promise<DeepCheck[]> {
  return withEachCommand(
    options,
    (message) => ({
      name: `${options.projectId}: harness in the sandbox`,
      status: "warn",
      detail: `not checked: no sandbox driver (${message})`,
      required: false,
    }),
    async (driver, command) => {
      const label = `${options.projectId}: ${command.role}/${command.action} in the sandbox`;
      const cli = cliOf(command.argv);
      const found = await inScratchSandbox(driver, options, command, (inSandbox) =>
        inSandbox(["/bin/sh", "-c", 'p=$(command -v "$1") && [ -x "$p" ] && echo "$p"', "sh", cli]),
      ).catch((error: Error) => ({
        exitCode: null,
        output: `the sandbox refused the check: ${error.message}`,
      }));
      return [
        found.exitCode === 0
          ? {
              name: label,
              status: "ok",
              detail: `${cli} is visible as ${lastLines(found.output, 1)} inside the ${driver.name} sandbox`,
              required: true,
            }
          : {
              name: label,
              status: "fail",
              detail: `${cli} is not visible inside the ${driver.name} sandbox${found.output.trim() ? ` (${lastLines(found.output, 1)})` : ""}: every run would fail with "bwrap: execvp ${cli}: No such file or directory"`,
              required: true,
              fix: cliInSandboxFix(cli, options.projectId),
            },
      ];
    },
  );
}

type InSandbox = (
  argv: readonly string[],
  stdin?: string,
) => Promise<Awaited<ReturnType<typeof runPreparedCommand>> & { output: string }>;

/**
 * A scratch checkout, control dir and prompt file, and a runner of commands in them inside the
 * project's sandbox with the harness environment a run gets; removed after `use`.
 */
async function inScratchSandbox<T>(
  driver: SandboxDriver,
  options: DeepProbeOptions,
  command: RoleCommand,
  use: (inSandbox: InSandbox, dirs: { checkout: string; control: string; prompt: string }) => Promise<T>,
): Promise<T> {
  const { config } = options;
  const root = await mkdtemp(path.join(tmpdir(), "overseer-doctor-"));
  const dirs = {
    checkout: path.join(root, "checkout"),
    control: path.join(root, "control"),
    input: path.join(root, "input"),
    prompt: path.join(root, "input", "prompt.md"),
  };
  try {
    await mkdir(dirs.checkout);
    await mkdir(dirs.control, { mode: 0o700 });
    await mkdir(dirs.input, { mode: 0o700 });
    await writeFile(dirs.prompt, PROBE_PROMPT, { mode: 0o600 });
    const redact = createRedactor(Object.values(config.secrets));
    let n = 0;
    const inSandbox: InSandbox = async (argv, stdin = "") => {
      n += 1;
      const allowed: Record<string, string> = {};
      for (const name of config.env_allow) {
        const value = options.env[name];
        if (value !== undefined) allowed[name] = value;
      }
      const env = buildHarnessEnv({
        base: { ...allowed, ...config.env, ...config.secrets },
        projectRoot: dirs.checkout,
        taskId: "DOCTOR",
        role: command.role,
        agentId: `doctor-${command.role}`,
        action: command.action,
        promptFile: dirs.prompt,
        controlDir: dirs.control,
        pathPrepend: [agentBinDir()],
      });
      const spec = runSandboxSpec({
        id: `doctor-${path.basename(root)}-${n}`,
        checkoutDir: dirs.checkout,
        controlDir: dirs.control,
        readOnlyBinds: [agentBinDir(), dirs.input, ...config.sandbox.read_only_paths],
        commands: agentCommands(),
        hiddenPaths: [options.settings.dataDir],
        env,
        networkAllowHosts: config.network_allow_hosts,
        pidsMax: config.sandbox.pids_max,
        memoryMb: config.sandbox.memory_mb,
        cpuSeconds: config.sandbox.cpu_seconds,
      });
      const prepared = await driver.prepare(argv, spec);
      try {
        const r = await runPreparedCommand(prepared, { stdin, timeoutMs: options.timeoutMs });
        return { ...r, output: redact(`${r.stdout}${r.stderr ? `\n${r.stderr}` : ""}`) };
      } finally {
        await prepared.cleanup();
      }
    };
    return await use(inSandbox, dirs);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

async function probeCommand(
  driver: SandboxDriver,
  options: DeepProbeOptions,
  command: RoleCommand,
): Promise<DeepCheck[]> {
  const label = `${options.projectId}: ${command.role}/${command.action}`;
  try {
    return await inScratchSandbox(driver, options, command, (inSandbox, dirs) =>
      probeSteps(driver, options, command, inSandbox, dirs),
    );
  } catch (error) {
    return [
      {
        name: `${label} deep probe`,
        status: "fail",
        detail: `the sandbox refused the probe: ${(error as Error).message}`,
        required: true,
        fix: "correct the project's sandbox settings (sandbox.read_only_paths, network_allow_hosts, limits) named above",
      },
    ];
  }
}

/** The three probes of one command: version, auth variables, a non-mutating model call. */
async function probeSteps(
  driver: SandboxDriver,
  options: DeepProbeOptions,
  command: RoleCommand,
  inSandbox: InSandbox,
  dirs: { checkout: string; control: string; prompt: string },
): Promise<DeepCheck[]> {
  const { config, projectId } = options;
  const label = `${projectId}: ${command.role}/${command.action}`;
  const failure = (output: string, fallback: string) => {
    const cause = classifyFailure(output);
    const tail = lastLines(output, 5).replace(/\n/g, " | ").slice(0, 400);
    return {
      cause,
      detail: cause ? cause.message : tail || "no output",
      fix: cause ? fixFor(cause, projectId) : fallback,
    };
  };

  const checks: DeepCheck[] = [];
  // 1. version: the CLI starts inside the sandbox.
  const cli = cliOf(command.argv);
  const version = await inSandbox([cli, "--version"]);
  if (version.exitCode === 0) {
    checks.push({
      name: `${label} version`,
      status: "ok",
      detail: `${cli}: ${lastLines(version.output, 1) || "(no output)"} (in the ${driver.name} sandbox)`,
      required: true,
    });
  } else {
    const why = failure(version.output, cliInSandboxFix(cli, projectId));
    checks.push({
      name: `${label} version`,
      status: "fail",
      detail: `${cli} --version ${version.timedOut ? "timed out" : `exited ${version.exitCode ?? version.signal}`} inside the sandbox: ${why.detail}`,
      required: true,
      fix: /not found|No such file|ENOENT|exited 127/.test(`${why.detail} exited ${version.exitCode}`)
        ? cliInSandboxFix(cli, projectId)
        : why.fix,
    });
  }

  // 2. auth variables: which key variables arrive set inside the sandbox (names only).
  const names = authVariableNames(config);
  if (names.length === 0) {
    checks.push({
      name: `${label} auth variables`,
      status: "warn",
      detail: 'no key variable expected: no "secrets" and no preset "agent" in the runner config',
      required: false,
    });
  } else {
    const listed = await inSandbox([
      "/bin/sh",
      "-c",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion, not a JS template
      'for n do eval "v=\\${$n-}"; [ -n "$v" ] && echo "$n"; done; exit 0',
      "sh",
      ...names,
    ]);
    const present = new Set(listed.stdout.split("\n").filter((line) => names.includes(line)));
    const missing = names.filter((name) => !present.has(name));
    checks.push(
      missing.length === 0
        ? {
            name: `${label} auth variables`,
            status: "ok",
            detail: `set inside the sandbox: ${names.join(", ")}`,
            required: true,
          }
        : {
            name: `${label} auth variables`,
            status: "fail",
            detail: `not set inside the sandbox: ${missing.join(", ")}${present.size > 0 ? ` (set: ${[...present].join(", ")})` : ""}`,
            required: true,
            fix: authVariablesFix(projectId, missing, config.agent),
          },
    );
  }

  // 3. a non-mutating call through the egress proxy with the real key.
  if (config.probe_argv.length === 0 || isVersionCall(config.probe_argv)) {
    checks.push({
      name: `${label} model call`,
      status: "warn",
      detail:
        config.probe_argv.length === 0
          ? 'no "probe_argv": nothing reaches the model API'
          : `probe_argv only asks for the version (${config.probe_argv.join(" ")}): the model API is not reached`,
      required: false,
      fix: probeArgvFix(projectId),
    });
  } else {
    const argv = expandArgv(config.probe_argv, {
      root: dirs.checkout,
      task: "DOCTOR",
      role: command.role,
      agent: `doctor-${command.role}`,
      action: command.action,
      prompt_file: dirs.prompt,
    });
    const call = await inSandbox(argv, PROBE_PROMPT);
    const usage = harvestUsage(
      call.output,
      config.agent,
      null,
      await readSessionFiles(config.agent, dirs.control),
    );
    if (call.exitCode === 0 && !call.timedOut) {
      checks.push({
        name: `${label} model call`,
        status: "ok",
        detail: `${cliOf(argv)} answered in ${(call.durationMs / 1000).toFixed(1)} s${usage ? ` (${usage.tokensIn + usage.tokensOut} tokens, read from ${usage.source})` : ""}`,
        required: true,
      });
    } else {
      const why = failure(call.output, deepProbeFix(projectId));
      checks.push({
        name: `${label} model call`,
        status: "fail",
        // A named cause comes first: a CLI that retries a refused key until the probe's limit
        // was refused, not slow.
        detail: why.cause
          ? `${why.detail} (${call.timedOut ? `the CLI was still retrying after ${Math.round(options.timeoutMs / 1000)} s` : `exit ${call.exitCode ?? call.signal}`})`
          : `${call.timedOut ? `timed out after ${Math.round(options.timeoutMs / 1000)} s` : `exit ${call.exitCode ?? call.signal}`}: ${why.detail}`,
        required: true,
        fix: why.fix,
      });
    }
  }
  return checks;
}

function isVersionCall(argv: readonly string[]): boolean {
  return argv.length === 2 && (argv[1] === "--version" || argv[1] === "-v" || argv[1] === "version");
}
