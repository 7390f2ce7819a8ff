import { buildCommitMessage } from "./commit-message-builder.ts";
import { plainObjectStore, plainTrailerBlock, readLooseCommit, writeLooseCommit } from "./loose-commit.ts";
import { branchHeadsFromFiles } from "./ref-files.ts";
import { assertBranchName, assertSha, isFullSha } from "./ref-names.ts";
import type { BranchTip, RepoMirror } from "./repo-mirror.ts";

/**
 * The commit that carries approved work onto the landing branch (land-branch.ts): the reviewed
 * head's tree, the reviewed head's message and trailers, and `Reviewed-head: <sha>` naming the
 * approved commit. It never has the task branch as an ancestor, so no attempt a reviewer
 * rejected (and no later push to the task branch) becomes part of the landing branch's history.
 */

/** The trailer naming the task branch head a landed commit carries (idempotence, traceability). */
export const REVIEWED_HEAD_TRAILER = "Reviewed-head";

export interface ReviewedHead {
  sha: string;
  tree: string;
  /** The head's parent commits. */
  parents: string[];
  /** The head's message without its trailer block. */
  body: string;
  /** The head's trailers as git reads them (the last paragraph: Overseer's own block). */
  trailers: Record<string, string>;
}

const TRAILER_LINE = /^([A-Za-z0-9][A-Za-z0-9-]*): (.*)$/;

/**
 * Reads the reviewed head: tree, parents, message and the trailer block git itself parses, in
 * one process that also verifies it (`--ignore-missing` on `<sha>^{commit}`): null when `sha`
 * is not a commit in the mirror.
 */
export async function readReviewedHead(mirror: RepoMirror, sha: string): Promise<ReviewedHead | null> {
  const shown = await mirror.git([
    "show",
    "-s",
    "--ignore-missing",
    "--format=%T%x00%P%x00%B%x00%(trailers:only,unfold)%x00",
    "--end-of-options",
    `${sha}^{commit}`,
  ]);
  if (shown.stdout === "") return null;
  const [tree = "", parents = "", message = "", block = ""] = shown.stdout.split("\0");
  return reviewedHead(sha, tree, parents, message, block);
}

/** A commit's fields as git printed them (`%T`, `%P`, `%B`, `%(trailers:only,unfold)`). */
function reviewedHead(
  sha: string,
  tree: string,
  parents: string,
  message: string,
  block: string,
): ReviewedHead {
  const text = message.trimEnd();
  const lines = block.trim();
  const trailers: Record<string, string> = {};
  for (const line of lines.split("\n")) {
    const match = TRAILER_LINE.exec(line);
    if (match) trailers[match[1] as string] = (match[2] as string).trim();
  }
  // Only the exact block git read is taken off the body; a message git reads differently is
  // kept whole (its trailers then come from the caller alone).
  const own = lines !== "" && text.endsWith(`\n\n${lines}`);
  return {
    sha,
    tree: assertSha(tree.trim(), "reviewed tree"),
    parents: parents.split(" ").filter((p) => p !== ""),
    body: own ? text.slice(0, -lines.length).trimEnd() : text,
    trailers: own ? trailers : {},
  };
}

/** Fields per branch of `readBranchCommits`, each ended by NUL (for-each-ref adds a newline per branch). */
const BRANCH_COMMIT_FORMAT = [
  "%(objectname)",
  "%(objecttype)",
  "%(tree)",
  "%(parent)",
  "%(refname)",
  "%(contents)",
  "%(trailers:only,unfold)",
]
  .map((atom) => `${atom}%00`)
  .join("");
const BRANCH_COMMIT_FIELDS = 7;

/**
 * The heads of `branches` with their trees (a missing branch maps to null), and each head read
 * as `readReviewedHead` reads it: from the mirror's files when they are plain loose commits
 * (`branchCommitsFromFiles`), else in one git process (`for-each-ref`): a landing's reads of the
 * branches and of the reviewed head, when the task branch is at the reviewed head (the usual
 * case), in one process at most instead of two. Null when the listing cannot be split into exactly
 * those fields (a message holding a NUL byte): the caller reads them the usual way.
 */
