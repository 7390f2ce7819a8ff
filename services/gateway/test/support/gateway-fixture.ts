import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import {
  applyTransition,
  createApiToken,
  createProject,
  createScratchDatabase,
  POSTGRES_NOTIFY_CHANNEL,
  type ScratchDatabase,
  sql,
} from "@overseer/db";
import type { OptionCommandInput, TaskCardInput } from "@overseer/domain";
import {
  LiveChannel,
  type Redis,
  RunQueues,
  resolveLiveOptions,
  resolveQueueOptions,
  WorkerRegistry,
} from "@overseer/queue";
import { createLogger, type Logger } from "@overseer/runtime";
import { createTestRedis, deleteRedisKeys, taskCard, uniqueRedisPrefix } from "@overseer/test-support";
import { importTasks, startProject, TransitionApplier } from "@overseer/transitions";
import { afterAll, beforeAll, expect } from "vitest";
import {
  createGatewayApp,
  type GatewayApp,
  type GatewayDeps,
  type GatewayOptions,
  type RunningGateway,
  resolveGatewayOptions,
  startGateway,
} from "../../src/index.ts";

/**
 * A gateway over a fresh scratch database, a random Redis key prefix and a temporary directory
 * (its data dir is `<tempDir>/gateway`), with one token per scope. Log lines are captured in
 * memory (tests check what is and is not logged).
 */
export interface GatewayFixture {
  readonly scratch: ScratchDatabase;
  /** Removed on close; tests may put repositories in it. */
  readonly tempDir: string;
  readonly redis: Redis;
  readonly prefix: string;
  readonly deps: GatewayDeps;
  readonly app: GatewayApp;
  readonly tokens: { read: string; operate: string; admin: string };
  readonly logLines: string[];
  request(method: string, path: string, init?: RequestOptions): Promise<ApiResponse>;
  close(): Promise<void>;
}

export interface RequestOptions {
  token?: string | null;
  body?: unknown;
  /** Sent as is (no JSON encoding, no content type unless given in headers). */
  rawBody?: string | Uint8Array;
  headers?: Record<string, string>;
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON answers
  body: any;
  text: string;
}

export const card = taskCard;

/**
 * `listen` (default true) gives the gateway the scratch database's notification listener, so it
 * LISTENs to transition notifications (status cache in `notify` mode, as in production).
 */
export async function createGatewayFixture(
  options: GatewayOptions = {},
  fixture: { listen?: boolean } = {},
): Promise<GatewayFixture> {
  const scratch = await createScratchDatabase();
  const tempDir = await mkdtemp(path.join(tmpdir(), "gwtest-"));
  const prefix = uniqueRedisPrefix("gwtest");
  const redis = createTestRedis();
  const logLines: string[] = [];
  const logger: Logger = createLogger({
    name: "gateway-test",
    level: "info",
    destination: new Writable({
      write(chunk, _enc, done) {
        logLines.push(String(chunk));
        done();
      },
    }),
  });
  const deps: GatewayDeps = {
    db: scratch.db,
    redis,
    queues: new RunQueues(redis, resolveQueueOptions({ prefix })),
    live: new LiveChannel(redis, resolveLiveOptions({ prefix })),
    registry: new WorkerRegistry(redis, prefix),
    logger,
    ...(fixture.listen === false ? {} : { notifications: scratch.notifications }),
  };
  const app = createGatewayApp(
    deps,
    resolveGatewayOptions({ processMetrics: false, dataDir: path.join(tempDir, "gateway"), ...options }),
  );
  const tokens = {
    read: (await createApiToken(scratch.db, { name: "reader", scope: "read" })).token,
    operate: (await createApiToken(scratch.db, { name: "operator", scope: "operate" })).token,
    admin: (await createApiToken(scratch.db, { name: "admin", scope: "admin" })).token,
  };
  return {
    scratch,
    tempDir,
    redis,
    prefix,
    deps,
    app,
    tokens,
    logLines,
    request: (method, path, init = {}) => send(app, method, path, init, tokens.admin),
    close: async () => {
      await app.shutdown();
      await deps.queues.close();
      await deleteKeys(redis, prefix);
      redis.disconnect();
      await scratch.drop();
      await rm(tempDir, { recursive: true, force: true });
    },
  };
}

/**
 * One fixture for the whole test file: created in `beforeAll`, closed in `afterAll`. The
 * returned object is filled in when `beforeAll` has run, so tests and later hooks use it as is.
 */
export function useGatewayFixture(
  options: GatewayOptions = {},
  fixture: { listen?: boolean } = {},
): GatewayFixture {
  const handle = {} as GatewayFixture;
  beforeAll(async () => {
    Object.assign(handle, await createGatewayFixture(options, fixture));
  });
  afterAll(async () => {
    await handle.close?.();
  });
  return handle;
}

/**
 * The fixture's gateway listening on a free port for the whole test file (streams need a real
 * HTTP server), with short SSE keep-alive and log-block intervals; closed in `afterAll`, before
 * the fixture (Vitest runs `afterAll` hooks in reverse order).
 */
