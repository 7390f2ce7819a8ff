/**
 * What every `npm run test:deploy` scenario shares: the compose command, the gateway, Postgres
 * and the bind-mounted repository directory scripts/test-deploy.sh set up, and the operator's
 * tools (compose, docker, git, the CLI in the gateway container, the HTTP API).
 */
import { execFile } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import pg from "pg";

const run = promisify(execFile);

export function required(name: string): string {
  const value = process.env[name];
  if (!value)
    throw new Error(`${name} is not set: run this through npm run test:deploy (scripts/test-deploy.sh)`);
  return value;
}

export const COMPOSE = required("OVERSEER_DEPLOY_COMPOSE").split(" ");
export const GATEWAY = required("OVERSEER_DEPLOY_GATEWAY_URL");
export const DATABASE_URL = required("OVERSEER_DEPLOY_DATABASE_URL");
export const REPOS = required("OVERSEER_TEST_REPOS");
/** uid:gid of the `overseer` user in the image (infra/Dockerfile). */
export const IMAGE_USER = "10001:10001";
const started = Date.now();
export function progress(line: string): void {
  process.stdout.write(`[test:deploy +${Math.round((Date.now() - started) / 1000)}s] ${line}\n`);
}

export async function sh(file: string, args: string[], timeoutMs = 300_000): Promise<string> {
  try {
    const { stdout } = await run(file, args, { timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 });
    return stdout;
  } catch (error) {
    const e = error as Error & { stdout?: string; stderr?: string };
    throw new Error(`${file} ${args.join(" ")} failed: ${e.message}\n${e.stdout ?? ""}${e.stderr ?? ""}`);
  }
}

export const compose = (args: string[], timeoutMs?: number) =>
  sh(COMPOSE[0] as string, [...COMPOSE.slice(1), ...args], timeoutMs);
export const docker = (args: string[], timeoutMs?: number) => sh("docker", args, timeoutMs);
export const git = (args: string[], cwd?: string) =>
  sh("git", ["-c", "safe.directory=*", ...(cwd ? ["-C", cwd] : []), ...args]);

/** `overseer …` inside the running gateway container (the documented operator path, infra/README.md). */
export const cli = (args: string[]) =>
  compose(["exec", "-T", "gateway", "node", "dist/overseer.js", ...args]);

let token = "";
/** The admin token every `api` call sends (made by the first scenario). */
export function setToken(value: string): void {
  token = value;
}
export async function api(method: string, route: string, body?: unknown, contentType = "application/json") {
  const response = await fetch(`${GATEWAY}${route}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { "content-type": contentType }),
    },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${route}: ${response.status} ${text}`);
  return text === "" ? null : JSON.parse(text);
}

const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 2, connectionTimeoutMillis: 10_000 });
// An idle connection dies with the Postgres restart; the pool drops it and the next query reconnects.
pool.on("error", () => undefined);

export async function sql<Row extends pg.QueryResultRow>(
  text: string,
  params: unknown[] = [],
): Promise<Row[]> {
  return (await pool.query<Row>(text, params)).rows;
}

/** Health (or state, for a container without a health check) of a container. */
export async function containerHealth(id: string): Promise<string> {
  return (
    await docker([
      "inspect",
      "--format",
      "{{if .State.Health}}{{.State.Health.Status}}{{else}}{{.State.Status}}{{end}}",
      id,
    ])
  ).trim();
}

/** Ends the Postgres pool (afterAll). */
export async function closeDatabase(): Promise<void> {
  await pool.end();
}

/** A bare repository `<REPOS>/<name>.git` with one commit on main (a README and `files`), owned by the image's user. */
export async function bareRepo(
  scratch: string,
  name: string,
  files: Record<string, string> = {},
): Promise<string> {
  const seed = path.join(scratch, `${name}-work`);
  const repo = path.join(REPOS, `${name}.git`);
  await git(["init", "-q", "-b", "main", seed]);
  for (const [file, content] of Object.entries({ "README.md": `# ${name}\n`, ...files })) {
    await mkdir(path.dirname(path.join(seed, file)), { recursive: true });
    await writeFile(path.join(seed, file), content);
  }
  await git(["add", "-A"], seed);
  await git(
    ["-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "-m", "Initial"],
    seed,
  );
  await git(["clone", "-q", "--bare", seed, repo]);
  await sh("chown", ["-R", IMAGE_USER, repo]);
  return repo;
}
