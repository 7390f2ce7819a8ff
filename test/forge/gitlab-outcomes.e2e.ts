/**
 * Landing through merge requests on GitLab, the other outcomes end to end (README "Land through
 * pull requests"; the GitHub cases are base-moved-conflict, merged-by-human and closed-unmerged):
 * a real coordinator with its forge runner, a real worker with bwrap and git, Postgres and
 * Redis; only the forge is the GitLab double (real git over smart HTTP, `main` protected, REST
 * checked against GitLab's documented parameters and example answers), read by polling.
 *
 * - A person merges the merge request on GitLab (`merge: manual`): the task is done with their
 *   merge commit and username.
 * - A person closes it unmerged: with `on_closed: cancel` the task is cancelled, nothing runs
 *   again and Overseer writes nothing more to GitLab.
 * - The base moves into a conflict: GitLab says it no longer merges, a conflict-only executor
 *   resolves it on the task branch with main merged in, the same merge request goes green and
 *   is merged under `auto`.
 */

import { listEvents } from "@overseer/db";
import type { ProjectState } from "@overseer/domain";
import { GitLabDouble } from "@overseer/test-support";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClusterFixture, scriptedTask } from "../support/cluster-fixture.ts";
import { pr, until } from "./pull-request-state.ts";

const BOT = { username: "overseer-bot", token: "glpat-overseer-outcomes", accessLevel: 40 };
const HUMAN = { username: "alice", token: "glpat-alice-outcomes", accessLevel: 40 };

let forge: GitLabDouble;
const cluster = new ClusterFixture({ sandbox: "bwrap" });

beforeAll(async () => {
  forge = await GitLabDouble.start();
  forge.addUser(BOT);
  forge.addUser(HUMAN);
  await cluster.setup();
  await cluster.startCoordinator("coord-gitlab-outcomes", { forgeRetryBaseMs: 20 });
  await cluster.startWorker(2);
}, 120_000);

afterAll(async () => {
  await cluster.teardown();
  await forge?.close();
});

async function gitlabProject(path: string, files: Record<string, string>): Promise<void> {
  await forge.createProject(path, { "README.md": "# app\n", ...files }, { pipelineMustSucceed: true });
  await forge.protectBranch(path, ["main"]);
}

function config(path: string, pullRequest: Record<string, unknown>) {
  return ClusterFixture.fakeRunnerConfig({
    attempts: 3,
    landing: {
      mode: "pull_request",
      pull_request: { poll_seconds: 1, required_checks: ["ci"], ...pullRequest },
    },
    forge: { kind: "gitlab", url: forge.url, repository: path, token: BOT.token },
  });
}

const isOpen = (state: ProjectState, id: string) =>
  state.tasks.get(id)?.status === "pr_open" && pr(state, id)?.status === "open";

/** A green merge request pipeline on `sha`. */
function green(path: string, sha: string, iid: number): void {
  forge.setPipeline(
    path,
    sha,
    [{ name: "ci", status: "success" }],
    `refs/merge-requests/${iid}/head`,
    "merge_request_event",
  );
}

