/**
 * How a pull request ends on Gitea / Forgejo, end to end (README "Land through pull requests";
 * docs/state-machine.md rule 18): a real coordinator with its forge runner, a real worker with
 * bwrap and git, Postgres and Redis; only the forge is the Gitea double (real git over smart
 * HTTP with `main` protected and a required Gitea Actions status), read by polling.
 *
 * - merged by a person on Gitea under `merge: manual`: the task is done with their merge commit
 *   and login;
 * - closed unmerged by a person (`on_closed: cancel`): the task is cancelled;
 * - the base moved into a conflict: Gitea says the pull request no longer merges → the base is
 *   merged into the task branch and a conflict-only executor resolves it → the same pull
 *   request goes green → merged by Overseer under `auto`, both sides' change on `main`.
 */

import { listEvents } from "@overseer/db";
import type { ProjectState } from "@overseer/domain";
import { GiteaDouble } from "@overseer/test-support";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClusterFixture, scriptedTask } from "../support/cluster-fixture.ts";
import { pr } from "./pull-request-state.ts";

const BOT = { login: "overseer-bot", token: "gitea-overseer-outcomes" };
const HUMAN = { login: "alice", token: "gitea-alice-outcomes" };
const CI = "CI / test (pull_request)";

let forge: GiteaDouble;
const cluster = new ClusterFixture({ sandbox: "bwrap" });

beforeAll(async () => {
  forge = await GiteaDouble.start();
  forge.addUser(BOT);
  forge.addUser(HUMAN);
  await cluster.setup();
  await cluster.startCoordinator("coord-gitea-outcomes", { forgeRetryBaseMs: 20 });
  await cluster.startWorker(2);
}, 120_000);

afterAll(async () => {
  await cluster.teardown();
  await forge?.close();
});

async function repository(name: string, files: Record<string, string>): Promise<void> {
  await forge.createRepository(name, { "README.md": "# app\n", ...files });
  await forge.protectBranch(name, ["main"], [CI]);
}

function config(repository: string, pullRequest: Record<string, unknown>) {
  return ClusterFixture.fakeRunnerConfig({
    attempts: 3,
    landing: {
      mode: "pull_request",
      pull_request: { poll_seconds: 1, required_checks: [CI], ...pullRequest },
    },
    forge: { kind: "gitea", url: forge.url, repository, token: BOT.token },
  });
}

const isOpen = (state: ProjectState, id: string) =>
  state.tasks.get(id)?.status === "pr_open" && pr(state, id)?.status === "open";

const oneShot = (id: string) =>
  scriptedTask(
    id,
    ['execute: write src/app.ts "export const v = 1;\\n"; submit "Bump v"', 'review: approve "Right"'].join(
      "\n",
    ),
    { title: "Bump v" },
  );

