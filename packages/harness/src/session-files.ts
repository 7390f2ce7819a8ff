import { constants as fsConstants } from "node:fs";
import { open, readdir } from "node:fs/promises";
import { join } from "node:path";
import { CODEX_HOME_DIR, COPILOT_HOME_DIR } from "@overseer/project-config";

/** Bytes of session files read per run (the rest is not read). */
export const SESSION_FILES_MAX_BYTES = 8 * 1024 * 1024;

/**
 * The session files an agent CLI left in the run's control dir, as text, for the usage meter
 * (usage-meter.ts): Copilot's `session-state/ID/events.jsonl` under the preset's COPILOT_HOME,
 * Codex's `sessions/YYYY/MM/DD/rollout-*.jsonl` under the preset's CODEX_HOME. The control dir
 * is written by the (untrusted) agent, so symlinks are not followed, only regular files are
 * read, and the total read is bounded.
 */
export async function readSessionFiles(
  agent: string | null | undefined,
  controlDir: string,
  maxBytes = SESSION_FILES_MAX_BYTES,
): Promise<string[]> {
  const texts: string[] = [];
  let left = maxBytes;
  for (const path of await sessionFilePaths(agent, controlDir)) {
    if (left <= 0) break;
    const bytes = await readSessionFileFrom(path, 0, left);
    if (bytes === null) continue;
    texts.push(bytes.toString("utf8"));
    left -= bytes.length;
  }
  return texts;
}

/** The session files of `agent` in the run's control dir (Copilot's events, Codex's rollouts), sorted. */
export async function sessionFilePaths(
  agent: string | null | undefined,
  controlDir: string,
): Promise<string[]> {
  if (agent === "copilot")
    return (await realDirs(join(controlDir, COPILOT_HOME_DIR, "session-state"))).map((dir) =>
      join(dir, "events.jsonl"),
    );
  if (agent === "codex") return codexRollouts(join(controlDir, CODEX_HOME_DIR, "sessions"));
  return [];
}

/** Directories (not symlinks) directly under `dir`, sorted; none when it is missing. */
async function realDirs(dir: string): Promise<string[]> {
  try {
    const entries = await readdir(dir, { withFileTypes: true });
    return entries
      .filter((e) => e.isDirectory())
      .map((e) => join(dir, e.name))
      .sort();
  } catch {
    return [];
  }
}

/** `sessions/YYYY/MM/DD/rollout-*.jsonl`, sorted. */
async function codexRollouts(sessions: string): Promise<string[]> {
  const out: string[] = [];
  for (const year of await realDirs(sessions))
    for (const month of await realDirs(year))
      for (const day of await realDirs(month)) {
        const names = await readdir(day).catch(() => [] as string[]);
        for (const name of names.sort())
          if (name.startsWith("rollout-") && name.endsWith(".jsonl")) out.push(join(day, name));
      }
  return out;
}

/**
 * At most `maxBytes` of a session file from byte `from` (a reader following a growing file), or
 * null when it is missing, not a regular file or a symlink (the agent writes the control dir).
 */
export async function readSessionFileFrom(
  path: string,
  from: number,
  maxBytes: number,
): Promise<Buffer | null> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW | fsConstants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) return null;
    const buffer = Buffer.alloc(Math.max(0, Math.min(stat.size - from, maxBytes)));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, from);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}