export async function readBranchCommits(
  mirror: RepoMirror,
  branches: readonly string[],
): Promise<{ tips: Map<string, BranchTip | null>; heads: Map<string, ReviewedHead> } | null> {
  const names = [...new Set(branches.map((b) => assertBranchName(b, "branch")))];
  const fromFiles = await branchCommitsFromFiles(mirror.gitDir, names);
  if (fromFiles !== null) return fromFiles;
  const listed = await mirror.git([
    "for-each-ref",
    `--format=${BRANCH_COMMIT_FORMAT}`,
    ...names.map((b) => `refs/heads/${b}`),
  ]);
  const fields = listed.stdout.split("\0");
  // n records of 7 fields, each record but the first starting after for-each-ref's newline.
  if ((fields.length - 1) % BRANCH_COMMIT_FIELDS !== 0 || fields.at(-1)?.trim() !== "") return null;
  const tips = new Map<string, BranchTip | null>(names.map((b) => [b, null]));
  const heads = new Map<string, ReviewedHead>();
  for (let i = 0; i + BRANCH_COMMIT_FIELDS <= fields.length - 1; i += BRANCH_COMMIT_FIELDS) {
    const [sha = "", type = "", tree = "", parents = "", ref = "", message = "", block = ""] = fields
      .slice(i, i + BRANCH_COMMIT_FIELDS)
      .map((field, k) => (k === 0 && i > 0 ? field.replace(/^\n/, "") : field));
    if (!isFullSha(sha) || !ref.startsWith("refs/heads/")) return null;
    // A pattern also matches the refs below it (refs/heads/main/x): only exact names count.
    const name = ref.slice("refs/heads/".length);
    if (!tips.has(name)) continue;
    tips.set(name, { sha, tree });
    if (type === "commit") heads.set(name, reviewedHead(sha, tree, parents, message, block));
  }
  return { tips, heads };
}

/**
 * What `readBranchCommits` reads, from the mirror's files without a git process: the ref files
 * (ref-files.ts) and each head's loose object (loose-commit.ts), when every head is a loose
 * commit whose trailer block is plain (`plainTrailerBlock`). A landing's heads usually are: the
 * task branch's head was committed or fetched into the mirror, the landing branch's is the
 * previous landing's. Null otherwise (a packed head, another ref backend): git reads them.
 */
async function branchCommitsFromFiles(
  gitDir: string,
  names: readonly string[],
): Promise<{ tips: Map<string, BranchTip | null>; heads: Map<string, ReviewedHead> } | null> {
  // A mirror that cannot be read this way (none there yet) is git's to report.
  const plain = await Promise.resolve()
    .then(() => plainObjectStore(gitDir))
    .catch(() => false);
  const shas = plain ? await branchHeadsFromFiles(gitDir, names).catch(() => null) : null;
  if (shas === null) return null;
  const tips = new Map<string, BranchTip | null>();
  const heads = new Map<string, ReviewedHead>();
  for (const name of names) {
    const sha = shas.get(name) ?? null;
    const commit = sha === null ? null : readLooseCommit(gitDir, sha);
    const block = commit === null ? null : plainTrailerBlock(commit.message);
    if (sha === null) tips.set(name, null);
    else if (commit === null || block === null) return null;
    else {
      tips.set(name, { sha, tree: commit.tree });
      heads.set(name, reviewedHead(sha, commit.tree, commit.parents.join(" "), commit.message, block));
    }
  }
  return { tips, heads };
}

/**
 * Creates the landed work commit: `tree` on `parent`, the head's message and trailers, `extra`
 * trailers over them, and `Reviewed-head`. `fallbackMessage` is used when the head has no body.
 */
export async function commitReviewedWork(
  mirror: RepoMirror,
  head: ReviewedHead,
  options: {
    tree: string;
    parent: string;
    extra: Record<string, string>;
    fallbackMessage: string;
    env: Record<string, string>;
  },
): Promise<string> {
  const message = buildCommitMessage(head.body === "" ? options.fallbackMessage : head.body, {
    ...head.trailers,
    ...options.extra,
    [REVIEWED_HEAD_TRAILER]: head.sha,
  });
  return commitTree(mirror, options.tree, [options.parent], message, options.env);
}

/**
 * `git commit-tree <tree> -p <parent>… -F -` in the mirror: the commit written by
 * loose-commit.ts without a git process where it writes exactly what git would, else by git.
 */
export async function commitTree(
  mirror: RepoMirror,
  tree: string,
  parents: readonly string[],
  message: string,
  env: Record<string, string>,
): Promise<string> {
  const checkedTree = assertSha(tree, "tree");
  const written = writeLooseCommit(mirror.gitDir, { tree: checkedTree, parents, message, env });
  if (written !== null) return written;
  const commit = await mirror.git(
    ["commit-tree", checkedTree, ...parents.flatMap((p) => ["-p", assertSha(p, "parent")]), "-F", "-"],
    { input: message, env },
  );
  return assertSha(commit.stdout.trim(), "commit-tree result");
}

/**
 * Whether `head` already landed on the branch now at `landing`: a commit of `since..landing` (what
 * the branch gained since the task branched off it, so the cost grows with what changed) carries
 * `Reviewed-head: <head>` in the trailer block git reads. Redelivered approve jobs land once.
 */
export async function alreadyLanded(
  mirror: RepoMirror,
  since: string,
  landing: string,
  head: string,
): Promise<boolean> {
  if (since === landing) return false;
  const log = await mirror.git([
    "log",
    `--format=%(trailers:key=${REVIEWED_HEAD_TRAILER},valueonly,separator=%x2C)`,
    `${since}..${landing}`,
    "--",
  ]);
  return log.stdout.split(/[\n,]/).some((value) => value.trim() === head);
}
