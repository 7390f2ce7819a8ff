/**
 * Test fixtures shared by the packages' and services' tests (never by production code): a
 * unique Redis key prefix with its clean-up, a task card, a run job and a run result, and a count
 * of the event loop's turns while an operation runs. Postgres fixtures stay with
 * `createScratchDatabase` of `@overseer/db`.
 */
import { randomBytes } from "node:crypto";

import { createRedis, type Redis, type RunQueues } from "@overseer/queue";
import { RUN_JOB_VERSION, type RunJob, type RunResult } from "@overseer/run-contract";

/** The Redis the tests use (`REDIS_URL`, else the local one). */
export function testRedisUrl(): string {
  return process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
}

/** A connection to the test Redis. */
export function createTestRedis(): Redis {
  return createRedis(testRedisUrl());
}

/**
 * A key prefix no other test (or test run: `OVERSEER_TEST_RUN`) shares, so tests never see
 * each other's queues and the leak check can find what a test left behind.
 */
export function uniqueRedisPrefix(name: string): string {
  return `${process.env.OVERSEER_TEST_RUN ?? "local"}-${name}-${randomBytes(5).toString("hex")}`;
}

/**
 * Deletes every key under `prefix`, the queues' hash-tagged `{prefix}:` keys included (SCAN, so
 * it never blocks the shared Redis). On a Redis Cluster every primary is scanned and keys are
 * deleted one by one (they sit in different slots).
 */
export async function deleteRedisKeys(redis: Redis, prefix: string): Promise<void> {
  const nodes = redis.isCluster ? (redis as Extract<Redis, { nodes: unknown }>).nodes("master") : [redis];
  for (const node of nodes) {
    for (const pattern of [`${prefix}:*`, `{${prefix}}:*`]) {
      let cursor = "0";
      do {
        const [next, keys] = await node.scan(cursor, "MATCH", pattern, "COUNT", 500);
        cursor = next;
        if (redis.isCluster) for (const key of keys) await node.del(key);
        else if (keys.length > 0) await node.del(...keys);
      } while (cursor !== "0");
    }
  }
}

/**
 * Teardown of a rig's queues: empties and closes the run queue, deletes every key (the results stream among them)
 * under `prefix` and disconnects `redis`. Either may be missing (setup failed early); errors
 * are swallowed so that the rest of a teardown still runs.
 */
export async function dropRunQueues(
  queues: RunQueues | undefined,
  redis: Redis | undefined,
  prefix: string,
): Promise<void> {
  await queues?.runs.obliterate({ force: true }).catch(() => undefined);
  await queues?.close().catch(() => undefined);
  if (redis) await deleteRedisKeys(redis, prefix).catch(() => undefined);
  redis?.disconnect();
}

/** A valid run job of `/bin/true` for one run; `fields` override. */
export function runJobFixture(fields: Partial<RunJob> & Pick<RunJob, "runId">): RunJob {
  const taskId = fields.taskId ?? "S00-001";
  return {
    v: RUN_JOB_VERSION,
    kind: "run",
    projectId: "p",
    taskId,
    agentId: "execute-general-0123456789ab",
    action: "execute",
    role: "general",
    attempt: 1,
    pool: "default",
    repo: "/tmp/repo.git",
    mainBranch: "main",
    taskBranch: `overseer/task/${taskId}`,
    expectedTaskHead: null,
    prompt: "Do it",
    argv: ["/bin/true"],
    env: {},
    envAllow: [],
    secretValues: [],
    timeoutMs: 1000,
    idleTimeoutMs: 0,
    scope: ["**"],
    metadataGlobs: [".overseer/**"],
    gitCommits: true,
    author: { name: "A", email: "a@b" },
    hooks: {},
    files: {},
    sandbox: { pidsMax: 64, memoryMb: 256, cpuSeconds: 60, networkAllowHosts: [] },
    enqueuedAt: Date.now(),
    ...fields,
  };
}

/** A run result with nothing landed; `fields` override (the outcome above all). */
export function runResultFixture(
  fields: Partial<RunResult> & Pick<RunResult, "runId" | "outcome">,
): RunResult {
  return {
    v: RUN_JOB_VERSION,
    kind: "run-result",
    projectId: "p",
    workerId: "w",
    scopeViolations: [],
    commitSha: null,
    branchHead: null,
    landedSha: null,
    landedBranch: null,
    checkpointRef: null,
    exitCode: 0,
    signal: null,
    durationMs: 1,
    output: "",
    outputTruncated: false,
    timing: { enqueuedAt: 1, pickedAt: 2, spawnedAt: 3, exitedAt: 4, reportedAt: 5 },
    ...fields,
  };
}

export { buildDebianRootfs, type DebianRootfsInput } from "./debian-rootfs.ts";
export { countEventLoopTurns } from "./event-loop-turns.ts";
export {
  cancelTask,
  SUBMITTED_HEAD,
  tasksInReview,
  waitForLockWait,
  waitForRowLocksHeld,
} from "./fence-case.ts";
export type { WebhookDelivery, WebhookLoss } from "./forge-double/double-base.ts";
export { DoubleGit } from "./forge-double/double-git.ts";
export type { ApiRequest, Fault } from "./forge-double/double-server.ts";
export { serveGitHttp } from "./forge-double/git-http-backend.ts";
export { GiteaDouble } from "./forge-double/gitea-double.ts";
export type { GiteaDoubleUser, GiteaPull } from "./forge-double/gitea-double-state.ts";
export { GitHubDouble } from "./forge-double/github-double.ts";
export type { DoublePull, GitHubDoubleUser } from "./forge-double/github-double-state.ts";
export { GitLabDouble } from "./forge-double/gitlab-double.ts";
export type { GitLabDoubleUser, GitLabMr } from "./forge-double/gitlab-double-state.ts";
export {
  GITLAB_ISSUE_HOOK_EXAMPLE,
  GITLAB_ISSUE_NOTE_HOOK_EXAMPLE,
} from "./forge-double/gitlab-issue-examples.ts";
export { buildHostRootfs, type HostRootfsInput } from "./host-rootfs.ts";
export { type OpenedPullRequest, openPullRequest } from "./pull-request-case.ts";
export type { ResponseUrlMessage } from "./slack-double/slack-block-kit.ts";
export { type ReceivedResponse, SlackDouble, type SlackRequest } from "./slack-double/slack-double.ts";
export type { PostedMessage } from "./slack-double/slack-web-api.ts";
export { taskCard } from "./task-card.ts";
export { JiraDouble, type JiraDoubleIssue, type JiraDoubleUser } from "./tracker-double/jira-double.ts";
export { LinearDouble } from "./tracker-double/linear-double.ts";
export type { LinearDoubleIssue, LinearDoubleUser } from "./tracker-double/linear-double-state.ts";
export { type UntilOptions, until } from "./until.ts";
export { type ReceivedWebhook, WebhookReceiver } from "./webhook-receiver.ts";
