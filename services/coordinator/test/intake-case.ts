/**
 * What the coordinator's intake and tracker tests share: a scratch database, Redis under a prefix
 * of their own, the GitHub double with the bot user and `acme/app`, an applier and an intake
 * queue, made before the file's cases and closed after them, and every double's violations
 * checked after each case. A file's own queues and runners come after `useIntakeCase` in its
 * hooks, so they close before Redis does.
 */
import {
  applyTransition,
  createIntakeSource,
  createScratchDatabase,
  type Db,
  type ScratchDatabase,
} from "@overseer/db";
import { IntakeQueue, type Redis } from "@overseer/queue";
import { createLogger, type Logger } from "@overseer/runtime";
import { createTestRedis, deleteRedisKeys, GitHubDouble, uniqueRedisPrefix } from "@overseer/test-support";
import { TransitionApplier } from "@overseer/transitions";
import { afterAll, afterEach, beforeAll, expect } from "vitest";
import { IntakeRunner, type IntakeRunnerDeps } from "../src/intake/intake-runner.ts";

export const REPO = "acme/app";
/** The variable intake sources name for the bot's token; `env` sets it. */
export const TOKEN_ENV = "OVERSEER_TEST_GITHUB_TOKEN";

export interface IntakeCase {
  readonly prefix: string;
  readonly logger: Logger;
  readonly bot: { readonly login: string; readonly token: string };
  /** The environment the runners read tokens from. */
  readonly env: Record<string, string>;
  readonly scratch: ScratchDatabase;
  readonly redis: Redis;
  readonly github: GitHubDouble;
  readonly transitions: TransitionApplier;
  readonly intakeQueue: IntakeQueue;
}

/** Registers the file's hooks; the fields are there from the first case on. */
export function useIntakeCase(name: string): IntakeCase {
  const bot = { login: "overseer-bot", token: `ghp_${name.replace(/\W/g, "_")}_bot` };
  const held: Partial<Record<keyof IntakeCase, unknown>> = {
    prefix: uniqueRedisPrefix(name),
    logger: createLogger({ name: `${name}-test`, level: "silent" }),
    bot,
    env: { [TOKEN_ENV]: bot.token },
  };
  beforeAll(async () => {
    held.scratch = await createScratchDatabase();
    const redis = createTestRedis();
    held.redis = redis;
    held.intakeQueue = new IntakeQueue(redis, { prefix: held.prefix as string, attempts: 2, backoffMs: 50 });
    held.transitions = new TransitionApplier({ db: (held.scratch as ScratchDatabase).db });
    const github = await GitHubDouble.start();
    held.github = github;
    github.addUser(bot);
    await github.createRepository(REPO);
  }, 60_000);
  afterAll(async () => {
    const c = held as Partial<IntakeCase>;
    await c.intakeQueue?.close();
    if (c.redis) await deleteRedisKeys(c.redis, held.prefix as string);
    c.redis?.disconnect();
    await c.scratch?.drop();
    await c.github?.close();
  });
  afterEach(() => {
    expect((held as Partial<IntakeCase>).github?.takeViolations()).toEqual([]);
  });
  return new Proxy(held, {
    get(target, key) {
      if (typeof key === "symbol") return undefined;
      if (!(key in target))
        throw new Error(`the intake case's ${key} is made in its beforeAll: use it in a case`);
      return target[key as keyof IntakeCase];
    },
  }) as IntakeCase;
}

/** A GitHub intake source of the project on the double: issues labelled `overseer`, assigned to the bot. */
export function githubSource(c: IntakeCase, id: string, projectId: string, tokenEnv = TOKEN_ENV) {
  return createIntakeSource(c.scratch.db, {
    id,
    projectId,
    kind: "github",
    baseUrl: c.github.url,
    query: { container: REPO, labels: ["overseer"], assignee: c.bot.login },
    config: {},
    tokenEnv,
    webhookSecretEnv: null,
    createdBy: "test",
  });
}

/** Claims the project's next run and starts it; its id. */
export async function claimAndStart(db: Db, projectId: string): Promise<string> {
  const run = (await applyTransition(db, projectId, { kind: "claim" })).changes.runs[0];
  if (!run) throw new Error("nothing claimed");
  await applyTransition(db, projectId, { kind: "run-started", runId: run.id, workerId: "w1" });
  return run.id;
}

/** An intake runner on the case's database, queue and Redis (not started); `deps` replaces any of its parts. */
export function intakeRunner(
  c: IntakeCase,
  deps: Partial<IntakeRunnerDeps> = {},
  concurrency = 1,
): IntakeRunner {
  return new IntakeRunner(
    {
      db: c.scratch.db,
      queue: c.intakeQueue,
      transitions: c.transitions,
      workerConnection: c.redis,
      logger: c.logger,
      env: c.env,
      ...deps,
    },
    // GitHub writes unpaced (OVERSEER_GITHUB_WRITE_INTERVAL_MS=0): the double sets no limit.
    { prefix: c.prefix, intakePollMs: 60_000, intakeConcurrency: concurrency, githubWriteIntervalMs: 0 },
  );
}
