import { createApiToken, createScratchDatabase, type ScratchDatabase } from "@overseer/db";
import { type RunningGateway, startGateway } from "@overseer/gateway";
import {
  LiveChannel,
  type Redis,
  RunQueues,
  resolveLiveOptions,
  resolveQueueOptions,
  WorkerRegistry,
} from "@overseer/queue";
import { createLogger } from "@overseer/runtime";
import { createTestRedis, deleteRedisKeys, uniqueRedisPrefix } from "@overseer/test-support";
import type { CliIo } from "../src/cli-io.ts";
import { runCli } from "../src/cli-main.ts";

/**
 * The preamble of the CLI tests that talk to a gateway: a real listening gateway over a scratch
 * database and its own Redis key prefix, one API token per scope, and the CLI run in process
 * with its lines captured.
 */

export type TokenScope = "read" | "operate" | "admin";

export interface CliGateway {
  readonly scratch: ScratchDatabase;
  readonly redis: Redis;
  readonly queues: RunQueues;
  readonly live: LiveChannel;
  readonly gateway: RunningGateway;
  /** One token per scope. */
  readonly tokens: Record<TokenScope, string>;
  /** Stops the gateway, removes the Redis keys and drops the database. */
  close(): Promise<void>;
}

export async function startCliGateway(
  name: string,
  tokenName: (scope: TokenScope) => string = (scope) => scope,
): Promise<CliGateway> {
  const scratch = await createScratchDatabase();
  const prefix = uniqueRedisPrefix(name);
  const redis = createTestRedis();
  const queues = new RunQueues(redis, resolveQueueOptions({ prefix }));
  const live = new LiveChannel(redis, resolveLiveOptions({ prefix }));
  const gateway = await startGateway(
    {
      db: scratch.db,
      redis,
      queues,
      live,
      registry: new WorkerRegistry(redis, prefix),
      logger: createLogger({ name, level: "silent" }),
    },
    { port: 0, processMetrics: false, logBlockMs: 200 },
  );
  const tokens = { read: "", operate: "", admin: "" };
  for (const scope of ["read", "operate", "admin"] as const)
    tokens[scope] = (await createApiToken(scratch.db, { name: tokenName(scope), scope })).token;
  return {
    scratch,
    redis,
    queues,
    live,
    gateway,
    tokens,
    async close() {
      await gateway.close();
      await queues.close();
      await deleteRedisKeys(redis, prefix);
      redis.disconnect();
      await scratch.drop();
    },
  };
}

export interface CliResult {
  code: number;
  out: string;
  err: string;
}

/** Runs the CLI in process with this environment; stdout and stderr lines joined. */
export async function runCapturedCli(
  args: string[],
  env: NodeJS.ProcessEnv,
  options: { cwd?: string; color?: boolean } = {},
): Promise<CliResult> {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = {
    out: (line) => out.push(line),
    err: (line) => err.push(line),
    env,
    cwd: options.cwd ?? process.cwd(),
    ...(options.color ? { color: true, outStyled: (line: string) => out.push(line) } : {}),
  };
  const code = await runCli(args, io);
  return { code, out: out.join("\n"), err: err.join("\n") };
}
