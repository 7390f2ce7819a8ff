/**
 * Parser for `git diff-index --raw -z -M` output, the format behind `Worktree.changedPaths()`.
 *
 * Each record is `:<old mode> <new mode> <old id> <new id> <status>[<score>]\0<path>\0`, and a
 * rename (`R<score>`) or copy has a second path (`<old path>\0<new path>\0`). With `-z` paths
 * are verbatim (no quoting), so spaces, newlines and any Unicode survive unchanged.
 */

export type ChangeStatus = "added" | "modified" | "deleted" | "renamed" | "typechange";

export interface ChangedPath {
  /** Path relative to the checkout root, `/`-separated (for a rename: the new path). */
  path: string;
  status: ChangeStatus;
  /** For `renamed`: the path at the base commit. */
  oldPath?: string;
  /** The executable bit changed (100644 ↔ 100755) on a path that exists on both sides. */
  modeChange?: boolean;
  /** The path is a symbolic link (after the change; for `deleted`, before it). */
  isSymlink: boolean;
  /** For a symbolic link that exists after the change: the link's own text, never followed. */
  symlinkTarget?: string;
  /** The entry is a gitlink (an embedded repository), recorded as a commit id, not as files. */
  isSubmodule?: boolean;
  /** Only with `includeIgnored`: a new file or directory (trailing `/`) matched by an ignore rule. Never committed. */
  ignored?: boolean;
}

/** One parsed record before the symlink targets are read from the checkout. */
export interface RawChange {
  path: string;
  status: ChangeStatus;
  oldPath?: string;
  oldMode: string;
  newMode: string;
}

const SYMLINK_MODE = "120000";
const GITLINK_MODE = "160000";

const STATUS_BY_LETTER: Record<string, ChangeStatus> = {
  A: "added",
  M: "modified",
  D: "deleted",
  R: "renamed",
  T: "typechange",
};

export function parseRawDiff(output: string): RawChange[] {
  const fields = output.split("\0");
  const changes: RawChange[] = [];
  let i = 0;
  while (i < fields.length) {
    const header = fields[i++];
    if (header === undefined || header === "") continue;
    if (!header.startsWith(":"))
      throw new Error(`unexpected git diff --raw record: ${JSON.stringify(header)}`);
    const [oldMode, newMode, , , statusField] = header.slice(1).split(" ");
    const letter = statusField?.charAt(0) ?? "";
    const first = fields[i++];
    if (oldMode === undefined || newMode === undefined || first === undefined) {
      throw new Error(`truncated git diff --raw record: ${JSON.stringify(header)}`);
    }
    if (letter === "R" || letter === "C") {
      const second = fields[i++];
      if (second === undefined)
        throw new Error(`rename record without a destination: ${JSON.stringify(first)}`);
      if (letter === "R") changes.push({ path: second, oldPath: first, status: "renamed", oldMode, newMode });
      else changes.push({ path: second, status: "added", oldMode: "000000", newMode });
      continue;
    }
    const status = STATUS_BY_LETTER[letter];
    if (!status)
      throw new Error(`unexpected change status ${JSON.stringify(statusField)} for ${JSON.stringify(first)}`);
    changes.push({ path: first, status, oldMode, newMode });
  }
  return changes;
}

/** Turns a raw record into the public shape; `readLink` is only called for surviving symlinks. */
export async function describeChange(
  raw: RawChange,
  readLink: (path: string) => Promise<string | undefined>,
): Promise<ChangedPath> {
  const mode = raw.status === "deleted" ? raw.oldMode : raw.newMode;
  const isSymlink = mode === SYMLINK_MODE;
  const change: ChangedPath = { path: raw.path, status: raw.status, isSymlink };
  if (raw.oldPath !== undefined) change.oldPath = raw.oldPath;
  if (mode === GITLINK_MODE) change.isSubmodule = true;
  if (
    (raw.status === "modified" || raw.status === "renamed") &&
    raw.oldMode !== raw.newMode &&
    raw.oldMode !== "000000"
  ) {
    change.modeChange = true;
  } else if (raw.status === "modified" || raw.status === "renamed") {
    change.modeChange = false;
  }
  if (isSymlink && raw.status !== "deleted") {
    const target = await readLink(raw.path);
    if (target !== undefined) change.symlinkTarget = target;
  }
  return change;
}
