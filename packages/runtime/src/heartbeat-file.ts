import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";

/**
 * Liveness for container health checks without an HTTP port: each service rewrites a small
 * JSON file on a timer (`<OVERSEER_DATA_DIR>/health/<service>.json`, or `OVERSEER_HEALTH_FILE`)
 * and `node dist/healthcheck.js <service>` — or a shell `find FILE -newermt '-15 seconds'` —
 * says whether it is fresh. A blocked event loop or a hung process stops the rewrites.
 *
 * Node built-ins only: the health check imports this file alone (`@overseer/runtime/heartbeat-file`),
 * so a probe starts no npm dependency.
 */

export const HEALTH_SERVICES = ["coordinator", "gateway", "worker"] as const;
export type HealthService = (typeof HEALTH_SERVICES)[number];

export interface HeartbeatRecord {
  service: string;
  pid: number;
  /** Epoch ms of the last write. */
  at: number;
  /** The writer's period: the file is stale after a few of these. */
  interval_ms: number;
}

/** Periods without a write after which the file counts as stale (unless a max age is given). */
export const STALE_AFTER_INTERVALS = 3;

/** `OVERSEER_HEALTH_FILE` when set, else `<OVERSEER_DATA_DIR or ./.overseer-data>/health/<service>.json`. */
export function healthFilePath(service: string, env: NodeJS.ProcessEnv = process.env): string {
  const explicit = env.OVERSEER_HEALTH_FILE?.trim();
  if (explicit) return path.resolve(explicit);
  const dataDir = env.OVERSEER_DATA_DIR?.trim() || "./.overseer-data";
  return path.resolve(dataDir, "health", `${service}.json`);
}

export interface HeartbeatFile {
  readonly file: string;
  /** Writes once now (also done on every tick). */
  beat(): void;
  /** Stops the timer and removes the file. */
  stop(): void;
}

/**
 * Writes the heartbeat now and every `intervalMs` (atomic rename; the timer does not hold the
 * process). The first write is synchronous (the file exists when this returns); the timer's
 * writes go through the libuv thread pool, one at a time, so a slow disk never stalls the event
 * loop: on a loaded 2-core machine the gateway's renameSync took ~80 ms of its event loop per beat
 * (~5 % of its busy time under npm run bench:gateway-load), the longest of its stalls.
 */
export function startHeartbeatFile(options: {
  file: string;
  service: string;
  intervalMs: number;
}): HeartbeatFile {
  const { file, service, intervalMs } = options;
  mkdirSync(path.dirname(file), { recursive: true });
  const temp = `${file}.${process.pid}.tmp`;
  const text = () =>
    `${JSON.stringify({ service, pid: process.pid, at: Date.now(), interval_ms: intervalMs } satisfies HeartbeatRecord)}\n`;
  const beat = () => {
    try {
      writeFileSync(temp, text());
      renameSync(temp, file);
    } catch {
      // A full or read-only disk makes the check fail by staleness, which is the right answer.
    }
  };
  let stopped = false;
  let writing = false;
  const tick = async () => {
    if (writing || stopped) return;
    writing = true;
    try {
      await writeFile(temp, text());
      await rename(temp, file);
    } catch {
      // As in `beat`.
    } finally {
      writing = false;
      // A write that was under way when the heartbeat stopped must not leave a file behind.
      if (stopped) await removeFiles(file, temp);
    }
  };
  beat();
  const timer = setInterval(() => void tick(), intervalMs);
  timer.unref();
  return {
    file,
    beat,
    stop: () => {
      stopped = true;
      clearInterval(timer);
      rmSync(file, { force: true });
      rmSync(temp, { force: true });
    },
  };
}

async function removeFiles(...files: string[]): Promise<void> {
  for (const f of files) await rm(f, { force: true }).catch(() => undefined);
}

export type HeartbeatVerdict =
  | { ok: true; ageMs: number; record: HeartbeatRecord }
  | { ok: false; reason: string };

/** Whether `file` was written within `maxAgeMs` (default: {@link STALE_AFTER_INTERVALS} of its own period). */
export function checkHeartbeatFile(
  file: string,
  options: { maxAgeMs?: number; now?: number } = {},
): HeartbeatVerdict {
  let record: HeartbeatRecord;
  try {
    record = JSON.parse(readFileSync(file, "utf8")) as HeartbeatRecord;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return {
      ok: false,
      reason: code === "ENOENT" ? `no heartbeat file at ${file}` : `unreadable heartbeat file ${file}`,
    };
  }
  if (typeof record?.at !== "number" || typeof record.interval_ms !== "number") {
    return { ok: false, reason: `heartbeat file ${file} is not a heartbeat record` };
  }
  const maxAgeMs = options.maxAgeMs ?? STALE_AFTER_INTERVALS * record.interval_ms;
  const ageMs = (options.now ?? Date.now()) - record.at;
  if (ageMs > maxAgeMs) {
    return {
      ok: false,
      reason: `${record.service} (pid ${record.pid}) last beat ${ageMs} ms ago (limit ${maxAgeMs} ms)`,
    };
  }
  return { ok: true, ageMs, record };
}
