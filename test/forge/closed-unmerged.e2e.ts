/**
 * Closed unmerged (README "Land through pull requests"; docs/state-machine.md rule 18): a
 * person closes Overseer's pull request without merging it, under each
 * `landing.pull_request.on_closed`. A real coordinator with its forge runner, a real worker with
 * bwrap and git, Postgres and Redis; only the forge is the GitHub double (real git over smart
 * HTTP with `main` protected, REST validated against @octokit/openapi), read by ETag polling.
 *
 * - `cancel` (the default): the task is cancelled; no executor runs again and Overseer writes
 *   nothing more to the forge (the pull request stays closed, no ref moves).
 * - `todo`: the task goes back to an executor once, told why; its approved head goes to the same
 *   PR branch and opens a NEW pull request (the closed one stays closed), and nothing loops: the
 *   runner keeps polling the new pull request, and no other run starts. A person then merges
 *   the new one and the task is done.
 */

import { listEvents } from "@overseer/db";
import type { ProjectState } from "@overseer/domain";
import { GitHubDouble } from "@overseer/test-support";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClusterFixture, scriptedTask } from "../support/cluster-fixture.ts";
import { pr, until } from "./pull-request-state.ts";

const BOT = { login: "overseer-bot", token: "ghp_overseer_closed" };
const HUMAN = { login: "alice", token: "ghp_alice_closed" };

let forge: GitHubDouble;
const cluster = new ClusterFixture({ sandbox: "bwrap" });

beforeAll(async () => {
  forge = await GitHubDouble.start();
  forge.addUser(BOT);
  forge.addUser(HUMAN);
  for (const repo of ["acme/closed-cancel", "acme/closed-todo"]) {
    await forge.createRepository(repo, { "README.md": "# app\n", "src/app.ts": "export const v = 0;\n" });
    await forge.protectBranch(repo, ["main"], ["ci"]);
  }
  await cluster.setup();
  // GitHub writes unpaced (OVERSEER_GITHUB_WRITE_INTERVAL_MS=0): the double sets no limit.
  await cluster.startCoordinator("coord-closed", { forgeRetryBaseMs: 20, githubWriteIntervalMs: 0 });
  await cluster.startWorker(2);
}, 120_000);

afterAll(async () => {
  await cluster.teardown();
  await forge?.close();
});

function config(repository: string, onClosed: "cancel" | "todo") {
  return ClusterFixture.fakeRunnerConfig({
    attempts: 3,
    landing: {
      mode: "pull_request",
      pull_request: { poll_seconds: 1, required_checks: ["ci"], merge: "manual", on_closed: onClosed },
    },
    forge: { kind: "github", url: forge.url, repository, token: BOT.token },
  });
}

const isOpen = (state: ProjectState, id: string) =>
  state.tasks.get(id)?.status === "pr_open" && pr(state, id)?.status === "open";

async function runsOf(project: string, taskId: string, action: string) {
  return cluster.scratch.db
    .selectFrom("runs")
    .select(["id", "prompt", "status"])
    .where("project_id", "=", project)
    .where("task_id", "=", taskId)
    .where("action", "=", action)
    .orderBy("created_at")
    .execute();
}

/** Reads of pull request `number` the double answered after `since` (the runner's polls). */
const readsAfter = (repository: string, number: number, since: number) =>
  forge.requests.filter(
    (r) => r.at > since && r.method === "GET" && r.path.endsWith(`/repos/${repository}/pulls/${number}`),
  ).length;

const refs = (repository: string) =>
  forge.git.git(repository, ["for-each-ref", "--format=%(refname) %(objectname)"]);

async function apiCalls(project: string, taskId: string): Promise<number> {
  const row = await cluster.scratch.db
    .selectFrom("pull_requests")
    .select(["api_calls"])
    .where("project_id", "=", project)
    .where("task_id", "=", taskId)
    .executeTakeFirstOrThrow();
  return row.api_calls;
}

