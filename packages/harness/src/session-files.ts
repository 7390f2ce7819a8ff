import { constants as fsConstants } from "node:fs";
import { open, readdir } from "node:fs/promises";
import { join } from "node:path";
import { COPILOT_HOME_DIR } from "@overseer/config";

/** Bytes of session files read per run (the rest is not read). */
export const SESSION_FILES_MAX_BYTES = 8 * 1024 * 1024;

/**
 * The session files an agent CLI left in the run's control dir, as text, for the usage
 * harvester (usage-harvester.ts): Copilot's `session-state/ID/events.jsonl` under the preset's
 * COPILOT_HOME. The control dir is written by the (untrusted) agent, so symlinks are not
 * followed, only regular files are read, and the total read is bounded.
 */
export async function readSessionFiles(
  agent: string | null | undefined,
  controlDir: string,
  maxBytes = SESSION_FILES_MAX_BYTES,
): Promise<string[]> {
  if (agent !== "copilot") return [];
  const stateDir = join(controlDir, COPILOT_HOME_DIR, "session-state");
  let sessions: string[];
  try {
    sessions = (await readdir(stateDir)).sort();
  } catch {
    return [];
  }
  const texts: string[] = [];
  let left = maxBytes;
  for (const session of sessions) {
    if (left <= 0) break;
    const text = await readBounded(join(stateDir, session, "events.jsonl"), left);
    if (text === null) continue;
    texts.push(text);
    left -= Buffer.byteLength(text);
  }
  return texts;
}

async function readBounded(path: string, maxBytes: number): Promise<string | null> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW | fsConstants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) return null;
    const buffer = Buffer.alloc(Math.min(stat.size, maxBytes));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    return buffer.subarray(0, bytesRead).toString("utf8");
  } finally {
    await handle.close();
  }
}
