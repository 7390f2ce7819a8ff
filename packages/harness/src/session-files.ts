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
  const paths =
    agent === "copilot"
      ? (await realDirs(join(controlDir, COPILOT_HOME_DIR, "session-state"))).map((dir) =>
          join(dir, "events.jsonl"),
        )
      : agent === "codex"
        ? await codexRollouts(join(controlDir, CODEX_HOME_DIR, "sessions"))
        : [];
  const texts: string[] = [];
  let left = maxBytes;
  for (const path of paths) {
    if (left <= 0) break;
    const text = await readBounded(path, left);
    if (text === null) continue;
    texts.push(text);
    left -= Buffer.byteLength(text);
  }
  return texts;
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
