import { type SpawnedGroup, spawnGroup } from "@overseer/process";
import { gitEnv } from "./git-env.ts";
import { GitError } from "./git-error.ts";

/**
 * The one place a git process is spawned.
 *
 * Threat model. Git runs on checkouts an untrusted agent has written to, and against
 * repositories (the project's `repo`) that Overseer does not own. Git executes programs named
 * by configuration (hooks, `core.fsmonitor`, `diff.external`, filter/diff/merge drivers,
 * pagers, editors, `core.sshCommand`…) and reads configuration from the system, the user's
 * home, the repository, and the environment. So every call:
 *
 * - starts from a clean environment: inherited `GIT_*` variables are dropped (a worker started
 *   from inside a hook must not inherit `GIT_DIR`/`GIT_INDEX_FILE`/`GIT_CONFIG_PARAMETERS`),
 *   except the few that name how the worker host reaches remotes (`GIT_SSH*`, `GIT_ASKPASS`,
 *   proxy/CA settings) — that is how host credentials stay with the host — and the operator's
 *   trace switches;
 * - reads no system or global configuration (`GIT_CONFIG_NOSYSTEM`, `GIT_CONFIG_GLOBAL=/dev/null`;
 *   `hostConfig: true` re-enables them for remote-talking commands whose operator wants the host's
 *   credential helper — that config is the host operator's, never the agent's);
 * - passes `-c` overrides that beat any repository configuration: no hooks, no fsmonitor, no
 *   untracked cache, no attributes/excludes files from the host, no external diff, no pager,
 *   no signing, real symlinks, no background (detached) gc.
 *
 * Filter, textconv and merge drivers named by a `.gitattributes` file the agent wrote are only
 * *names*: the program behind `filter.<x>.clean` / `diff.<x>.textconv` / `merge.<x>.driver`
 * comes from configuration only, and the only configuration git reads here is the mirror's own
 * (written by this package) plus these flags. Repository-side configuration the agent could
 * plant (a `.git` directory replacing the worktree's `.git` file) is never read, because
 * worktree commands pass `--git-dir`/`--work-tree` explicitly (see worktree.ts).
 */

/** Config overrides passed as `-c` on every git invocation. */
export const HARDENING_CONFIG: readonly string[] = [
  "core.hooksPath=/dev/null",
  "core.fsmonitor=false",
  "core.untrackedCache=false",
  "core.attributesFile=/dev/null",
  "core.excludesFile=/dev/null",
  "diff.external=",
  "core.pager=cat",
  "protocol.file.allow=always",
  "protocol.ext.allow=never",
  "safe.directory=*",
  "commit.gpgSign=false",
  "tag.gpgSign=false",
  "core.symlinks=true",
  "advice.detachedHead=false",
  "submodule.recurse=false",
  "gc.autoDetach=false",
];

/** Default bound on one git process, in ms (5 minutes). */
export const DEFAULT_GIT_TIMEOUT_MS = 300_000;

/** Default grace between SIGTERM and SIGKILL on timeout, in ms. */
export const DEFAULT_KILL_GRACE_MS = 2_000;

/** Default bound on git's captured output (256 MiB). */
export const DEFAULT_MAX_OUTPUT_BYTES = 256 * 1024 * 1024;

export interface RunGitOptions {
  /** Working directory of the git process. */
  cwd: string;
  /** Data written to git's stdin (stdin is closed when absent). */
  input?: string | Uint8Array;
  /** Extra environment (identity, `GIT_INDEX_FILE`…); applied after the hardening env except the config isolation. */
  env?: Record<string, string>;
  /** Kill git after this many ms. Default {@link DEFAULT_GIT_TIMEOUT_MS}. */
  timeoutMs?: number;
  /** Exit codes that are answers rather than failures (e.g. `[1]` for `merge-base --is-ancestor`). Default `[]`. */
  okExitCodes?: readonly number[];
  /**
   * Read the host's system and global git configuration (credential helpers, `url.*.insteadOf`,
   * proxies). The `-c` hardening flags still win over it. Default `false`.
   */
  hostConfig?: boolean;
  /** After a timeout's SIGTERM, SIGKILL the process group if still running after this many ms. Default 2 000. */
  killGraceMs?: number;
  /** Largest stdout/stderr accepted, in bytes; more fails the call. Default 256 MiB. */
  maxOutputBytes?: number;
}

