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

export function buildHostLauncher(input: HostLauncherInput): string {
  const fail = (what: string) =>
    `{ echo ${shQuote(`overseer-sandbox: ${what}`)} >&2; exit ${LAUNCHER_SETUP_FAILED_EXIT}; }`;
  const lines = input.bash
    ? [
        // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansion, not a JS template
        'for fd_path in /proc/$$/fd/*; do fd_num=${fd_path##*/}; case $fd_num in 0|1|2) ;; *) eval "exec $fd_num>&-" 2>/dev/null ;; esac; done',
      ]
    : ["exec 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&-"];
  lines.push(`exec 3<${shQuote(input.argsFile)} || ${fail("cannot open the bwrap options file")}`);
  for (const file of input.procsFiles) {
    lines.push(`echo $$ > ${shQuote(file)} || ${fail(`cannot join cgroup ${file}`)}`);
  }
  lines.push("ulimit -c 0");
  lines.push(`ulimit -t ${input.cpuSeconds} || ${fail("cannot set RLIMIT_CPU")}`);
  if (input.addressSpaceKb !== null) {
    lines.push(`ulimit -v ${input.addressSpaceKb} || ${fail("cannot set RLIMIT_AS")}`);
  }
  if (input.fileSizeBytes != null) {
    // `ulimit -f` counts 1024-byte units in bash, 512-byte blocks in POSIX sh (dash, bash --posix).
    const blocks = Math.floor(input.fileSizeBytes / (input.bash ? 1024 : 512));
    lines.push(`ulimit -f ${blocks} || ${fail("cannot set RLIMIT_FSIZE")}`);
  }
  if (input.seccompFile !== null) {
    lines.push(`exec 4<${shQuote(input.seccompFile)} || ${fail("cannot open the seccomp program")}`);
  }
  lines.push(`exec ${input.bash ? "-c " : ""}${shQuote(input.bwrapPath)} --args 3 "$@"`);
  return lines.join("\n");
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
