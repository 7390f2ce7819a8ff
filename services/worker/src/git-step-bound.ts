import { GitError, type RepoMirror } from "@overseer/git";
import type { RunOutcome } from "@overseer/run-contract";

/** Git commands that talk to the remote: their time is the network's, bounded apart (networkTimeoutMs). */
const REMOTE_COMMANDS = new Set(["fetch", "push", "clone", "ls-remote"]);

/**
 * A host-side git step of a run (add, commit, checkout, merge, …) that ran past its bound
 * (`OVERSEER_GIT_TIMEOUT_MS`, the mirror's `gitTimeoutMs`): what the run left costs git more
 * than a run may (a huge tree, hard links that make git read a file again and again), so the
 * run ends as a `disk_limit` violation — an incident, not a retry that would run into the same
 * wall. Anything else, a remote's slowness included, is not this bound's: null.
 */
export function gitStepBreach(error: unknown, mirror: RepoMirror): RunOutcome | null {
  if (!(error instanceof GitError) || !error.timedOut) return null;
  const command = subcommandOf(error.args);
  if (command === null || REMOTE_COMMANDS.has(command)) return null;
  const seconds = Math.round(mirror.gitTimeoutMs / 1000);
  return {
    kind: "violation",
    violation: "disk_limit",
    detail: `the host-side \`git ${command}\` of the run's checkout did not finish within its bound of ${seconds} s and was stopped: the run left a tree too costly for git to stage, commit or check out (many files, huge or sparse files, hard links); nothing of it was committed`,
  };
}

/** The git command in `args`, past the global options (`-c k=v`, `--git-dir D`, `--work-tree W`). */
function subcommandOf(args: readonly string[]): string | null {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === "-c" || arg === "--git-dir" || arg === "--work-tree" || arg === "-C") i++;
    else if (!arg.startsWith("-")) return arg;
  }
  return null;
}
