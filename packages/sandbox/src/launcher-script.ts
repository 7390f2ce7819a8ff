import type { LaunchPrelude, LaunchStep, PreludeLaunch } from "@overseer/process";

/**
 * The two small shell programs around a bwrap run.
 *
 * Host launcher (spawned as `/bin/bash --norc --noprofile -p -c SCRIPT overseer-sandbox -- ARGV…`,
 * or `/usr/bin/env -i /bin/sh -c …` on a host without bash): bwrap (whose environ is readable
 * inside the sandbox as /proc/1/environ) never carries the worker's variables, even if a caller
 * spawns with the worker's environment: bash execs it with `exec -c` (an empty environment), and
 * `-p` keeps bash itself from acting on BASH_ENV, ENV, SHELLOPTS, BASHOPTS or exported
 * functions; POSIX sh has neither, so there `env -i` empties the environment first (one exec
 * more, ~1.5 ms of CPU per spawn, which bash saves). The script
 *   0. closes every inherited file descriptor but stdin/stdout/stderr: bwrap passes open fds on
 *      to the command, and a descriptor the worker inherited without O_CLOEXEC (a pipe, a
 *      directory) would reach the agent — a directory fd is a way out through /proc/self/fd/N.
 *      bash is used because dash cannot name descriptors above 9; on a host without bash the
 *      driver falls back to POSIX sh, which can close only 3-9 (see the README).
 *   1. opens the NUL-separated bwrap options file on fd 3 (bwrap reads its options from there, so
 *      the sandbox's env values, secrets included, never appear on a command line visible in
 *      `ps`; the file lives in the 0700 runtime root until cleanup() removes it — deleting it
 *      here would cost an extra fork+exec of rm on every spawn),
 *   2. writes its own pid into every run cgroup's cgroup.procs (aborting with 125 if any fails:
 *      a run never starts unconfined),
 *   3. sets rlimits (no core files, RLIMIT_CPU, RLIMIT_AS when no memory cgroup, RLIMIT_FSIZE
 *      when the spec caps file sizes),
 *   4. opens the seccomp program on fd 4,
 *   5. execs bwrap with an empty environment (same pid: the caller's child, process-group
 *      leader, is bwrap itself).
 * Steps 1-4 are one list (`hostLaunchSteps`). Through the Perl process spawner the shell is
 * skipped: the spawn carries that list as a launch prelude (`hostLaunchPrelude`,
 * @overseer/process launch-prelude.ts) and the spawner's child takes step 0, the list and step 5
 * itself between fork and exec, with the same failure lines and exit code (one exec and ~0.9 ms
 * of CPU fewer per run). The bwrap driver gives both forms (PreparedCommand.preludeLaunch); the
 * spawner picks one per spawn.
 *
 * Egress launcher (inside the sandbox, proxy mode only): starts the bridge in the background,
 * waits for its "ready" line through a fifo in the private /tmp, then execs the agent argv.
 */

/** Exit status of a launcher that could not set the sandbox up (the agent never ran). */
export const LAUNCHER_SETUP_FAILED_EXIT = 125;

/** Single-quotes `value` for POSIX sh. */
export function shQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

export interface HostLauncherInput {
  /** True when the launcher runs under bash (closes every inherited fd), false for POSIX sh (3-9 only). */
  bash: boolean;
  bwrapPath: string;
  argsFile: string;
  procsFiles: readonly string[];
  cpuSeconds: number;
  /** RLIMIT_AS in KiB, or null when a memory cgroup bounds the run. */
  addressSpaceKb: number | null;
  /** RLIMIT_FSIZE in bytes, or null for no cap. */
  fileSizeBytes?: number | null;
  seccompFile: string | null;
}

/** The launcher's setup steps, in order: the shell script and the launch prelude both come from them. */
export function hostLaunchSteps(input: Omit<HostLauncherInput, "bash">): LaunchStep[] {
  const failure = (what: string) => `overseer-sandbox: ${what}`;
  const steps: LaunchStep[] = [
    { op: "open", fd: 3, path: input.argsFile, failure: failure("cannot open the bwrap options file") },
  ];
  for (const file of input.procsFiles)
    steps.push({ op: "join", path: file, failure: failure(`cannot join cgroup ${file}`) });
  steps.push({ op: "rlimit", resource: "core", value: 0, failure: null });
  steps.push({
    op: "rlimit",
    resource: "cpu",
    value: input.cpuSeconds,
    failure: failure("cannot set RLIMIT_CPU"),
  });
  if (input.addressSpaceKb !== null) {
    steps.push({
      op: "rlimit",
      resource: "as",
      value: input.addressSpaceKb * 1024,
      failure: failure("cannot set RLIMIT_AS"),
    });
  }
  if (input.fileSizeBytes != null) {
    steps.push({
      op: "rlimit",
      resource: "fsize",
      value: input.fileSizeBytes,
      failure: failure("cannot set RLIMIT_FSIZE"),
    });
  }
  if (input.seccompFile !== null) {
    steps.push({
      op: "open",
      fd: 4,
      path: input.seccompFile,
      failure: failure("cannot open the seccomp program"),
    });
  }
  return steps;
}

