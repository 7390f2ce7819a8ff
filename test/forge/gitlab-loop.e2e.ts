/**
 * Landing through merge requests on GitLab, end to end (README "Land through pull requests"):
 * a real coordinator (with its forge runner), a real worker with bwrap and git, Postgres and
 * Redis; only the forge is the GitLab double (real git over smart HTTP with `main` protected and
 * "Pipelines must succeed", REST checked against GitLab's documented parameters and example
 * answers typed by gitbeaker). No webhook reaches the coordinator: everything is polled.
 *
 * The main path, as on GitHub (pull-request-loop.e2e.ts): the reviewer approves → the worker
 * pushes overseer/pr/T → the runner opens the merge request → the head pipeline fails → the
 * failing job's trace tail (cleaned of the runner's colour codes) goes to an executor → fix →
 * green → a person requests changes and opens an inline discussion → a fix, the thread answered
 * → approved → merged by Overseer under `merge: auto`. Figures (forge API calls per task, green
 * → merged) are printed for the closing note.
 */

import { GitLabDouble } from "@overseer/test-support";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClusterFixture, scriptedTask } from "../support/cluster-fixture.ts";
import { printLoopFigures, requestsByRoute } from "./loop-figures.ts";
import { openOn, pr, until } from "./pull-request-state.ts";

const PROJECT = "acme/platform/app";
const BOT = { username: "overseer-bot", token: "glpat-overseer-e2e", accessLevel: 40 };
const HUMAN = { username: "alice", token: "glpat-alice-e2e", accessLevel: 40 };
const ESC = "\u001b";

let forge: GitLabDouble;
const cluster = new ClusterFixture({ sandbox: "bwrap" });

beforeAll(async () => {
  forge = await GitLabDouble.start();
  forge.addUser(BOT);
  forge.addUser(HUMAN);
  await forge.createProject(
    PROJECT,
    { "README.md": "# app\n", "src/app.ts": "export const v = 0;\n" },
    { pipelineMustSucceed: true },
  );
  await forge.protectBranch(PROJECT, ["main"]);
  await cluster.setup();
  await cluster.startCoordinator("coord-gitlab", { forgeRetryBaseMs: 20 });
  await cluster.startWorker(2);
}, 120_000);

afterAll(async () => {
  await cluster.teardown();
  await forge?.close();
});

/** The merge request's description names `head` once `ensure` updated it for that head. */
async function describes(number: number, head: string): Promise<void> {
  await until(() =>
    (forge.mergeRequests(PROJECT).find((m) => m.iid === number)?.description ?? "").includes(
      head.slice(0, 12),
    ),
  );
}

/** A merge request pipeline on `sha` whose job `ci` ends as `status`. */
function pipeline(sha: string, number: number, status: "success" | "failed", log = "ok\n"): void {
  forge.setPipeline(
    PROJECT,
    sha,
    [{ name: "ci", status, log }],
    `refs/merge-requests/${number}/head`,
    "merge_request_event",
  );
}

/** The project's executor runs' prompts, oldest first. */
async function executorPrompts(project: string) {
  return cluster.scratch.db
    .selectFrom("runs")
    .select(["action", "prompt"])
    .where("project_id", "=", project)
    .where("action", "=", "execute")
    .orderBy("created_at")
    .execute();
}

/** Prints the loop's figures for the closing note (forge API calls, green → merged, by route). */
function printGitLabLoopFigures(project: string) {
  // The GitLab requests of this task by route (every REST request went to this one project so far).
  const byRoute = requestsByRoute(forge.requests, (p) =>
    p
      .replace(/^\/api\/v4\/projects\/[^/]+/, "")
      .replace(/\/[0-9a-f]{40}|\/\d+/g, "/:n")
      .replace(/\?.*$/, ""),
  );
  return printLoopFigures(cluster.scratch.db, project, { figure: "gitlab-merge-request-loop" }, byRoute);
}