describe("pull_request mode: closed unmerged by a person (GitHub double, coordinator + worker + bwrap)", () => {
  it("on_closed: cancel — the task is cancelled, nothing runs again, Overseer writes nothing more", async () => {
    const repo = "acme/closed-cancel";
    const project = "pr-closed-cancel";
    await cluster.addProject({
      id: project,
      tasks: [
        scriptedTask(
          "K",
          'execute: write src/app.ts "export const v = 1;\\n"; submit "Bump v"\nreview: approve',
        ),
        // The witness: its pull request stays open, so the runner's polls show it kept going.
        scriptedTask(
          "W",
          'execute: write src/w.ts "export const w = 1;\\n"; submit "Add w"\nreview: approve',
        ),
      ],
      remote: () => forge.cloneUrl(repo),
      runnerConfig: config(repo, "cancel"),
    });
    const opened = await cluster.waitForProject(project, (s) => isOpen(s, "K") && isOpen(s, "W"), 240_000);
    const first = pr(opened, "K");
    const witness = pr(opened, "W");
    if (!first?.number || !witness?.number) throw new Error("no pull requests");
    const witnessNumber = witness.number;
    const mainBefore = await forge.git.resolve(repo, "refs/heads/main");

    await forge.closeByHuman(repo, first.number, HUMAN.login);
    const cancelled = await cluster.waitForProject(
      project,
      (s) => s.tasks.get("K")?.status === "cancelled",
      120_000,
    );
    const closedAt = Date.now();
    expect(pr(cancelled, "K")).toMatchObject({
      number: first.number,
      status: "closed",
      mergeCommitSha: null,
    });
    const events = await listEvents(cluster.scratch.db, {
      projectId: project,
      taskId: "K",
      types: ["pr.closed", "task.cancelled", "pr.close_requested", "pr.merged"],
      limit: 100,
    });
    expect(events.map((e) => e.type)).toEqual(["pr.closed", "task.cancelled"]);
    expect(events[0]?.data).toMatchObject({ number: first.number, onClosed: "cancel" });

    // Afterwards: the runner kept polling W (three reads of its pull request), yet wrote
    // nothing to the forge (GraphQL reads are POSTs too; its one mutation, auto-merge, would
    // show on the pull requests) and moved no ref.
    const refsAtClose = await refs(repo);
    await until(() => readsAfter(repo, witnessNumber, closedAt) >= 3, 120_000);
    const after = forge.requests.filter((r) => r.at > closedAt);
    expect(after.filter((r) => r.method !== "GET" && r.path !== "/api/graphql")).toEqual([]);
    expect(forge.pulls(repo).map((p) => p.autoMerge)).toEqual([null, null]);
    expect(await refs(repo)).toBe(refsAtClose);
    expect(await forge.git.resolve(repo, "refs/heads/main")).toBe(mainBefore);
    expect(forge.pulls(repo).find((p) => p.number === first.number)).toMatchObject({
      state: "closed",
      mergedAt: null,
    });
    expect(forge.pulls(repo)).toHaveLength(2);
    expect(await runsOf(project, "K", "execute")).toHaveLength(1);
    expect(forge.takeViolations()).toEqual([]);
    console.log(
      JSON.stringify({
        figure: "closed-unmerged-cancel",
        forgeApiCallsForTask: await apiCalls(project, "K"),
      }),
    );
  }, 600_000);

  it("on_closed: todo — one new executor run, a NEW pull request from the same branch, no loop; merged later", async () => {
    const repo = "acme/closed-todo";
    const project = "pr-closed-todo";
    await cluster.addProject({
      id: project,
      tasks: [
        scriptedTask(
          "R",
          [
            'execute: write src/app.ts "export const v = 1;\\n"; submit "Bump v"',
            'execute#2: write src/app.ts "export const v = 2;\\n"; submit "Bump v again, as the closed PR asked"',
            'review: approve "Fine"',
          ].join("\n"),
        ),
      ],
      remote: () => forge.cloneUrl(repo),
      runnerConfig: config(repo, "todo"),
    });
    const opened = await cluster.waitForProject(project, (s) => isOpen(s, "R"), 240_000);
    const first = pr(opened, "R");
    if (!first?.number) throw new Error("no pull request");
    const firstNumber = first.number;

    // 1. Alice closes it unmerged: back to one executor, whose approved head opens a new one.
    await forge.closeByHuman(repo, firstNumber, HUMAN.login);
    const reopened = await cluster.waitForProject(
      project,
      (s) => isOpen(s, "R") && pr(s, "R")?.number !== firstNumber,
      300_000,
    );
    const second = pr(reopened, "R");
    if (!second?.number) throw new Error("no new pull request");
    const secondNumber = second.number;
    expect(second.headSha).not.toBe(first.headSha);
    expect(second.branch).toBe("overseer/pr/R");
    const pulls = () => forge.pulls(repo);
    expect(pulls()).toHaveLength(2);
    expect(pulls().find((p) => p.number === firstNumber)).toMatchObject({ state: "closed", mergedAt: null });
    expect(pulls().find((p) => p.number === secondNumber)).toMatchObject({
      state: "open",
      head: "overseer/pr/R",
      base: "main",
    });
    expect(await forge.git.resolve(repo, "refs/heads/overseer/pr/R")).toBe(second.headSha);
    // Its body holds the new submit's summary and the reviewer's verdict (not the task's body).
    const body = pulls().find((p) => p.number === secondNumber)?.body ?? "";
    expect(body).toContain("### Summary\nBump v again, as the closed PR asked");
    expect(body).toMatch(/Approved by `[^`]+`: Fine/);
    expect(body).not.toContain("overseer-fake");
    const executes = await runsOf(project, "R", "execute");
    expect(executes).toHaveLength(2);
    expect(executes[1]?.prompt).toContain(`Pull request #${firstNumber}`);
    expect(executes[1]?.prompt).toContain("closed unmerged");
    expect(await runsOf(project, "R", "review")).toHaveLength(2);

    // 2. No loop: the runner polls the new pull request a few times; nothing else runs.
    const settledAt = Date.now();
    await until(() => readsAfter(repo, secondNumber, settledAt) >= 3, 120_000);
    const still = await cluster.waitForProject(project, () => true);
    expect(isOpen(still, "R")).toBe(true);
    expect(pr(still, "R")?.number).toBe(secondNumber);
    expect(await runsOf(project, "R", "execute")).toHaveLength(2);
    expect(await runsOf(project, "R", "review")).toHaveLength(2);
    const closed = await listEvents(cluster.scratch.db, {
      projectId: project,
      taskId: "R",
      types: ["pr.closed", "pr.opened", "task.pr_requested"],
      limit: 100,
    });
    expect(closed.map((e) => e.type)).toEqual([
      "task.pr_requested",
      "pr.opened",
      "pr.closed",
      "task.pr_requested",
      "pr.opened",
    ]);
    expect(closed[2]?.data).toMatchObject({ number: firstNumber, onClosed: "todo" });
    expect(closed[4]?.data).toMatchObject({ number: secondNumber, headSha: second.headSha });

    // 3. Green, and a person merges the new one: done with that merge commit.
    forge.setCheckRun(repo, second.headSha, { name: "ci", conclusion: "success" });
    await cluster.waitForProject(project, (s) => pr(s, "R")?.checks === "success", 120_000);
    const mergeSha = await forge.mergeByHuman(repo, secondNumber, HUMAN.login);
    const done = await cluster.waitForProject(project, (s) => s.tasks.get("R")?.status === "done", 120_000);
    expect(pr(done, "R")).toMatchObject({ number: secondNumber, status: "merged", mergeCommitSha: mergeSha });
    expect(await forge.git.git(repo, ["show", `${mergeSha}:src/app.ts`])).toBe("export const v = 2;");
    expect(forge.takeViolations()).toEqual([]);
    console.log(
      JSON.stringify({ figure: "closed-unmerged-todo", forgeApiCallsForTask: await apiCalls(project, "R") }),
    );
  }, 600_000);
});