describe("pull requests ending on the Gitea double (coordinator + worker + bwrap + git)", () => {
  it("merged by a person on Gitea (merge: manual): done with their merge commit and login", async () => {
    const repo = "acme/gitea-human-merge";
    await repository(repo, { "src/app.ts": "export const v = 0;\n" });
    const project = "gitea-human-merge";
    await cluster.addProject({
      id: project,
      tasks: [oneShot("H")],
      remote: () => forge.cloneUrl(repo),
      runnerConfig: config(repo, { merge: "manual" }),
    });
    const opened = await cluster.waitForProject(project, (s) => isOpen(s, "H"), 180_000);
    const first = pr(opened, "H");
    if (!first?.number) throw new Error("no pull request");
    forge.actionsJob(repo, first.headSha, { workflow: "CI", job: "test", state: "success", log: "ok\n" });
    await cluster.waitForProject(project, (s) => pr(s, "H")?.checks === "success", 120_000);
    const sha = await forge.mergeByHuman(repo, first.number, HUMAN.login);
    const done = await cluster.waitForProject(project, (s) => s.tasks.get("H")?.status === "done", 120_000);
    expect(pr(done, "H")).toMatchObject({ status: "merged", mergeCommitSha: sha, mergedBy: HUMAN.login });
    expect(await forge.git.resolve(repo, "refs/heads/main")).toBe(sha);
    const events = await listEvents(cluster.scratch.db, {
      projectId: project,
      taskId: "H",
      types: ["pr.merged", "task.approved"],
      limit: 10,
    });
    expect(events.map((e) => e.type)).toEqual(["pr.merged", "task.approved"]);
    // Overseer never merged it: the only merge request on Gitea was the person's, made outside the API.
    expect(forge.requests.filter((r) => r.method === "POST" && r.path.endsWith("/merge"))).toHaveLength(0);
    expect(forge.takeViolations()).toEqual([]);
  }, 400_000);

  it("closed unmerged by a person (on_closed: cancel): the task is cancelled", async () => {
    const repo = "acme/gitea-closed";
    await repository(repo, { "src/app.ts": "export const v = 0;\n" });
    const project = "gitea-closed";
    await cluster.addProject({
      id: project,
      tasks: [oneShot("K")],
      remote: () => forge.cloneUrl(repo),
      runnerConfig: config(repo, { merge: "manual", on_closed: "cancel" }),
    });
    const opened = await cluster.waitForProject(project, (s) => isOpen(s, "K"), 180_000);
    const first = pr(opened, "K");
    if (!first?.number) throw new Error("no pull request");
    const mainBefore = await forge.git.resolve(repo, "refs/heads/main");
    await forge.closeByHuman(repo, first.number);
    const cancelled = await cluster.waitForProject(
      project,
      (s) => s.tasks.get("K")?.status === "cancelled",
      120_000,
    );
    expect(pr(cancelled, "K")).toMatchObject({
      number: first.number,
      status: "closed",
      mergeCommitSha: null,
    });
    const events = await listEvents(cluster.scratch.db, {
      projectId: project,
      taskId: "K",
      types: ["pr.closed", "task.cancelled", "pr.merged"],
      limit: 10,
    });
    expect(events.map((e) => e.type)).toEqual(["pr.closed", "task.cancelled"]);
    expect(await forge.git.resolve(repo, "refs/heads/main")).toBe(mainBefore);
    expect(forge.pulls(repo).filter((p) => p.head === "overseer/pr/K")).toHaveLength(1);
    expect(forge.takeViolations()).toEqual([]);
  }, 400_000);

  it("the base moved into a conflict: conflict-only run → same pull request green → merged (auto)", async () => {
    const repo = "acme/gitea-conflict";
    await repository(repo, { "src/app.ts": "export const a = 0;\nexport const b = 0;\n" });
    const project = "gitea-conflict";
    const task = scriptedTask(
      "T-C",
      [
        'execute: write src/app.ts "export const a = 1;\\nexport const b = 0;\\n"; submit "Set a to 1"',
        'execute#2: write src/app.ts "export const a = 1;\\nexport const b = 2;\\n"; submit "Resolve the conflict with main"',
        'review: approve "Looks right"',
      ].join("\n"),
      { title: "Set a" },
    );
    await cluster.addProject({
      id: project,
      tasks: [task],
      remote: () => forge.cloneUrl(repo),
      runnerConfig: config(repo, { merge: "auto", required_approvals: 0 }),
    });
    const opened = await cluster.waitForProject(project, (s) => isOpen(s, "T-C"), 180_000);
    const first = pr(opened, "T-C");
    if (!first?.number) throw new Error("no pull request");
    const number = first.number;

    // A person pushes a conflicting change to main: Gitea's `mergeable` turns false.
    const human = await forge.git.commitFiles(
      repo,
      "main",
      { "src/app.ts": "export const a = 2;\nexport const b = 2;\n" },
      "Set a and b to 2",
    );
    const updated = await cluster.waitForProject(
      project,
      (s) => isOpen(s, "T-C") && pr(s, "T-C")?.headSha !== first.headSha,
      240_000,
    );
    const second = pr(updated, "T-C");
    if (!second) throw new Error("no pull request");
    expect(second.number).toBe(number);
    const executes = await cluster.scratch.db
      .selectFrom("runs")
      .select(["prompt"])
      .where("project_id", "=", project)
      .where("action", "=", "execute")
      .orderBy("created_at")
      .execute();
    expect(executes).toHaveLength(2);
    expect(executes[1]?.prompt).toContain("## Resolve the merge conflict");
    expect(executes[1]?.prompt).toContain(`its pull request #${number}`);
    const parents = (await forge.git.git(repo, ["rev-list", "--parents", "-n", "1", second.headSha]))
      .split(" ")
      .slice(1);
    expect(parents).toEqual([first.headSha, human]);

    forge.actionsJob(repo, second.headSha, { workflow: "CI", job: "test", state: "success", log: "ok\n" });
    const done = await cluster.waitForProject(project, (s) => s.tasks.get("T-C")?.status === "done", 120_000);
    const main = await forge.git.resolve(repo, "refs/heads/main");
    expect(pr(done, "T-C")).toMatchObject({ status: "merged", mergeCommitSha: main, mergedBy: BOT.login });
    expect(await forge.git.git(repo, ["show", `${main}:src/app.ts`])).toBe(
      "export const a = 1;\nexport const b = 2;",
    );
    expect(forge.pulls(repo).filter((p) => p.head === "overseer/pr/T-C")).toHaveLength(1);
    expect(forge.takeViolations()).toEqual([]);
  }, 600_000);
});
