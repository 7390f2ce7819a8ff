import { lstatSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { runGit } from "./run-git.ts";

/**
 * Which branches of a local repository are checked out in one of its working trees.
 *
 * docs/architecture.md, Git: Overseer never touches a user's working tree, so approved work must not be pushed
 * to a branch that a non-bare worktree of a local remote has checked out (the main worktree's
 * HEAD or any linked worktree's). One `git worktree list --porcelain -z` answers both "is it
 * bare?" (the main entry says `bare`) and "what is checked out where?", for one process
 * instead of `rev-parse --is-bare-repository` plus a worktree listing.
 *
 * The command runs in the user's repository with the usual hardening (no hooks, no fsmonitor,
 * `GIT_OPTIONAL_LOCKS=0` so nothing is written) and `GIT_CEILING_DIRECTORIES` set to the
 * parent, so a path that is not itself a repository cannot be mistaken for an enclosing one.
 */

export interface CheckedOutBranches {
  /** The main repository is bare. */
  bare: boolean;
  /** Short names of branches checked out in a non-bare working tree. */
  branches: Set<string>;
}

export async function checkedOutBranches(repoPath: string, timeoutMs: number): Promise<CheckedOutBranches> {
  const result = await runGit(["worktree", "list", "--porcelain", "-z"], {
    cwd: repoPath,
    timeoutMs,
    env: { GIT_CEILING_DIRECTORIES: path.dirname(path.resolve(repoPath)) },
  });
  const branches = new Set<string>();
  let bare = false;
  let first = true;
  let record: string[] = [];
  const flush = () => {
    if (record.length === 0) return;
    const isBare = record.includes("bare");
    if (first) bare = isBare;
    first = false;
    const branch = record.find((line) => line.startsWith("branch refs/heads/"));
    if (!isBare && branch) branches.add(branch.slice("branch refs/heads/".length));
    record = [];
  };
  for (const field of result.stdout.split("\0")) {
    if (field === "") flush();
    else record.push(field);
  }
  flush();
  return { bare, branches };
}

/**
 * True when the files of `repoPath` show, without a git process, that no branch of it is checked
 * out: a bare repository (no `.git` inside it, `bare = true` in the `[core]` section of a config
 * file that includes no other file and names no work tree) with no linked worktree (no entry
 * under `worktrees/`). False whenever that is not certain: ask `checkedOutBranches`. A landing
 * on a bare remote (every push of a project whose remote is a bare path) is then one process
 * shorter; the remote's receive-pack still refuses a checked-out branch (remote-location.ts).
 */
export async function plainBareWithoutCheckouts(repoPath: string): Promise<boolean> {
  // Three small local reads, synchronous: ~10 µs of CPU each against 50-170 µs through the
  // promise API (every landing on a bare remote makes them).
  const attempt = <T>(read: () => T, otherwise: (error: NodeJS.ErrnoException) => T): T => {
    try {
      return read();
    } catch (error) {
      return otherwise(error as NodeJS.ErrnoException);
    }
  };
  const noDotGit = attempt(
    () => lstatSync(path.join(repoPath, ".git"), { throwIfNoEntry: false }) === undefined,
    () => false,
  );
  if (!noDotGit) return false;
  const worktrees = attempt<string[] | null>(
    () => readdirSync(path.join(repoPath, "worktrees")),
    (error) => (error.code === "ENOENT" ? [] : null),
  );
  if (worktrees === null || worktrees.length > 0) return false;
  return bareConfig(
    attempt(
      () => readFileSync(path.join(repoPath, "config"), "utf8"),
      () => "",
    ),
  );
}

/**
 * The last `bare` of `[core]` is `true`, every line is one git writes (a header alone or
 * `key = value`), and nothing is included or names a work tree: the config says bare, alone.
 */
function bareConfig(config: string): boolean {
  if (/^\s*\[\s*include/im.test(config) || /^\s*worktree\s*=/im.test(config)) return false;
  let section = "";
  let bare = false;
  for (const line of config.split("\n")) {
    const header = /^\s*\[\s*([A-Za-z0-9.-]+)(\s+"[^"\n]*")?\s*\]\s*$/.exec(line);
    if (header) section = (header[1] as string).toLowerCase();
    else if (!/^\s*([A-Za-z][A-Za-z0-9-]*\s*=.*)?$/.test(line)) return false;
    else if (section === "core" && /^\s*bare\s*=/i.test(line)) bare = /^\s*bare\s*=\s*true\s*$/i.test(line);
  }
  return bare;
}