export interface GitResult {
  stdout: string;
  stderr: string;
  exitCode: number;
}

/** The full argv (after `git`) for `args`: the hardening `-c` prefix, then the caller's arguments. */
export function hardenedArgv(args: readonly string[]): string[] {
  const argv: string[] = [];
  for (const setting of HARDENING_CONFIG) argv.push("-c", setting);
  argv.push(...args);
  return argv;
}

/**
 * Runs `git <hardening> <args>` without a shell. Resolves with the output when git exits 0 (or
 * with an exit code listed in `okExitCodes`); otherwise throws {@link GitError}.
 */
export async function runGit(args: readonly string[], options: RunGitOptions): Promise<GitResult> {
  const timeout = options.timeoutMs ?? DEFAULT_GIT_TIMEOUT_MS;
  const grace = options.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
  // Own process group (and session, so no controlling terminal to prompt on): on timeout the
  // whole group is killed — git's children (ssh, upload-pack, aliases) would otherwise hold the
  // pipes open long after git itself died.
  const run = collect(hardenedArgv(args), options);
  let timedOut = false;
  let forceKill: NodeJS.Timeout | undefined;
  const timer = setTimeout(() => {
    timedOut = true;
    run.group.kill("SIGTERM");
    forceKill = setTimeout(() => run.group.kill("SIGKILL"), grace);
  }, timeout);
  const result = await run.done;
  clearTimeout(timer);
  if (forceKill) clearTimeout(forceKill);
  if (timedOut) run.group.kill("SIGKILL");

  const { stdout, stderr, exitCode } = result;
  if (!timedOut && (exitCode === 0 || (exitCode !== null && options.okExitCodes?.includes(exitCode)))) {
    return { stdout, stderr, exitCode };
  }
  throw new GitError({
    args,
    exitCode: timedOut ? null : exitCode,
    stderr: stderr || (exitCode === null ? result.failure : ""),
    stdout,
    cwd: options.cwd,
    signal: result.signal ?? undefined,
    timedOut,
  });
}

interface Collected {
  stdout: string;
  stderr: string;
  /** null: killed by a signal, or never started. */
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  /** Why there is no exit code: the spawn failed or the output went over its bound. */
  failure: string;
}

/**
 * Spawns `git argv` in its own process group (`spawnGroup` of @overseer/process: through the
 * worker's small spawner process, or directly), with exactly `gitEnv(options)` (git-env.ts),
 * writes `input` to its stdin and collects both outputs as UTF-8 (decoded once, at the end), up
 * to `maxOutputBytes` each: past it the group is ended and the call fails. No general process
 * library: git runs a dozen times per run, and one costs about twice the main-thread time per call.
 */
function collect(argv: string[], options: RunGitOptions): { group: SpawnedGroup; done: Promise<Collected> } {
  const maxBytes = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
  const group = spawnGroup("git", argv, {
    cwd: options.cwd,
    env: gitEnv(options),
    stdin: options.input !== undefined,
  });
  const { child } = group;
  let failure = "";
  const output = (stream: NodeJS.ReadableStream) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    stream.on("data", (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > maxBytes) {
        if (failure === "") failure = `git's output went over ${maxBytes} bytes`;
        group.kill("SIGTERM");
        return;
      }
      chunks.push(chunk);
    });
    return () => Buffer.concat(chunks).toString("utf8");
  };
  const stdout = output(child.stdout);
  const stderr = output(child.stderr);
  if (child.stdin) {
    // git may exit before reading all its input (EPIPE): its exit code tells what happened.
    child.stdin.on("error", () => undefined);
    child.stdin.end(options.input);
  }
  const done = new Promise<Collected>((resolve) => {
    child.once("error", (error) => {
      failure = error.message;
      // A spawn that failed emits no close when no stream was ever opened.
      if (child.pid === undefined) resolve({ stdout: "", stderr: "", exitCode: null, signal: null, failure });
    });
    child.once("close", (code, signal) => {
      const exited = failure === "" ? code : null;
      resolve({ stdout: stdout(), stderr: stderr(), exitCode: exited, signal, failure });
    });
  });
  return { group, done };
}
