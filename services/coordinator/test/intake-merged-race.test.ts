/**
 * A person merges a task's pull request, then closes its issue by hand before Overseer's poll of
 * the pull request saw the merge: intake, reading the closed issue, asks the forge first and
 * records the merge (the task is done) instead of cancelling the task. An issue closed while the
 * pull request is still open cancels the task as before, and an operator's cancel just after a
 * merge records the merge rather than closing the merged pull request. Real Postgres and Redis
 * (BullMQ), the GitHub double (every request and answer checked against @octokit/openapi) for
 * the issues and the pull requests, the coordinator's forge runner and intake runner wired as
 * it wires them.
 */
import {
  applyTransition,
  createIntakeSource,
  createProject,
  createScratchDatabase,
  getIntakeItem,
  getPullRequestRow,
  getTask,
  type ScratchDatabase,
} from "@overseer/db";
import { ForgeQueue, IntakeQueue, type Redis } from "@overseer/queue";
import { createLogger } from "@overseer/runtime";
import { createTestRedis, deleteRedisKeys, GitHubDouble, uniqueRedisPrefix } from "@overseer/test-support";
import { startProject, TransitionApplier } from "@overseer/transitions";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ForgeRunner } from "../src/forge/forge-runner.ts";
import { IntakeRunner } from "../src/intake/intake-runner.ts";
import { ProjectPolicies } from "../src/project-policy.ts";

const REPO = "acme/app";
const BOT = { login: "overseer-bot", token: "ghp_merged_race_bot" };
const prefix = uniqueRedisPrefix("intake-merged");
const logger = createLogger({ name: "intake-merged-test", level: "silent" });
const env = { OVERSEER_TEST_GITHUB_TOKEN: BOT.token };

let scratch: ScratchDatabase;
let redis: Redis;
let intakeQueue: IntakeQueue;
let forgeQueue: ForgeQueue;
let github: GitHubDouble;
let transitions: TransitionApplier;
let forge: ForgeRunner;
let intake: IntakeRunner;

beforeAll(async () => {
  scratch = await createScratchDatabase();
  redis = createTestRedis();
  intakeQueue = new IntakeQueue(redis, { prefix, attempts: 2, backoffMs: 50 });
  forgeQueue = new ForgeQueue(redis, { prefix });
  transitions = new TransitionApplier({ db: scratch.db });
  github = await GitHubDouble.start();
  github.addUser(BOT);
  await github.createRepository(REPO);
  forge = new ForgeRunner(
    {
      db: scratch.db,
      transitions,
      queue: forgeQueue,
      workerConnection: redis,
      policies: new ProjectPolicies(),
      logger,
    },
    { prefix, concurrency: 1, retryBaseMs: 20, dashboardUrl: null },
  );
  // As the coordinator wires them (coordinator.ts).
  intake = new IntakeRunner(
    {
      db: scratch.db,
      queue: intakeQueue,
      transitions,
      workerConnection: redis,
      logger,
      env,
      mergedOnForge: (projectId, taskId) => forge.recordMergeIfMerged(projectId, taskId),
    },
    { prefix, intakePollMs: 60_000, intakeConcurrency: 1 },
  );
}, 60_000);

afterAll(async () => {
  await intakeQueue?.close();
  await forgeQueue?.queue.close();
  if (redis) await deleteRedisKeys(redis, prefix);
  redis?.disconnect();
  await scratch?.drop();
  await github?.close();
});

afterEach(() => {
  expect(github.takeViolations()).toEqual([]);
});

/** Claims the next run and starts it; its id. */
async function claimAndStart(projectId: string): Promise<string> {
  const run = (await applyTransition(scratch.db, projectId, { kind: "claim" })).changes.runs[0];
  if (!run) throw new Error("nothing claimed");
  await applyTransition(scratch.db, projectId, { kind: "run-started", runId: run.id, workerId: "w1" });
  return run.id;
}

/**
 * A pull_request project on the double with an intake source; its issue taken as a task, which
 * is executed, approved and waits on its pull request, opened on the double by the forge runner.
 */
