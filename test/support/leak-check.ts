import { randomBytes } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync } from "node:fs";
import { join } from "node:path";
import { createScratchTemplate, dropDatabase, SCRATCH_TEMPLATE_ENV, withDatabase } from "@overseer/db";
import { isProcessAlive } from "@overseer/process";
import { createRedis } from "@overseer/queue";
import pg from "pg";

/**
 * Vitest global setup (vitest.config.ts): every `vitest run` fails when a test leaves behind a
 * process, a Postgres scratch database or connection, or a Redis key.
 *
 * Attribution, so that other test runs sharing the machine never count as our leaks:
 * - `OVERSEER_TEST_RUN` (a random tag) is exported to every test worker and inherited by what
 *   they spawn. Scratch databases are named `overseer_test_<tag>…` (packages/db
 *   scratch-database.ts) and test fixtures start their Redis key prefixes with the tag.
 * - `TMPDIR` points at a directory of this run, so checkouts, data dirs and run directories of
 *   every test live under it. A process whose cwd or command line is inside it, or whose
 *   environment carries the tag, belongs to this run (harness and sandbox processes get a cleared
 *   environment, so the environment alone is not enough).
 *
 * It also migrates, once, the template every scratch database of the run is copied from (running
 * the migrations for each one was most of its cost); the template carries the tag and is dropped
 * before the databases are checked.
 *
 * At teardown the leftovers are listed (processes get a few seconds to finish exiting), cleaned
 * up, and the run fails with one line per leak. New fixtures: name Redis prefixes
 * `${process.env.OVERSEER_TEST_RUN}-…` and create temporary files under os.tmpdir().
 */

const RUN_ENV = "OVERSEER_TEST_RUN";
const DATABASE_URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
/** How long leftover processes get to finish exiting before they count as leaks. */
const PROCESS_GRACE_MS = 10_000;

/** Marks the vitest process whose run is already checked (the root and each project call setup). */
const CHECKED = Symbol.for("overseer.leak-check");

export default async function setup(): Promise<() => Promise<void>> {
  const holder = globalThis as { [CHECKED]?: true };
  if (holder[CHECKED]) return async () => undefined;
  holder[CHECKED] = true;
  const tag = `r${randomBytes(4).toString("hex")}`;
  const root = join("/tmp", `ovt-${tag}`);
  mkdirSync(root, { recursive: true });
  process.env[RUN_ENV] = tag;
  process.env.TMPDIR = root;
  const template = await createScratchTemplate(DATABASE_URL);
  process.env[SCRATCH_TEMPLATE_ENV] = template.url;
  return async () => {
    await template.drop();
    const leaks = [
      ...(await leakedProcesses(tag, root)),
      ...(await leakedDatabases(tag)),
      ...(await leakedRedisKeys(tag)),
    ];
    rmSync(root, { recursive: true, force: true });
    if (leaks.length > 0) {
      // Vitest reports an error thrown here but keeps its exit code, so the failure is set as well.
      process.exitCode = 1;
      throw new Error(
        `tests leaked ${leaks.length} resource(s) (see test/support/leak-check.ts):\n${leaks.join("\n")}`,
      );
    }
  };
}

/** Processes of this run still alive after the grace period; they are then killed. */
async function leakedProcesses(tag: string, root: string): Promise<string[]> {
  const deadline = Date.now() + PROCESS_GRACE_MS;
  let found = processesOfRun(tag, root);
  while (found.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    found = processesOfRun(tag, root);
  }
  for (const p of found) {
    try {
      process.kill(p.pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  }
  return found.map((p) => `process ${p.pid} still running: ${p.cmdline.slice(0, 200)}`);
}

function processesOfRun(tag: string, root: string): { pid: number; cmdline: string }[] {
  const marker = `${RUN_ENV}=${tag}`;
  const found: { pid: number; cmdline: string }[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (pid === process.pid || !isProcessAlive(pid)) continue;
    const cmdline = readProc(pid, "cmdline").replaceAll("\0", " ").trim();
    // The test workers themselves (vitest's forks) are children of this process.
    if (/vitest/.test(cmdline) && parentOf(pid) === process.pid) continue;
    const environ = readProc(pid, "environ").split("\0");
    let cwd = "";
    try {
      cwd = readlinkSync(`/proc/${pid}/cwd`);
    } catch {
      // Gone, or not ours to read.
    }
    if (environ.includes(marker) || cwd === root || cwd.startsWith(`${root}/`) || cmdline.includes(root)) {
      found.push({ pid, cmdline });
    }
  }
  return found;
}

function readProc(pid: number, file: string): string {
  try {
    return readFileSync(`/proc/${pid}/${file}`, "utf8");
  } catch {
    return "";
  }
}

function parentOf(pid: number): number {
  const stat = readProc(pid, "stat");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
}

/** Scratch databases of this run that were not dropped, and connections to them; both are removed. */
async function leakedDatabases(tag: string): Promise<string[]> {
  const admin = new pg.Client({ connectionString: withDatabase(DATABASE_URL, "postgres") });
  await admin.connect();
  try {
    const { rows } = await admin.query<{ datname: string; connections: number }>(
      `SELECT d.datname, (SELECT count(*)::int FROM pg_stat_activity a WHERE a.datname = d.datname) AS connections
         FROM pg_database d WHERE d.datname LIKE $1 ORDER BY d.datname`,
      [`%\\_${tag}\\_%`],
    );
    for (const { datname } of rows) await dropDatabase(withDatabase(DATABASE_URL, datname));
    return rows.map((row) => `database ${row.datname} not dropped (${row.connections} open connection(s))`);
  } finally {
    await admin.end();
  }
}

/** Redis keys under this run's prefixes; they are deleted. */
async function leakedRedisKeys(tag: string): Promise<string[]> {
  const redis = createRedis(REDIS_URL, { maxRetriesPerRequest: 1 });
  try {
    const keys: string[] = [];
    // Queue keys carry their prefix as a hash tag ({prefix}:…), the others plainly (prefix:…).
    for (const pattern of [`${tag}-*`, `{${tag}-*`]) {
      let cursor = "0";
      do {
        const [next, batch] = await redis.scan(cursor, "MATCH", pattern, "COUNT", 1000);
        cursor = next;
        keys.push(...batch);
      } while (cursor !== "0");
    }
    if (keys.length > 0) await redis.del(...keys);
    const prefixes = [...new Set(keys.map((k) => k.split(":")[0]?.replace(/^\{|\}$/g, "")))].sort();
    return prefixes.map(
      (p) =>
        `redis keys left under prefix ${p} (${keys.filter((k) => k.startsWith(`${p}:`) || k.startsWith(`{${p}}:`)).length})`,
    );
  } finally {
    redis.disconnect();
  }
}
