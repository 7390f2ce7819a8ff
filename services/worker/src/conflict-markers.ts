import { lstat, readFile } from "node:fs/promises";
import path from "node:path";
import type { RunOutcome } from "@overseer/run-contract";

/** A line git writes as a conflict marker (diff3 style): `<<<<<<< x`, `||||||| x`, `=======`, `>>>>>>> x`. */
const MARKER = /^(?:<{7}|\|{7}|>{7})(?: |$)|^={7}$/m;

/** Largest file read for markers; a larger one is checked on its first bytes only. */
const MAX_READ_BYTES = 8 * 1024 * 1024;

/**
 * The files of a merge conflict that still hold a conflict marker in the checkout, in order.
 * A file the agent deleted holds none; a symlink or a directory is not followed.
 */
export async function filesWithMarkers(checkout: string, conflicted: readonly string[]): Promise<string[]> {
  const found: string[] = [];
  for (const file of conflicted) {
    const full = path.join(checkout, file);
    const stat = await lstat(full).catch(() => null);
    if (!stat?.isFile()) continue;
    const text = (await readFile(full)).subarray(0, MAX_READ_BYTES).toString("utf8");
    if (MARKER.test(text)) found.push(file);
  }
  return found;
}

/**
 * A hand-in from a checkout that started on a merge of the main branch is refused while a
 * conflicted file still holds markers: nothing is committed or pushed, and the run fails with
 * the files named, so the next executor (main merged in again) resolves them.
 */
export function markerRefusal(files: readonly string[]): RunOutcome {
  return {
    kind: "no-transition",
    crashed: false,
    detail: `conflict markers remain in ${files.join(", ")}: resolve every <<<<<<< / ||||||| / ======= / >>>>>>> block (keep the intended lines, delete the markers) before submitting; nothing of this run was committed or pushed`,
  };
}