async function taskWithOpenPull(projectId: string) {
  await createProject(scratch.db, {
    id: projectId,
    repo: "/tmp/none",
    objective: "o",
    runnerConfig: {
      argv: ["true"],
      landing: { mode: "pull_request", pull_request: { poll_seconds: 0 } },
      forge: { kind: "github", url: github.url, repository: REPO, token: BOT.token },
    },
  });
  const sourceId = `gh-${projectId}`;
  await createIntakeSource(scratch.db, {
    id: sourceId,
    projectId,
    kind: "github",
    baseUrl: github.url,
    query: { container: REPO, labels: ["overseer"], assignee: BOT.login },
    config: {},
    tokenEnv: "OVERSEER_TEST_GITHUB_TOKEN",
    webhookSecretEnv: null,
    createdBy: "test",
  });
  const issue = github.openIssue(REPO, {
    title: `Work ${projectId}`,
    labels: ["overseer"],
    assignees: [BOT.login],
  });
  const read = { v: 1, kind: "read", sourceId, issueId: String(issue) };
  await intake.process(read);
  await startProject(transitions, projectId);
  const taskId = `acme-app-${issue}`;
  const branch = `overseer/pr/${taskId}`;
  await github.git.git(REPO, ["branch", branch, "main"]);
  const head = await github.git.commitFiles(REPO, branch, { [`${projectId}.txt`]: "work\n" }, "The work");
  const execute = await claimAndStart(projectId);
  await applyTransition(scratch.db, projectId, {
    kind: "submit",
    runId: execute,
    message: "work",
    commitSha: head,
    branchHead: head,
  });
  const review = await claimAndStart(projectId);
  await applyTransition(scratch.db, projectId, {
    kind: "approve",
    runId: review,
    feedback: "Looks right",
    landedSha: head,
    landedBranch: branch,
    reviewedHead: head,
    pullRequest: { base: "main" },
  });
  await forge.process({ v: 1, kind: "ensure", projectId, taskId, headSha: head });
  const row = await getPullRequestRow(scratch.db, projectId, taskId);
  if (row?.status !== "open" || row.number === null) throw new Error("the pull request did not open");
  expect((await getTask(scratch.db, projectId, taskId))?.status).toBe("pr_open");
  return { issue, read, sourceId, taskId, number: row.number };
}

describe("intake, an issue closed by hand right after its pull request merged", () => {
  it("records the merge (the task is done) instead of cancelling the task", async () => {
    const { issue, read, sourceId, taskId, number } = await taskWithOpenPull("merged-first");
    const mergeSha = await github.mergeByHuman(REPO, number, "octocat");
    await github.changeIssue(REPO, issue, { state: "closed", login: "octocat" });

    // No poll of the pull request ran: intake reads the closed issue first.
    await intake.process(read);
    const task = await getTask(scratch.db, "merged-first", taskId);
    expect(task?.status).toBe("done");
    expect(await getPullRequestRow(scratch.db, "merged-first", taskId)).toMatchObject({
      status: "merged",
      merge_commit_sha: mergeSha,
      merged_by: "octocat",
    });
    expect((await getIntakeItem(scratch.db, sourceId, String(issue)))?.cancelled_at).toBeNull();
    expect(github.pulls(REPO).find((p) => p.number === number)?.state).toBe("closed");
    // Read again (a redelivery, the next poll): nothing more.
    await intake.process(read);
    expect((await getTask(scratch.db, "merged-first", taskId))?.status).toBe("done");
  });

  it("still cancels the task of an issue closed while its pull request is open", async () => {
    const { issue, read, sourceId, taskId, number } = await taskWithOpenPull("closed-open");
    await github.changeIssue(REPO, issue, { state: "closed", login: "octocat" });
    await intake.process(read);
    expect((await getTask(scratch.db, "closed-open", taskId))?.status).toBe("cancelled");
    expect((await getIntakeItem(scratch.db, sourceId, String(issue)))?.cancelled_at).not.toBeNull();
    // The cancel's close job closes it on the forge, recorded closed.
    await forge.process({ v: 1, kind: "close", projectId: "closed-open", taskId, number });
    expect(github.pulls(REPO).find((p) => p.number === number)?.state).toBe("closed");
    expect((await getPullRequestRow(scratch.db, "closed-open", taskId))?.status).toBe("closed");
  });
});

describe("an operator's cancel of a task whose pull request merged just before", () => {
  it("records the merge, not a close: the forge runner reads the pull request before closing it", async () => {
    const { taskId, number } = await taskWithOpenPull("cancel-merged");
    const mergeSha = await github.mergeByHuman(REPO, number, "octocat");
    await transitions.apply("cancel-merged", { kind: "cancel", taskId, by: "operator" });
    await forge.process({ v: 1, kind: "close", projectId: "cancel-merged", taskId, number });
    expect((await getTask(scratch.db, "cancel-merged", taskId))?.status).toBe("cancelled");
    expect(await getPullRequestRow(scratch.db, "cancel-merged", taskId)).toMatchObject({
      status: "merged",
      merge_commit_sha: mergeSha,
    });
  });
});
