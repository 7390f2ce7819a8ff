/**
 * Prerequisites across pull requests, end to end (README "Land through pull requests", step 7;
 * docs/state-machine.md rule 19): a real coordinator with its forge runner, a real worker with
 * bwrap and git, Postgres and Redis; only the forge is the GitHub double (real git over smart
 * HTTP with `main` protected, REST validated against @octokit/openapi), read by ETag polling.
 *
 * - `prerequisites: stacked`: B (after A) starts while A's pull request is open, from A's PR
 *   branch; B's pull request targets `overseer/pr/A` and, green, is not merged into it; A merges
 *   → B's pull request is retargeted onto `main` → B merges.
 * - `prerequisites: merged` (the default): D (after C) does not start while C's pull request is
 *   open; C merges → D starts from `main` with C's work, its pull request targets `main`.
 */

import { listEvents } from "@overseer/db";
import type { ProjectState } from "@overseer/domain";
import { GitHubDouble } from "@overseer/test-support";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClusterFixture, scriptedTask } from "../support/cluster-fixture.ts";
import { pr } from "./pull-request-state.ts";

const BOT = { login: "overseer-bot", token: "ghp_overseer_stacked" };

let forge: GitHubDouble;
const cluster = new ClusterFixture({ sandbox: "bwrap" });

beforeAll(async () => {
  forge = await GitHubDouble.start();
  forge.addUser(BOT);
  for (const repo of ["acme/stacked", "acme/merged"]) {
    await forge.createRepository(repo, { "README.md": "# app\n" });
    await forge.protectBranch(repo, ["main"], ["ci"]);
  }
  await cluster.setup();
  // GitHub writes unpaced (OVERSEER_GITHUB_WRITE_INTERVAL_MS=0): the double sets no limit.
  await cluster.startCoordinator("coord-stacked", { forgeRetryBaseMs: 20, githubWriteIntervalMs: 0 });
  await cluster.startWorker(2);
}, 120_000);

afterAll(async () => {
  await cluster.teardown();
  await forge?.close();
});

function config(repository: string, prerequisites: "stacked" | "merged") {
  return ClusterFixture.fakeRunnerConfig({
    landing: {
      mode: "pull_request",
      pull_request: {
        poll_seconds: 1,
        required_checks: ["ci"],
        merge: "auto",
        required_approvals: 0,
        prerequisites,
      },
    },
    forge: { kind: "github", url: forge.url, repository, token: BOT.token },
  });
}

const pair = (first: string, second: string) => [
  scriptedTask(
    first,
    `execute: write src/${first}.ts "export const x = 1;\\n"; submit "${first}"\nreview: approve`,
  ),
  scriptedTask(
    second,
    `execute: write src/${second}.ts "export const y = 2;\\n"; submit "${second}"\nreview: approve`,
    { prerequisites: [first] },
  ),
];

const isOpen = (state: ProjectState, id: string) =>
  state.tasks.get(id)?.status === "pr_open" && pr(state, id)?.status === "open";

async function isAncestor(repository: string, ancestor: string, of: string): Promise<boolean> {
  return forge.git.git(repository, ["merge-base", "--is-ancestor", ancestor, of]).then(
    () => true,
    () => false,
  );
}