export function useListeningGateway(fx: GatewayFixture): RunningGateway {
  const options: GatewayOptions = { port: 0, keepAliveMs: 300, logBlockMs: 200, processMetrics: false };
  const handle = {} as RunningGateway;
  beforeAll(async () => {
    Object.assign(handle, await startGateway(fx.deps, options));
  });
  afterAll(async () => {
    await handle.close?.();
  });
  return handle;
}

async function send(
  app: GatewayApp,
  method: string,
  path: string,
  init: RequestOptions,
  defaultToken: string,
): Promise<ApiResponse> {
  const headers: Record<string, string> = { ...(init.headers ?? {}) };
  const token = init.token === undefined ? defaultToken : init.token;
  if (token !== null) headers.Authorization = `Bearer ${token}`;
  let body: string | Uint8Array | undefined;
  if (init.rawBody !== undefined) body = init.rawBody;
  else if (init.body !== undefined) {
    body = JSON.stringify(init.body);
    headers["Content-Type"] ??= "application/json";
  }
  const res = await app.request(path, { method, headers, body });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: jsonOrNull(text), text };
}

/** The answer's JSON, or null when it is empty or not JSON (tests then read `text`). */
function jsonOrNull(text: string): unknown {
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

export const deleteKeys = deleteRedisKeys;

/** An active project with the given tasks. */
export async function seedProject(
  fixture: Pick<GatewayFixture, "scratch">,
  id: string,
  cards: TaskCardInput[] = [card("S00-001")],
  runnerConfig: Record<string, unknown> = {},
): Promise<void> {
  await createProject(fixture.scratch.db, {
    id,
    repo: "/tmp/none",
    runnerConfig,
    objective: `Objective of ${id}`,
  });
  const applier = new TransitionApplier({ db: fixture.scratch.db });
  await importTasks(applier, id, cards);
  await startProject(applier, id);
}

export interface RaisedQuestion {
  readonly taskId: string;
  readonly runId: string;
  readonly resolverId: string;
  readonly decisionId: string;
}

/**
 * Claims the next runnable task and escalates its run with `needsUser`: the task becomes
 * blocked and an awaiting_input resolver gets a pending card `decision-<resolver>`.
 */
export async function raiseQuestion(
  fixture: Pick<GatewayFixture, "scratch">,
  projectId: string,
  options: readonly OptionCommandInput[] = [
    { id: "use_postgres", label: "Use Postgres" },
    { id: "use_sqlite", label: "Use SQLite", requires_note: true },
  ],
  question = "Which database should we use?",
): Promise<RaisedQuestion> {
  const claimed = await applyTransition(fixture.scratch.db, projectId, { kind: "claim" });
  const run = claimed.changes.runs[0];
  if (!run) throw new Error(`nothing to claim in ${projectId}`);
  await applyTransition(fixture.scratch.db, projectId, {
    kind: "escalate",
    runId: run.id,
    reason: "The database choice is a product decision.",
    needsUser: true,
    question,
    options,
  });
  const resolverId = `${run.taskId}.R1`;
  return { taskId: run.taskId, runId: run.id, resolverId, decisionId: `decision-${resolverId}` };
}

/**
 * For the whole test file: project `projectId` seeded with S00-001 and S00-002, and a question
 * raised on the first (`raiseQuestion`); the returned object is filled in when `beforeAll` has run.
 */
export function useRaisedQuestion(fx: GatewayFixture, projectId: string): RaisedQuestion {
  const handle = {} as RaisedQuestion;
  beforeAll(async () => {
    await seedProject(fx, projectId, [card("S00-001"), card("S00-002")]);
    Object.assign(handle, await raiseQuestion(fx, projectId));
  });
  return handle;
}

/** Polls the project's status route until `check` holds (bounded) and answers the last status. */
export async function statusWhen(
  fx: GatewayFixture,
  projectId: string,
  // biome-ignore lint/suspicious/noExplicitAny: status JSON
  check: (status: any) => boolean,
): Promise<ApiResponse> {
  let last = await fx.request("GET", `/api/projects/${projectId}/status`, { token: fx.tokens.read });
  await expect
    .poll(
      async () => {
        last = await fx.request("GET", `/api/projects/${projectId}/status`, { token: fx.tokens.read });
        return check(last.body);
      },
      { timeout: 5000, interval: 20 },
    )
    .toBe(true);
  return last;
}

/**
 * Resolves once every notification committed so far reached the gateway: a marker sent now
 * arrives on the same LISTEN connection after them (Postgres delivers in commit order).
 */
export async function notificationsDelivered(fx: GatewayFixture): Promise<void> {
  let seen: () => void = () => {};
  const arrived = new Promise<void>((resolve) => (seen = resolve));
  const subscription = await fx.scratch.notifications.listen(POSTGRES_NOTIFY_CHANNEL, (payload) => {
    if (payload === "delivery-marker") seen();
  });
  try {
    await sql`SELECT pg_notify(${POSTGRES_NOTIFY_CHANNEL}, 'delivery-marker')`.execute(fx.scratch.db);
    await arrived;
  } finally {
    await subscription.unlisten();
  }
}
