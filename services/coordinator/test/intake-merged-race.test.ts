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
import { applyTransition, createProject, getIntakeItem, getPullRequestRow, getTask } from "@overseer/db";
import { ForgeQueue } from "@overseer/queue";
import { startProject } from "@overseer/transitions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ForgeRunner } from "../src/forge/forge-runner.ts";
import type { IntakeRunner } from "../src/intake/intake-runner.ts";
import { ProjectPolicies } from "../src/project-policy.ts";
import { claimAndStart, githubSource, intakeRunner, REPO, useIntakeCase } from "./intake-case.ts";

const c = useIntakeCase("intake-merged");
let forgeQueue: ForgeQueue;
let forge: ForgeRunner;
let intake: IntakeRunner;

beforeAll(() => {
  forgeQueue = new ForgeQueue(c.redis, { prefix: c.prefix });
  forge = new ForgeRunner(
    {
      db: c.scratch.db,
      transitions: c.transitions,
      queue: forgeQueue,
      workerConnection: c.redis,
      policies: new ProjectPolicies(),
      logger: c.logger,
    },
    { prefix: c.prefix, concurrency: 1, retryBaseMs: 20, dashboardUrl: null },
  );
  // As the coordinator wires them (coordinator.ts).
  intake = intakeRunner(c, {
    mergedOnForge: (projectId, taskId) => forge.recordMergeIfMerged(projectId, taskId),
  });
});

afterAll(async () => {
  await forgeQueue?.queue.close();
});

/**
 * A pull_request project on the double with an intake source; its issue taken as a task, which
 * is executed, approved and waits on its pull request, opened on the double by the forge runner.
 */
async function taskWithOpenPull(projectId: string) {
  await createProject(c.scratch.db, {
    id: projectId,
    repo: "/tmp/none",
    objective: "o",
    runnerConfig: {
      argv: ["true"],
      landing: { mode: "pull_request", pull_request: { poll_seconds: 0 } },
      forge: { kind: "github", url: c.github.url, repository: REPO, token: c.bot.token },
    },
  });
  const sourceId = `gh-${projectId}`;
  await githubSource(c, sourceId, projectId);
  const issue = c.github.openIssue(REPO, {
    title: `Work ${projectId}`,
    labels: ["overseer"],
    assignees: [c.bot.login],
  });
  const read = { v: 1, kind: "read", sourceId, issueId: String(issue) };
  await intake.process(read);
  await startProject(c.transitions, projectId);
  const taskId = `acme-app-${issue}`;
  const branch = `overseer/pr/${taskId}`;
  await c.github.git.git(REPO, ["branch", branch, "main"]);
  const head = await c.github.git.commitFiles(REPO, branch, { [`${projectId}.txt`]: "work\n" }, "The work");
  const execute = await claimAndStart(c.scratch.db, projectId);
  await applyTransition(c.scratch.db, projectId, {
    kind: "submit",
    runId: execute,
    message: "work",
    commitSha: head,
    branchHead: head,
  });
  const review = await claimAndStart(c.scratch.db, projectId);
  await applyTransition(c.scratch.db, projectId, {
    kind: "approve",
    runId: review,
    feedback: "Looks right",
    landedSha: head,
    landedBranch: branch,
    reviewedHead: head,
    pullRequest: { base: "main" },
  });
  await forge.process({ v: 1, kind: "ensure", projectId, taskId, headSha: head });
  const row = await getPullRequestRow(c.scratch.db, projectId, taskId);
  if (row?.status !== "open" || row.number === null) throw new Error("the pull request did not open");
  expect((await getTask(c.scratch.db, projectId, taskId))?.status).toBe("pr_open");
  return { issue, read, sourceId, taskId, number: row.number };
}

describe("intake, an issue closed by hand right after its pull request merged", () => {
  it("records the merge (the task is done) instead of cancelling the task", async () => {
    const { issue, read, sourceId, taskId, number } = await taskWithOpenPull("merged-first");
    const mergeSha = await c.github.mergeByHuman(REPO, number, "octocat");
    await c.github.changeIssue(REPO, issue, { state: "closed", login: "octocat" });

    // No poll of the pull request ran: intake reads the closed issue first.
    await intake.process(read);
    const task = await getTask(c.scratch.db, "merged-first", taskId);
    expect(task?.status).toBe("done");
    expect(await getPullRequestRow(c.scratch.db, "merged-first", taskId)).toMatchObject({
      status: "merged",
      merge_commit_sha: mergeSha,
      merged_by: "octocat",
    });
    expect((await getIntakeItem(c.scratch.db, sourceId, String(issue)))?.cancelled_at).toBeNull();
    expect(c.github.pulls(REPO).find((p) => p.number === number)?.state).toBe("closed");
    // Read again (a redelivery, the next poll): nothing more.
    await intake.process(read);
    expect((await getTask(c.scratch.db, "merged-first", taskId))?.status).toBe("done");
  });

  it("still cancels the task of an issue closed while its pull request is open", async () => {
    const { issue, read, sourceId, taskId, number } = await taskWithOpenPull("closed-open");
    await c.github.changeIssue(REPO, issue, { state: "closed", login: "octocat" });
    await intake.process(read);
    expect((await getTask(c.scratch.db, "closed-open", taskId))?.status).toBe("cancelled");
    expect((await getIntakeItem(c.scratch.db, sourceId, String(issue)))?.cancelled_at).not.toBeNull();
    // The cancel's close job closes it on the forge, recorded closed.
    await forge.process({ v: 1, kind: "close", projectId: "closed-open", taskId, number });
    expect(c.github.pulls(REPO).find((p) => p.number === number)?.state).toBe("closed");
    expect((await getPullRequestRow(c.scratch.db, "closed-open", taskId))?.status).toBe("closed");
  });
});

describe("an operator's cancel of a task whose pull request merged just before", () => {
  it("records the merge, not a close: the forge runner reads the pull request before closing it", async () => {
    const { taskId, number } = await taskWithOpenPull("cancel-merged");
    const mergeSha = await c.github.mergeByHuman(REPO, number, "octocat");
    await c.transitions.apply("cancel-merged", { kind: "cancel", taskId, by: "operator" });
    await forge.process({ v: 1, kind: "close", projectId: "cancel-merged", taskId, number });
    expect((await getTask(c.scratch.db, "cancel-merged", taskId))?.status).toBe("cancelled");
    expect(await getPullRequestRow(c.scratch.db, "cancel-merged", taskId)).toMatchObject({
      status: "merged",
      merge_commit_sha: mergeSha,
    });
  });
});