describe("prerequisites across pull requests (GitHub double, coordinator + worker + bwrap)", () => {
  it("stacked: B builds on A's PR branch and targets it, is retargeted onto main when A merges, then merges", async () => {
    const repo = "acme/stacked";
    const project = "pr-stacked";
    await cluster.addProject({
      id: project,
      tasks: pair("A", "B"),
      remote: () => forge.cloneUrl(repo),
      runnerConfig: config(repo, "stacked"),
    });

    // 1. Both pull requests open; B's targets A's PR branch and B's head builds on A's.
    const both = await cluster.waitForProject(project, (s) => isOpen(s, "A") && isOpen(s, "B"), 240_000);
    const a = pr(both, "A");
    const b = pr(both, "B");
    if (!a?.number || !b?.number) throw new Error("no pull requests");
    expect(b.base).toBe("overseer/pr/A");
    const pulls = () => forge.pulls(repo);
    expect(pulls().find((p) => p.number === b.number)?.base).toBe("overseer/pr/A");
    expect(pulls().find((p) => p.number === a.number)?.base).toBe("main");
    expect(await isAncestor(repo, a.headSha, b.headSha)).toBe(true);

    // 2. B green first: it is never merged into A's branch (it waits for A).
    forge.setCheckRun(repo, b.headSha, { name: "ci", conclusion: "success" });
    await cluster.waitForProject(project, (s) => pr(s, "B")?.checks === "success", 60_000);
    expect(pulls().find((p) => p.number === b.number)?.state).toBe("open");
    expect(await forge.git.resolve(repo, "refs/heads/overseer/pr/A")).toBe(a.headSha);

    // 3. A green: Overseer merges A; B is retargeted onto main, then merged there.
    forge.setCheckRun(repo, a.headSha, { name: "ci", conclusion: "success" });
    const done = await cluster.waitForProject(
      project,
      (s) => s.tasks.get("A")?.status === "done" && s.tasks.get("B")?.status === "done",
      180_000,
    );
    const bPull = pulls().find((p) => p.number === b.number);
    expect(bPull).toMatchObject({ base: "main", state: "closed" });
    expect(bPull?.mergedAt).not.toBeNull();
    const main = await forge.git.resolve(repo, "refs/heads/main");
    expect(pr(done, "B")).toMatchObject({ status: "merged", base: "main", mergeCommitSha: main });
    expect(await forge.git.git(repo, ["show", `${main}:src/A.ts`])).toBe("export const x = 1;");
    expect(await forge.git.git(repo, ["show", `${main}:src/B.ts`])).toBe("export const y = 2;");
    const retargeted = await listEvents(cluster.scratch.db, {
      projectId: project,
      taskId: "B",
      types: ["pr.retarget_requested"],
      limit: 10,
    });
    expect(retargeted.map((e) => e.data)).toEqual([
      expect.objectContaining({ number: b.number, from: "overseer/pr/A", to: "main" }),
    ]);
    expect(pulls()).toHaveLength(2);
    expect(forge.takeViolations()).toEqual([]);
  }, 600_000);

  it("merged (default): D waits until C's pull request merged, then builds on main with C's work", async () => {
    const repo = "acme/merged";
    const project = "pr-merged-prereq";
    await cluster.addProject({
      id: project,
      tasks: pair("C", "D"),
      remote: () => forge.cloneUrl(repo),
      runnerConfig: config(repo, "merged"),
    });

    // 1. C's pull request is open (several scheduling passes later): D has not started.
    const open = await cluster.waitForProject(project, (s) => isOpen(s, "C"), 180_000);
    const c = pr(open, "C");
    if (!c?.number) throw new Error("no pull request");
    const runsOf = async (taskId: string) =>
      cluster.scratch.db
        .selectFrom("runs")
        .select(["id"])
        .where("project_id", "=", project)
        .where("task_id", "=", taskId)
        .execute();
    expect(open.tasks.get("D")?.status).toBe("todo");
    expect(await runsOf("D")).toEqual([]);

    // 2. C green → merged; D then runs from main, and its pull request targets main.
    forge.setCheckRun(repo, c.headSha, { name: "ci", conclusion: "success" });
    const dOpen = await cluster.waitForProject(
      project,
      (s) => s.tasks.get("C")?.status === "done" && isOpen(s, "D"),
      240_000,
    );
    const d = pr(dOpen, "D");
    if (!d?.number) throw new Error("no pull request");
    const cMerge = pr(dOpen, "C")?.mergeCommitSha;
    if (!cMerge) throw new Error("C has no merge commit");
    expect(d.base).toBe("main");
    expect(forge.pulls(repo).find((p) => p.number === d.number)?.base).toBe("main");
    expect(await isAncestor(repo, cMerge, d.headSha)).toBe(true);
    expect(await isAncestor(repo, c.headSha, d.headSha)).toBe(false);

    forge.setCheckRun(repo, d.headSha, { name: "ci", conclusion: "success" });
    await cluster.waitForProject(project, (s) => s.tasks.get("D")?.status === "done", 120_000);
    const main = await forge.git.resolve(repo, "refs/heads/main");
    expect(await forge.git.git(repo, ["show", `${main}:src/D.ts`])).toBe("export const y = 2;");
    expect(forge.takeViolations()).toEqual([]);
  }, 600_000);
});