/** `ulimit`'s option and the value in its unit for each rlimit step. */
function ulimitLine(resource: LaunchStep & { op: "rlimit" }, bash: boolean): string {
  const { value } = resource;
  if (resource.resource === "core") return `ulimit -c ${value}`;
  if (resource.resource === "cpu") return `ulimit -t ${value}`;
  if (resource.resource === "as") return `ulimit -v ${Math.floor(value / 1024)}`;
  // `ulimit -f` counts 1024-byte units in bash, 512-byte blocks in POSIX sh (dash, bash --posix).
  return `ulimit -f ${Math.floor(value / (bash ? 1024 : 512))}`;
}

function shellLine(step: LaunchStep, bash: boolean): string {
  const command =
    step.op === "open"
      ? `exec ${step.fd}<${shQuote(step.path)}`
      : step.op === "join"
        ? `echo $$ > ${shQuote(step.path)}`
        : ulimitLine(step, bash);
  return step.failure === null
    ? command
    : `${command} || { echo ${shQuote(step.failure)} >&2; exit ${LAUNCHER_SETUP_FAILED_EXIT}; }`;
}

export function buildHostLauncher(input: HostLauncherInput): string {
  const lines = input.bash
    ? [
        // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansion, not a JS template
        'for fd_path in /proc/$$/fd/*; do fd_num=${fd_path##*/}; case $fd_num in 0|1|2) ;; *) eval "exec $fd_num>&-" 2>/dev/null ;; esac; done',
      ]
    : ["exec 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&-"];
  for (const step of hostLaunchSteps(input)) lines.push(shellLine(step, input.bash));
  lines.push(`exec ${input.bash ? "-c " : ""}${shQuote(input.bwrapPath)} --args 3 "$@"`);
  return lines.join("\n");
}

/**
 * The launcher's steps as a launch prelude (@overseer/process launch-prelude.ts) for a spawner
 * that takes them itself in the child, then execs bwrap directly with an empty environment: the
 * same steps in the same order, the same failure lines and exit code, the same limits (RLIMIT_FSIZE
 * rounded down to the 1024-byte unit bash's `ulimit -f` sets).
 */
export function hostLaunchPrelude(input: Omit<HostLauncherInput, "bash">): LaunchPrelude {
  const steps = hostLaunchSteps(input).map((step) =>
    step.op === "rlimit" && step.resource === "fsize"
      ? { ...step, value: Math.floor(step.value / 1024) * 1024 }
      : step,
  );
  return { steps, failureExit: LAUNCHER_SETUP_FAILED_EXIT };
}

/**
 * How a run is spawned: `file args` runs the host launcher in `shell` (/bin/bash, else POSIX sh
 * under `env -i`), `preludeLaunch` runs bwrap directly for a spawner that takes the launcher's
 * steps itself. Either way bwrap gets `--args 3 -- ARGV…` (the launcher's "$@").
 */
export function hostLaunchCommand(
  shell: string,
  argv: readonly string[],
  input: Omit<HostLauncherInput, "bash">,
): { file: string; args: string[]; preludeLaunch: PreludeLaunch } {
  const bash = shell === "/bin/bash";
  const launcher = buildHostLauncher({ ...input, bash });
  return {
    // bash runs directly (one exec fewer than `env -i bash`, ~1.5 ms of CPU per spawn): -p
    // makes it ignore BASH_ENV, ENV, SHELLOPTS, BASHOPTS and exported functions, and the
    // launcher execs bwrap with `exec -c` (an empty environment). POSIX sh has neither, so
    // there `env -i` still empties the environment first. --norc: bash would otherwise
    // source ~/.bashrc of the worker when stdin is a socket.
    file: bash ? shell : "/usr/bin/env",
    args: [
      ...(bash ? ["--norc", "--noprofile", "-p"] : ["-i", shell]),
      "-c",
      launcher,
      "overseer-sandbox",
      "--",
      ...argv,
    ],
    preludeLaunch: {
      file: input.bwrapPath,
      args: ["--args", "3", "--", ...argv],
      prelude: hostLaunchPrelude(input),
    },
  };
}

export interface EgressLauncherInput {
  nodePath: string;
  bridgeScript: string;
  socketPath: string;
  port: number;
}

export function buildEgressLauncher(input: EgressLauncherInput): string {
  const fail = (what: string) =>
    `{ echo ${shQuote(`overseer-sandbox: ${what}`)} >&2; exit ${LAUNCHER_SETUP_FAILED_EXIT}; }`;
  return [
    'ready_fifo="/tmp/.overseer-egress-ready.$$"',
    `/usr/bin/mkfifo -m 600 "$ready_fifo" || ${fail("cannot create the egress readiness fifo in /tmp")}`,
    `${shQuote(input.nodePath)} ${shQuote(input.bridgeScript)} ${input.port} ${shQuote(input.socketPath)} </dev/null >"$ready_fifo" &`,
    'read -r bridge_state <"$ready_fifo"',
    'rm -f "$ready_fifo"',
    `[ "$bridge_state" = ready ] || ${fail("the egress bridge did not start")}`,
    'exec "$@"',
  ].join("\n");
}

const PROXY_VARIABLES = [
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "ALL_PROXY",
  "http_proxy",
  "https_proxy",
  "all_proxy",
] as const;

/**
 * Points every common proxy variable of a run's environment at the in-sandbox egress bridge
 * (127.0.0.1:`port`), and drops NO_PROXY so no host can bypass the filtering proxy.
 */
export function pointAtEgressBridge(env: Record<string, string>, port: number): void {
  const proxyUrl = `http://127.0.0.1:${port}`;
  for (const name of PROXY_VARIABLES) env[name] = proxyUrl;
  delete env.NO_PROXY;
  delete env.no_proxy;
}
