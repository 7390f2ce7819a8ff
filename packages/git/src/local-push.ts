import fs from "node:fs";
import path from "node:path";
import { readLooseCommit } from "./loose-commit.ts";
import { transferObjects } from "./object-transfer.ts";
import { updateRefFile } from "./ref-file-update.ts";
import type { RepoMirror } from "./repo-mirror.ts";
import { runGit } from "./run-git.ts";

/**
 * A compare-and-swap push to a remote on this host's file system without git's transport: the
 * objects the remote lacks are linked into it from the mirror (object-transfer.ts) and the
 * branch is moved under its lock from the expected value (ref-file-update.ts, or `git
 * update-ref` where a reflog is kept), then the mirror's copy of the branch follows.
 *
 * It does what `git push` with the hardened receive-pack of a local remote does
 * (remote-location.ts: no hooks, no auto gc, never the branch a working tree has checked out),
 * with one git process at most instead of six (push, `sh -c`, receive-pack, pack-objects,
 * unpack-objects, rev-list): per push ~0.3 ms of CPU here against ~17 ms (the scale bench's
 * 2-core machine).
 *
 * Returns null, for the caller to push with git, wherever git could behave otherwise or this
 * cannot be sure of the answer: a remote that is not a plain repository of its own (a `.git`
 * file, alternates, linked worktrees), whose config sets anything receive-pack or the object and
 * ref stores would act on (any `receive.*`, `transfer.fsckObjects`, extensions, includes, a
 * shared repository, another object format), a mirror that uses the host's git config (which may
 * set receive-pack's behaviour too), a branch checked out in the remote's working tree (or a
 * rebase or bisect under way there, or a HEAD that is a symlink), a commit the mirror does not
 * hold loose, objects it cannot copy, a ref lock held by another writer.
 */
export interface LocalPushOptions {
  /** The full ref name, `refs/heads/<branch>`. */
  ref: string;
  sha: string;
  expectedOldSha: string | null;
  /** Objects copied at most; a larger push is git's (one pack beats many files). */
  maxObjects: number;
}

/** "pushed": the branch is at `sha`; "lost": it was at another value than the expected one, and is unchanged. */
export type LocalPushResult = "pushed" | "lost";

export async function localPush(
  mirror: RepoMirror,
  options: LocalPushOptions,
): Promise<LocalPushResult | null> {
  if (mirror.location.kind !== "local" || mirror.usesHostGitConfig) return null;
  const remote = plainRemote(mirror.location.path);
  if (remote === null) return null;
  const { ref, sha, expectedOldSha } = options;
  if (!remote.bare && mayBeCheckedOut(remote.gitDir, ref)) return null;
  if (readLooseCommit(mirror.gitDir, sha) === null) return null;
  let transfer: ReturnType<typeof transferObjects>;
  try {
    transfer = transferObjects(mirror.gitDir, remote.gitDir, sha, options.maxObjects);
  } catch {
    // A copy it could not make (permissions, a full disk): git's push reports it as git does.
    return null;
  }
  if (transfer === null) return null;
  const moved = remote.reflog
    ? await updateWithGit(mirror, remote.gitDir, ref, sha, expectedOldSha)
    : tryUpdateRefFile(remote.gitDir, ref, sha, expectedOldSha);
  if (moved === null) return null;
  if (!moved.ok) return moved.actualSha === sha ? "pushed" : "lost";
  // The mirror's copy of the branch, as git's push updates it (its fetch refspec maps the
  // remote's branches onto its own). A lock held there leaves it to the next fetch.
  if (tryUpdateRefFile(mirror.gitDir, ref, sha, "any") === null) {
    await mirror.git(["update-ref", ref, sha]).catch(() => undefined);
  }
  return "pushed";
}

/** updateRefFile, null where it fails (a lock file it cannot make, a ref it cannot read): git's to report. */
function tryUpdateRefFile(...args: Parameters<typeof updateRefFile>): ReturnType<typeof updateRefFile> {
  try {
    return updateRefFile(...args);
  } catch {
    return null;
  }
}

interface PlainRemote {
  gitDir: string;
  bare: boolean;
  /** A reflog is kept for branches (a working tree's default, or `core.logAllRefUpdates`). */
  reflog: boolean;
}

/**
 * Config a receive-pack, the object store or the ref store would act on (see localPush). A key
 * with no `=` is git's boolean true (`[core] sharedRepository` alone is "group").
 */