describe("pull_request mode on the GitLab double (coordinator + worker + bwrap + git)", () => {
  it("pipeline red → fix with the job trace → green → inline discussion → fix answering it → approved → merged (auto)", async () => {
    const project = "gl-main";
    const task = scriptedTask(
      "T-1",
      [
        'execute: write src/app.ts "export const v = 1;\\n"; submit "First version"',
        'execute#2: write src/app.ts "export const v = 2;\\n"; submit "Fix the failing test"',
        'execute#3: write src/app.ts "export const v = 3;\\n"; submit "Use a named constant, as asked"',
        'review: approve "Looks right"',
      ].join("\n"),
      { title: "Bump v", acceptance: ["v is bumped"] },
    );
    await cluster.addProject({
      id: project,
      tasks: [task],
      remote: () => forge.cloneUrl(PROJECT),
      runnerConfig: ClusterFixture.fakeRunnerConfig({
        attempts: 3,
        landing: {
          mode: "pull_request",
          pull_request: {
            labels: ["overseer"],
            poll_seconds: 1,
            required_checks: ["ci"],
            merge: "auto",
            merge_method: "squash",
            required_approvals: 1,
          },
        },
        forge: { kind: "gitlab", url: forge.url, repository: PROJECT, token: BOT.token },
      }),
    });

    // 1. Approved: the merge request is open on the approved head; main did not move.
    const opened = await cluster.waitForProject(project, (s) => openOn(s, "T-1"), 120_000);
    const first = pr(opened, "T-1");
    if (!first?.number) throw new Error("no merge request");
    const iid = first.number;
    const mr = forge.mergeRequests(PROJECT).find((m) => m.iid === iid);
    expect(mr).toMatchObject({
      source: "overseer/pr/T-1",
      target: "main",
      title: "T-1: Bump v",
      labels: ["overseer"],
      author: BOT.username,
    });
    expect(first.url).toBe(`${forge.url}/${PROJECT}/-/merge_requests/${iid}`);
    expect(mr?.description).toContain("<!-- overseer:task:T-1 -->");
    expect(mr?.description).toContain("v is bumped");
    expect(mr?.description).toContain("Looks right");
    expect(await forge.git.resolve(PROJECT, "refs/heads/overseer/pr/T-1")).toBe(first.headSha);
    const mainBefore = await forge.git.resolve(PROJECT, "refs/heads/main");

    // 2. The head pipeline fails: the job trace's tail, as GitLab's job page shows it, reaches
    //    the next executor; its fix updates the same merge request.
    await describes(iid, first.headSha);
    pipeline(
      first.headSha,
      iid,
      "failed",
      [
        `${ESC}[0Ksection_start:1700000000:step_script\r${ESC}[0K${ESC}[32;1m$ npm test${ESC}[0;m`,
        ..."setup\n".repeat(50).split("\n"),
        `${ESC}[31mFAIL${ESC}[0m src/app.test.ts`,
        "expected v to be 2, got 1",
        `${ESC}[0Ksection_end:1700000001:step_script\r${ESC}[0K`,
        `${ESC}[31;1mERROR: Job failed: exit code 1${ESC}[0;m`,
        "",
      ].join("\n"),
    );
    const fixed = await cluster.waitForProject(project, (s) => openOn(s, "T-1", first.headSha), 180_000);
    const second = pr(fixed, "T-1");
    if (!second?.number) throw new Error("no merge request");
    expect(second.number).toBe(iid);
    const executes = await executorPrompts(project);
    expect(executes[1]?.prompt).toContain("FAIL src/app.test.ts\nexpected v to be 2, got 1");
    expect(executes[1]?.prompt).toContain("ERROR: Job failed: exit code 1");
    expect(executes[1]?.prompt).not.toContain(ESC);
    expect(executes[1]?.prompt).not.toContain("section_end");

    // 3. Green, and a person requests changes and opens a discussion on a line of the diff.
    await describes(iid, second.headSha);
    pipeline(second.headSha, iid, "success");
    await forge.review(PROJECT, iid, HUMAN.username, "requested_changes");
    forge.comment(PROJECT, iid, {
      username: HUMAN.username,
      path: "src/app.ts",
      line: 1,
      body: "Name the constant.",
    });
    const answered = await cluster.waitForProject(project, (s) => openOn(s, "T-1", second.headSha), 180_000);
    const third = pr(answered, "T-1");
    if (!third?.number) throw new Error("no merge request");
    const runs = await executorPrompts(project);
    expect(runs[2]?.prompt).toContain("Name the constant.");
    expect(runs[2]?.prompt).toContain("src/app.ts:1");
    expect(runs[2]?.prompt).toContain("requested changes");
    // The discussion is answered by the push that addresses it.
    const thread = () => forge.discussions(PROJECT, iid)[0];
    await until(() => thread()?.notes.at(-1)?.author === BOT.username);
    expect(thread()?.notes.at(-1)?.body).toContain(third.headSha);

    // 4. Green and approved on the new head (her earlier "requested changes" was on the old one):
    //    Overseer merges it with the approved sha.
    await describes(iid, third.headSha);
    pipeline(third.headSha, iid, "success");
    await forge.review(PROJECT, iid, HUMAN.username, "approved");
    const done = await cluster.waitForProject(project, (s) => s.tasks.get("T-1")?.status === "done", 120_000);
    const merged = pr(done, "T-1");
    const main = await forge.git.resolve(PROJECT, "refs/heads/main");
    expect(main).not.toBe(mainBefore);
    expect(merged).toMatchObject({ status: "merged", mergeCommitSha: main, mergedBy: BOT.username });
    expect(forge.mergeRequests(PROJECT).filter((m) => m.source === "overseer/pr/T-1")).toHaveLength(1);
    expect(forge.mergeRequests(PROJECT).find((m) => m.iid === iid)).toMatchObject({
      state: "merged",
      squashCommitSha: main,
    });
    expect(await forge.git.git(PROJECT, ["show", `${main}:src/app.ts`])).toContain("v = 3");
    expect(forge.takeViolations()).toEqual([]);

    const row = await printGitLabLoopFigures(project);
    expect(row.api_calls).toBeGreaterThan(0);
  }, 600_000);

  it("merge: queue hands the approved merge request to GitLab's auto-merge while its pipeline runs; GitLab merges it when the pipeline succeeds", async () => {
    const project = "gl-queue";
    await cluster.addProject({
      id: project,
      tasks: [
        scriptedTask(
          "Q-1",
          'execute: write src/q.ts "export const q = 1;\\n"; submit "Add q"\nreview: approve',
          {
            title: "Add q",
          },
        ),
      ],
      remote: () => forge.cloneUrl(PROJECT),
      runnerConfig: ClusterFixture.fakeRunnerConfig({
        landing: {
          mode: "pull_request",
          pull_request: {
            poll_seconds: 1,
            required_checks: ["ci"],
            merge: "queue",
            merge_method: "merge",
            required_approvals: 1,
          },
        },
        forge: { kind: "gitlab", url: forge.url, repository: PROJECT, token: BOT.token },
      }),
    });
    const opened = await cluster.waitForProject(project, (s) => openOn(s, "Q-1"), 120_000);
    const head = pr(opened, "Q-1");
    if (!head?.number) throw new Error("no merge request");
    const iid = head.number;
    await describes(iid, head.headSha);
    const { jobIds } = forge.setPipeline(
      PROJECT,
      head.headSha,
      [{ name: "ci", status: "running" }],
      `refs/merge-requests/${iid}/head`,
      "merge_request_event",
    );
    const mainBefore = await forge.git.resolve(PROJECT, "refs/heads/main");
    await forge.review(PROJECT, iid, HUMAN.username, "approved");
    // Approved but not green yet: Overseer sets auto-merge on GitLab, which waits for the pipeline.
    await until(() => forge.mergeRequests(PROJECT).find((m) => m.iid === iid)?.autoMerge != null);
    expect(forge.mergeRequests(PROJECT).find((m) => m.iid === iid)).toMatchObject({
      state: "opened",
      autoMerge: { by: BOT.username, squash: false },
    });
    expect(await forge.git.resolve(PROJECT, "refs/heads/main")).toBe(mainBefore);
    forge.setJob(PROJECT, jobIds[0] ?? 0, "success");
    const done = await cluster.waitForProject(project, (s) => s.tasks.get("Q-1")?.status === "done", 120_000);
    const main = await forge.git.resolve(PROJECT, "refs/heads/main");
    expect(pr(done, "Q-1")).toMatchObject({ status: "merged", mergeCommitSha: main, mergedBy: BOT.username });
    const parents = await forge.git.git(PROJECT, ["log", "-1", "--format=%P", "main"]);
    expect(parents.split(" ")).toEqual([mainBefore, head.headSha]);
    expect(forge.takeViolations()).toEqual([]);
  }, 300_000);
});
