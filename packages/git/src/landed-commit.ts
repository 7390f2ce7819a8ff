import { buildCommitMessage } from "./commit-message-builder.ts";
import { assertSha } from "./ref-names.ts";
import type { RepoMirror } from "./repo-mirror.ts";

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
  const commit = await mirror.git(["commit-tree", options.tree, "-p", options.parent, "-F", "-"], {
    input: message,
    env: options.env,
  });
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