const ACTED_ON =
  /^\s*\[\s*(?:receive|extensions|include|includeif)\b|^\s*(?:fsckobjects|sharedrepository|objectformat|compatobjectformat|refstorage|worktreeconfig|worktree)\s*(?:[=;#]|$)/im;

/** A repository format git reads: version 0 or 1 (its extensions are in ACTED_ON). */
const FORMAT_VERSION = /^\s*repositoryformatversion\b(?!\s*=\s*[01]\s*$)/im;

/** What git takes for a repository's HEAD (setup.c, validate_headref): a branch or an object id. */
const PLAIN_HEAD = /^(?:ref: refs\/\S+|[0-9a-f]{40})\s*$/;

function readFile(file: string): string | null {
  try {
    return fs.readFileSync(file, "utf8");
  } catch {
    return null;
  }
}

function plainRemote(location: string): PlainRemote | null {
  const dotGit = path.join(location, ".git");
  const dotGitStat = fs.lstatSync(dotGit, { throwIfNoEntry: false });
  if (dotGitStat !== undefined && !dotGitStat.isDirectory()) return null;
  const gitDir = dotGitStat === undefined ? location : dotGit;
  let config: string;
  try {
    config = fs.readFileSync(path.join(gitDir, "config"), "utf8");
  } catch {
    return null;
  }
  if (ACTED_ON.test(config) || FORMAT_VERSION.test(config)) return null;
  const bare = /^\s*bare\s*=\s*true\s*$/im.test(config);
  if (bare !== (dotGitStat === undefined)) return null;
  if (
    fs.existsSync(path.join(gitDir, "objects", "info", "alternates")) ||
    !fs.existsSync(path.join(gitDir, "objects")) ||
    !fs.statSync(path.join(gitDir, "refs"), { throwIfNoEntry: false })?.isDirectory() ||
    !PLAIN_HEAD.test(readFile(path.join(gitDir, "HEAD")) ?? "") ||
    hasEntries(path.join(gitDir, "worktrees"))
  ) {
    return null;
  }
  // The last setting wins; any but a plain "false" (the bare key is true) leaves the reflog to
  // git update-ref.
  const logSetting = [...config.matchAll(/^\s*logallrefupdates\s*(?:=\s*(\S*)\s*)?(?:[;#].*)?$/gim)].at(-1);
  const reflog = logSetting === undefined ? !bare : logSetting[1]?.toLowerCase() !== "false";
  return { gitDir, bare, reflog };
}

function hasEntries(dir: string): boolean {
  try {
    return fs.readdirSync(dir).length > 0;
  } catch {
    return false;
  }
}

/**
 * The working copy's HEAD names `ref`, is not a plain file (a symlink, which git reads as a
 * symbolic ref), or a rebase or bisect is under way: receive-pack counts the branch it works on
 * as checked out though HEAD is detached (worktree.c, find_shared_symref), so git's to judge.
 */
function mayBeCheckedOut(gitDir: string, ref: string): boolean {
  const head = path.join(gitDir, "HEAD");
  try {
    if (!fs.lstatSync(head).isFile() || fs.readFileSync(head, "utf8").trim() === `ref: ${ref}`) return true;
  } catch {
    return true;
  }
  return ["rebase-merge", "rebase-apply", "BISECT_START"].some((name) =>
    fs.existsSync(path.join(gitDir, name)),
  );
}

/** The ref moved by `git update-ref` in the remote (which writes its reflog, "push", as receive-pack does). */
async function updateWithGit(
  mirror: RepoMirror,
  gitDir: string,
  ref: string,
  sha: string,
  expected: string | null,
): Promise<{ ok: true } | { ok: false; actualSha: string | null } | null> {
  const result = await runGit(
    ["--git-dir", gitDir, "update-ref", "--no-deref", "-m", "push", ref, sha, expected ?? "0".repeat(40)],
    { cwd: gitDir, timeoutMs: mirror.gitTimeoutMs, okExitCodes: [1, 128] },
  );
  if (result.exitCode === 0) return { ok: true };
  const actual = await runGit(["--git-dir", gitDir, "rev-parse", "--verify", "--quiet", `${ref}^{commit}`], {
    cwd: gitDir,
    timeoutMs: mirror.gitTimeoutMs,
    okExitCodes: [1],
  });
  const actualSha = actual.exitCode === 0 ? actual.stdout.trim() : null;
  // Still at the expectation: refused for another reason, which git's own push will tell.
  return actualSha === expected ? null : { ok: false, actualSha };
}
