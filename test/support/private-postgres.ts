/**
 * A throw-away PostgreSQL server on a free loopback port, for tests that stop or restart the
 * database. Never the shared server: its own data directory (initdb) in a temp dir, trust
 * auth for the `postgres` role, no fsync. As root it runs the server as the `postgres` user
 * (runuser), since initdb and postgres refuse to run as root.
 */
import { execFile } from "node:child_process";
import { chmod, chown, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { probeDatabase } from "@overseer/db";
import { freePort } from "./private-redis.ts";

const run = promisify(execFile);

export interface PrivatePostgres {
  /** Server URL (database `postgres`); pass it as the base URL of scratch databases. */
  url: string;
  port: number;
  /** Stops the server (fast shutdown: clients are disconnected, open transactions roll back). */
  stop(): Promise<void>;
  /** Starts it again on the same port and data directory; resolves once it accepts connections. */
  start(): Promise<void>;
  /** Stops the server for good and removes its data directory. */
  destroy(): Promise<void>;
}

async function binDir(): Promise<string> {
  const root = "/usr/lib/postgresql";
  const versions = (await readdir(root).catch(() => [] as string[]))
    .filter((v) => /^\d+$/.test(v))
    .sort((a, b) => Number(b) - Number(a));
  if (versions.length === 0)
    throw new Error(`no PostgreSQL server binaries under ${root}/*/bin; install the postgresql package`);
  return path.join(root, versions[0] as string, "bin");
}

export interface PrivatePostgresOptions {
  /** More server settings (`-c name=value`), e.g. `shared_preload_libraries: "pg_stat_statements"`. */
  settings?: Record<string, string>;
}

export async function startPrivatePostgres(opts: PrivatePostgresOptions = {}): Promise<PrivatePostgres> {
  const bin = await binDir();
  const dir = await mkdtemp(path.join(tmpdir(), "overseer-pg-"));
  const data = path.join(dir, "data");
  const port = await freePort();
  const asRoot = process.getuid?.() === 0;
  let uid = 0;
  let gid = 0;
  if (asRoot) {
    const { stdout } = await run("id", ["-u", "postgres"]);
    const { stdout: g } = await run("id", ["-g", "postgres"]);
    uid = Number(stdout.trim());
    gid = Number(g.trim());
    await chown(dir, uid, gid);
  }
  await chmod(dir, 0o700);
  const exec = (command: string, args: string[]) =>
    asRoot
      ? run("runuser", ["-u", "postgres", "--", path.join(bin, command), ...args], { cwd: dir })
      : run(path.join(bin, command), args, { cwd: dir });
  await exec("initdb", ["-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"]);
  const options = [
    `-p ${port}`,
    "-c listen_addresses=127.0.0.1",
    `-c unix_socket_directories=${dir}`,
    "-c fsync=off",
    "-c synchronous_commit=off",
    "-c full_page_writes=off",
    "-c max_connections=100",
    ...Object.entries(opts.settings ?? {}).map(([name, value]) => `-c ${name}=${value}`),
  ].join(" ");
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  let running = false;
  const start = async () => {
    await exec("pg_ctl", [
      "-D",
      data,
      "-o",
      options,
      "-l",
      path.join(dir, "server.log"),
      "-w",
      "-t",
      "60",
      "start",
    ]);
    running = true;
    await waitReady(url);
  };
  const stop = async () => {
    if (!running) return;
    await exec("pg_ctl", ["-D", data, "-m", "fast", "-w", "-t", "60", "stop"]);
    running = false;
  };
  await start();
  return {
    url,
    port,
    start,
    stop,
    destroy: async () => {
      await exec("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]).catch(() => undefined);
      running = false;
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function waitReady(url: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await probeDatabase(url, 5000);
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}
