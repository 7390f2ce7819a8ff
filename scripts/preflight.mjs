#!/usr/bin/env node
// First thing `npm test` runs: checks every prerequisite of the suites at once and stops within
// seconds with one line per missing piece and the command that fixes it, instead of letting
// each suite time out on its own. Plain JavaScript on purpose: it must run (and say so) on a
// Node too old for the rest of the repository. Same variables as the suites: DATABASE_URL,
// REDIS_URL (defaults: the local servers).
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { createConnection } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const MIN_NODE = [20, 5];
const TIMEOUT_MS = 4000;
const DATABASE_URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

/** @typedef {{ name: string, problem?: string, fix?: string }} Check */

/** @returns {Promise<{ ok: boolean, stdout: string, stderr: string, missing: boolean }>} */
function run(file, args) {
  return new Promise((resolve) => {
    execFile(file, args, { timeout: TIMEOUT_MS }, (error, stdout, stderr) => {
      resolve({
        ok: !error,
        stdout: String(stdout),
        stderr: String(stderr),
        missing: error?.code === "ENOENT",
      });
    });
  });
}

/** @returns {Check} */
function checkNode() {
  const [major, minor] = process.versions.node.split(".").map(Number);
  const ok = major > MIN_NODE[0] || (major === MIN_NODE[0] && minor >= MIN_NODE[1]);
  return ok
    ? { name: "node" }
    : {
        name: "node",
        problem: `Node.js ${process.versions.node} is too old (needs ${MIN_NODE.join(".")} or later)`,
        fix: "install Node.js 20 or later (`nvm install 20`, or https://nodejs.org)",
      };
}

/** @returns {Check} */
function checkDependencies() {
  return existsSync(join(ROOT, "node_modules", ".package-lock.json"))
    ? { name: "dependencies" }
    : { name: "dependencies", problem: "node_modules is missing", fix: "npm ci" };
}

/** @returns {Promise<Check>} */
async function checkGit() {
  const r = await run("git", ["--version"]);
  return r.ok
    ? { name: "git" }
    : { name: "git", problem: "git is not on PATH", fix: "sudo apt-get install git" };
}

/** The sandbox suites need bubblewrap and the right to create user and pid namespaces. */
async function checkBwrap() {
  if (process.platform !== "linux") {
    return {
      name: "bwrap",
      problem: "the sandbox suites need Linux (bubblewrap)",
      fix: "run the tests on Linux",
    };
  }
  const version = await run("bwrap", ["--version"]);
  if (version.missing) {
    return { name: "bwrap", problem: "bubblewrap is missing", fix: "sudo apt-get install bubblewrap" };
  }
  const probe = await run("bwrap", [
    "--unshare-all",
    "--unshare-user",
    "--ro-bind",
    "/",
    "/",
    "--proc",
    "/proc",
    "--dev",
    "/dev",
    "true",
  ]);
  if (probe.ok) return { name: "bwrap" };
  return {
    name: "bwrap",
    problem: `bubblewrap cannot create a sandbox (${(probe.stderr.trim() || "no output").split("\n")[0]})`,
    fix: "sudo sysctl -w kernel.unprivileged_userns_clone=1 (Ubuntu 24.04+: also sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0)",
  };
}

/** Postgres must answer and the role must be allowed to create (scratch) databases. */
async function checkPostgres() {
  if (!existsSync(join(ROOT, "node_modules", "pg"))) return { name: "postgres" }; // reported by "dependencies"
  const { default: pg } = await import("pg");
  const url = new URL(DATABASE_URL);
  url.pathname = "/postgres";
  const where = `${url.hostname}:${url.port || 5432}`;
  const client = new pg.Client({ connectionString: url.toString(), connectionTimeoutMillis: TIMEOUT_MS });
  client.on("error", () => {});
  try {
    await client.connect();
    const {
      rows: [row],
    } = await client.query(
      "SELECT current_user AS role, rolcreatedb OR rolsuper AS can_create FROM pg_roles WHERE rolname = current_user",
    );
    if (row?.can_create) return { name: "postgres" };
    return {
      name: "postgres",
      problem: `role ${row?.role} on ${where} may not create databases (each suite makes its own scratch database)`,
      fix: `sudo -u postgres psql -c 'ALTER ROLE "${row?.role}" CREATEDB'`,
    };
  } catch (error) {
    const code = /** @type {{ code?: string }} */ (error).code;
    const message = /** @type {Error} */ (error).message;
    if (code === "28P01" || code === "28000") {
      return {
        name: "postgres",
        problem: `${where} refused the login (${message})`,
        fix: "fix the user or password in DATABASE_URL",
      };
    }
    return {
      name: "postgres",
      problem: `PostgreSQL is not reachable at ${where} (${message})`,
      fix: "sudo service postgresql start (or set DATABASE_URL to a running server)",
    };
  } finally {
    await client.end().catch(() => {});
  }
}

/** Redis must answer PING (raw protocol: no dependency needed). */
function checkRedis() {
  const url = new URL(REDIS_URL);
  const host = url.hostname || "127.0.0.1";
  const port = Number(url.port || 6379);
  const down = (reason) => ({
    name: "redis",
    problem: `Redis is not reachable at ${host}:${port} (${reason})`,
    fix: "sudo service redis-server start, or redis-server --daemonize yes (or set REDIS_URL to a running server)",
  });
  return new Promise((resolve) => {
    const socket = createConnection({ host, port });
    const finish = (check) => {
      socket.destroy();
      resolve(check);
    };
    socket.setTimeout(TIMEOUT_MS, () => finish(down("no answer")));
    socket.on("error", (error) => finish(down(error.code ?? error.message)));
    socket.on("connect", () => {
      const auth = url.password
        ? `AUTH ${url.username ? `${decodeURIComponent(url.username)} ` : ""}${decodeURIComponent(url.password)}\r\n`
        : "";
      socket.write(`${auth}PING\r\n`);
    });
    let answer = "";
    socket.on("data", (chunk) => {
      answer += chunk.toString();
      if (answer.includes("+PONG")) finish({ name: "redis" });
      else if (answer.startsWith("-")) finish(down(answer.split("\r\n")[0].slice(1)));
    });
  });
}

const started = performance.now();
const checks = [
  checkNode(),
  checkDependencies(),
  ...(await Promise.all([checkGit(), checkBwrap(), checkPostgres(), checkRedis()])),
];
const failed = checks.filter((c) => c.problem);
if (failed.length > 0) {
  for (const c of failed) console.error(`preflight: ${c.name}: ${c.problem} -> fix: ${c.fix}`);
  console.error(`preflight: ${failed.length} prerequisite(s) missing; nothing was run.`);
  process.exit(1);
}
console.log(
  `preflight: ${checks.map((c) => c.name).join(", ")} ok (${Math.round(performance.now() - started)} ms)`,
);
