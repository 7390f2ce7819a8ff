import { closeSync, fstatSync, openSync, readFileSync } from "node:fs";
import path from "node:path";
import type { RawChange } from "./changed-paths-parser.ts";
import { type ParsedIndex, parseIndex } from "./index-file.ts";
import { indexChanges, indexTreeId, writeIndexTree } from "./index-tree.ts";

/**
 * A worktree's index as the hand-in reads it without git (worktree.ts): the index the
 * checkout was made with (the base commit's tree, read once before the agent runs) and the one
 * the last staging wrote. Every answer is null where index-file.ts leaves the index to git.
 *
 * The base is read when the checkout is made: the admin directory is outside the checkout and
 * bound read-only in the sandbox, but what is compared against must not depend on that, as
 * `git diff-index <base>` does not.
 *
 * An index larger than {@link MAX_INDEX_BYTES} (some 3,500 files) is left to git: the work here
 * is synchronous on the worker's event loop and grows with the entries (10,000 of them: ~3 ms
 * to read, ~10 ms for a tree whose cache tree git dropped, warm), while a git process costs
 * ~2–3 ms whatever the checkout and does that work in C off the loop.
 */
const MAX_INDEX_BYTES = 256 * 1024;

export class WorktreeIndex {
  private readonly file: string;
  private base: Buffer | ParsedIndex | null;
  /** The parsed index since the last staging (undefined: not read yet). */
  private current: ParsedIndex | null | undefined;
  /** Whether the base's entries make its commit's tree (undefined: not checked yet). */
  private faithful: boolean | undefined;

  /**
   * Reads the index `worktreeGitDir` holds now: call as soon as the checkout is made. `plain`:
   * the repository's objects are SHA-1 (loose-commit.ts `plainObjectStore`); otherwise every
   * answer is git's (an index of 32-byte ids whose checksum git was told to skip would
   * otherwise be read with 20-byte ones).
   */
  constructor(
    worktreeGitDir: string,
    private readonly plain: boolean,
  ) {
    this.file = path.join(worktreeGitDir, "index");
    this.base = plain ? readIndex(this.file) : null;
  }

  /** The index changed (a staging, git's own commit): read it again when next asked. */
  invalidate(): void {
    this.current = undefined;
  }

  /** The changes from the base to the index, as `diff-index --cached --raw` lists them without `-M`. */
  changes(): RawChange[] | null {
    const base = this.parsedBase();
    const current = this.parsedCurrent();
    return base === null || current === null || !this.baseIsItsTree() ? null : indexChanges(base, current);
  }

  /** The index's tree, written into `commonDir`'s loose objects as `write-tree` does. */
  writeTree(commonDir: string): string | null {
    const current = this.parsedCurrent();
    return current === null ? null : writeIndexTree(commonDir, current);
  }

  /** The base commit's tree as the checkout recorded it (the cache tree of a fresh checkout). */
  baseTree(): string | null {
    const base = this.parsedBase();
    const root = base?.trees.get("");
    return base && root && root.count === base.entries.length ? root.sha : null;
  }

  /**
   * Whether the base's entries are exactly its commit's tree (the checkout's recorded root),
   * checked once: a commit whose tree git would not write (entries out of order, a name twice,
   * an old mode such as 100664) is checked out as an index that is not: a commit made from the
   * index changes what the base held there, and `git diff-index <base>`, which reads the tree
   * itself, lists it (found by index-tree.property.test.ts's search). Git lists those.
   */
  private baseIsItsTree(): boolean {
    if (this.faithful === undefined) {
      const root = this.baseTree();
      const base = this.parsedBase();
      this.faithful = base !== null && root !== null && indexTreeId(base) === root;
    }
    return this.faithful;
  }

  private parsedBase(): ParsedIndex | null {
    if (Buffer.isBuffer(this.base)) this.base = parseIndex(this.base);
    return this.base;
  }

  private parsedCurrent(): ParsedIndex | null {
    if (!this.plain) return null;
    if (this.current === undefined) {
      const data = readIndex(this.file);
      this.current = data === null ? null : parseIndex(data);
    }
    return this.current;
  }
}

/** The index file's bytes, or null when it is absent or larger than MAX_INDEX_BYTES (not read). */
function readIndex(file: string): Buffer | null {
  let fd: number;
  try {
    fd = openSync(file, "r");
  } catch {
    return null;
  }
  try {
    return fstatSync(fd).size <= MAX_INDEX_BYTES ? readFileSync(fd) : null;
  } finally {
    closeSync(fd);
  }
}