describe("pull_request mode on the GitLab double: merged by a person, closed unmerged, a moved base", () => {
  it("a person merges the merge request on GitLab (merge: manual): the task is done with their merge commit", async () => {
    const path = "acme/human-merge";
    const project = "gl-human-merge";
    await gitlabProject(path, { "src/app.ts": "export const v = 0;\n" });
    await cluster.addProject({
      id: project,
      tasks: [
        scriptedTask(
          "H",
          'execute: write src/app.ts "export const v = 1;\\n"; submit "Bump v"\nreview: approve',
        ),
      ],
      remote: () => forge.cloneUrl(path),
      runnerConfig: config(path, { merge: "manual" }),
    });
    const opened = await cluster.waitForProject(project, (s) => isOpen(s, "H"), 120_000);
    const head = pr(opened, "H");
    if (!head?.number) throw new Error("no merge request");
    green(path, head.headSha, head.number);
    const sha = await forge.mergeByHuman(path, head.number, HUMAN.username);
    const done = await cluster.waitForProject(project, (s) => s.tasks.get("H")?.status === "done", 120_000);
    expect(pr(done, "H")).toMatchObject({ status: "merged", mergeCommitSha: sha, mergedBy: HUMAN.username });
    expect(await forge.git.resolve(path, "refs/heads/main")).toBe(sha);
    const events = await listEvents(cluster.scratch.db, {
      projectId: project,
      taskId: "H",
      types: ["pr.merged", "task.approved"],
      limit: 10,
    });
    expect(events.map((e) => e.type)).toEqual(["pr.merged", "task.approved"]);
    // Overseer never merged, nor asked GitLab to.
    expect(forge.requests.filter((r) => r.method === "PUT" && r.path.endsWith("/merge"))).toEqual([]);
    expect(forge.takeViolations()).toEqual([]);
  }, 300_000);

  it("a person closes it unmerged (on_closed: cancel): the task is cancelled, and Overseer writes nothing more", async () => {
    const path = "acme/closed";
    const project = "gl-closed";
    await gitlabProject(path, { "src/app.ts": "export const v = 0;\n" });
    await cluster.addProject({
      id: project,
      tasks: [
        scriptedTask(
          "K",
          'execute: write src/app.ts "export const v = 1;\\n"; submit "Bump v"\nreview: approve',
        ),
      ],
      remote: () => forge.cloneUrl(path),
      runnerConfig: config(path, { merge: "manual", on_closed: "cancel" }),
    });
    const opened = await cluster.waitForProject(project, (s) => isOpen(s, "K"), 120_000);
    const head = pr(opened, "K");
    if (!head?.number) throw new Error("no merge request");
    const mainBefore = await forge.git.resolve(path, "refs/heads/main");
    await forge.closeByHuman(path, head.number);
    const cancelled = await cluster.waitForProject(
      project,
      (s) => s.tasks.get("K")?.status === "cancelled",
      120_000,
    );
    const closedAt = Date.now();
    expect(pr(cancelled, "K")).toMatchObject({ number: head.number, status: "closed", mergeCommitSha: null });
    const events = await listEvents(cluster.scratch.db, {
      projectId: project,
      taskId: "K",
      types: ["pr.closed", "task.cancelled", "pr.merged"],
      limit: 10,
    });
    expect(events.map((e) => e.type)).toEqual(["pr.closed", "task.cancelled"]);
    expect(events[0]?.data).toMatchObject({ number: head.number, onClosed: "cancel" });
    // A while later: no write to GitLab, main untouched, one merge request, one executor run.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const projectApi = `/api/v4/projects/${encodeURIComponent(path)}`;
    expect(
      forge.requests.filter((r) => r.at > closedAt && r.method !== "GET" && r.path.startsWith(projectApi)),
    ).toEqual([]);
    expect(await forge.git.resolve(path, "refs/heads/main")).toBe(mainBefore);
    expect(forge.mergeRequests(path).map((m) => m.state)).toEqual(["closed"]);
    const executes = await cluster.scratch.db
      .selectFrom("runs")
      .select(["id"])
      .where("project_id", "=", project)
      .where("action", "=", "execute")
      .execute();
    expect(executes).toHaveLength(1);
    expect(forge.takeViolations()).toEqual([]);
  }, 300_000);

  it("the base moves into a conflict: a conflict-only run resolves it on the same merge request, green, merged (auto)", async () => {
    const path = "acme/conflict";
    const project = "gl-conflict";
    await gitlabProject(path, { "src/app.ts": "export const a = 0;\nexport const b = 0;\n" });
    await cluster.addProject({
      id: project,
      tasks: [
        scriptedTask(
          "T-C",
          [
            'execute: write src/app.ts "export const a = 1;\\nexport const b = 0;\\n"; submit "Set a to 1"',
            'execute#2: write src/app.ts "export const a = 1;\\nexport const b = 2;\\n"; submit "Resolve the conflict with main"',
            'review: approve "Looks right"',
          ].join("\n"),
          { title: "Set a" },
        ),
      ],
      remote: () => forge.cloneUrl(path),
      runnerConfig: config(path, { merge: "auto", required_approvals: 0 }),
    });
    const opened = await cluster.waitForProject(project, (s) => isOpen(s, "T-C"), 120_000);
    const first = pr(opened, "T-C");
    if (!first?.number) throw new Error("no merge request");
    const iid = first.number;
    const human = await forge.git.commitFiles(
      path,
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
    if (!second) throw new Error("no merge request");
    expect(second.number).toBe(iid);
    const executes = await cluster.scratch.db
      .selectFrom("runs")
      .select(["prompt"])
      .where("project_id", "=", project)
      .where("action", "=", "execute")
      .orderBy("created_at")
      .execute();
    expect(executes).toHaveLength(2);
    expect(executes[1]?.prompt).toContain("## Resolve the merge conflict");
    expect(executes[1]?.prompt).toContain(`its pull request #${iid}`);
    // Merged, never rewritten: the new head's parents are the old head and the person's commit.
    const parents = (await forge.git.git(path, ["rev-list", "--parents", "-n", "1", second.headSha]))
      .split(" ")
      .slice(1);
    expect(parents).toEqual([first.headSha, human]);
    await until(() =>
      (forge.mergeRequests(path).find((m) => m.iid === iid)?.description ?? "").includes(
        second.headSha.slice(0, 12),
      ),
    );
    green(path, second.headSha, iid);
    const done = await cluster.waitForProject(project, (s) => s.tasks.get("T-C")?.status === "done", 120_000);
    const main = await forge.git.resolve(path, "refs/heads/main");
    expect(pr(done, "T-C")).toMatchObject({ status: "merged", mergeCommitSha: main, mergedBy: BOT.username });
    expect(await forge.git.git(path, ["show", `${main}:src/app.ts`])).toBe(
      "export const a = 1;\nexport const b = 2;",
    );
    expect(forge.mergeRequests(path)).toHaveLength(1);
    expect(forge.takeViolations()).toEqual([]);
  }, 600_000);
});
