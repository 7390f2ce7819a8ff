/**
 * Landing through pull requests, end to end (README "Land through pull requests"): a real
 * coordinator (with its forge runner), a real worker with bwrap and git, Postgres and Redis;
 * only the forge is the GitHub double (real git over smart HTTP with `main` protected, REST
 * validated against @octokit/openapi, GraphQL against @octokit/graphql-schema). No webhook
 * reaches the coordinator here: everything the forge says is caught by ETag polling.
 *
 * The main path: the reviewer approves → the worker pushes overseer/pr/T → the runner opens the
 * pull request → CI red → the failing check's log tail goes to an executor → fix → green → a
 * person requests changes with an inline comment → fix, the thread answered → approved →
 * merged by Overseer under `merge: auto`. Figures (forge API calls per task, green → merged)
 * are printed for the closing note.
 */

import { describe, expect, it } from "vitest";
import { scriptedTask } from "../support/cluster-fixture.ts";
import { useGitHubCase } from "./github-setup.ts";
import { printLoopFigures } from "./loop-figures.ts";
import { openOn, pr, until } from "./pull-request-state.ts";

const REPO = "acme/app";
const gh = useGitHubCase({ repo: REPO, tag: "e2e", coordinator: "coord-pr", workers: 2 });
const { cluster, bot: BOT, human: HUMAN } = gh;

describe("pull_request mode on the GitHub double (coordinator + worker + bwrap + git)", () => {
  it("CI red → fix → green → changes requested inline → fix answering the thread → approved → merged (auto)", async () => {
    const project = "pr-main";
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
      remote: () => gh.forge.cloneUrl(REPO),
      runnerConfig: gh.pullRequestConfig(
        { labels: ["overseer"], merge: "auto", required_approvals: 1 },
        { attempts: 3 },
      ),
    });

    // 1. Approved: the pull request is open on the approved head; main did not move.
    const opened = await cluster.waitForProject(project, (s) => openOn(s, "T-1"), 120_000);
    const first = pr(opened, "T-1");
    if (!first?.number) throw new Error("no pull request");
    const pull = gh.forge.pulls(REPO).find((p) => p.number === first.number);
    expect(pull).toMatchObject({
      head: "overseer/pr/T-1",
      base: "main",
      title: "T-1: Bump v",
      labels: ["overseer"],
    });
    expect(pull?.body).toContain("<!-- overseer:task:T-1 -->");
    expect(pull?.body).toContain("v is bumped");
    expect(pull?.body).toContain("Looks right");
    expect(await gh.forge.git.resolve(REPO, "refs/heads/overseer/pr/T-1")).toBe(first.headSha);
    const mainBefore = await gh.forge.git.resolve(REPO, "refs/heads/main");

    // 2. CI red: the failing check's log tail reaches the next executor; its fix updates the same PR.
    gh.forge.setCheckRun(REPO, first.headSha, {
      name: "ci",
      conclusion: "failure",
      log: `${"setup\n".repeat(50)}FAIL src/app.test.ts\nexpected v to be 2, got 1\n`,
    });
    const fixed = await cluster.waitForProject(project, (s) => openOn(s, "T-1", first.headSha), 180_000);
    const second = pr(fixed, "T-1");
    if (!second?.number) throw new Error("no pull request");
    expect(second.number).toBe(first.number);
    const prompts = await cluster.scratch.db
      .selectFrom("runs")
      .select(["action", "prompt"])
      .where("project_id", "=", project)
      .orderBy("created_at")
      .execute();
    const executes = prompts.filter((r) => r.action === "execute");
    expect(executes[1]?.prompt).toContain("expected v to be 2, got 1");

    // 3. Green, and a person requests changes with an inline comment on the updated pull request.
    const secondNumber = second.number;
    await until(() =>
      (gh.forge.pulls(REPO).find((p) => p.number === secondNumber)?.body ?? "").includes(
        second.headSha.slice(0, 12),
      ),
    );
    gh.forge.setCheckRun(REPO, second.headSha, { name: "ci", conclusion: "success" });
    await gh.forge.review(REPO, second.number, {
      login: HUMAN.login,
      state: "CHANGES_REQUESTED",
      body: "One thing.",
      comments: [{ path: "src/app.ts", line: 1, body: "Name the constant." }],
    });
    const answered = await cluster.waitForProject(project, (s) => openOn(s, "T-1", second.headSha), 180_000);
    const third = pr(answered, "T-1");
    if (!third?.number) throw new Error("no pull request");
    const runs = await cluster.scratch.db
      .selectFrom("runs")
      .select(["action", "prompt"])
      .where("project_id", "=", project)
      .where("action", "=", "execute")
      .orderBy("created_at")
      .execute();
    expect(runs[2]?.prompt).toContain("Name the constant.");
    expect(runs[2]?.prompt).toContain("src/app.ts");
    // The thread is answered by the push that addresses it.
    const number = third.number;
    await until(() => gh.forge.threads(REPO, number)[0]?.comments.at(-1)?.login === BOT.login);
    expect(gh.forge.threads(REPO, number)[0]?.comments.at(-1)?.body).toContain(third.headSha);

    // 4. Green and approved on the new head: Overseer merges it with the approved sha.
    gh.forge.setCheckRun(REPO, third.headSha, { name: "ci", conclusion: "success" });
    await gh.forge.review(REPO, third.number, { login: HUMAN.login, state: "APPROVED" });
    const done = await cluster.waitForProject(project, (s) => s.tasks.get("T-1")?.status === "done", 120_000);
    const merged = pr(done, "T-1");
    const main = await gh.forge.git.resolve(REPO, "refs/heads/main");
    expect(main).not.toBe(mainBefore);
    expect(merged).toMatchObject({ status: "merged", mergeCommitSha: main, mergedBy: BOT.login });
    expect(gh.forge.pulls(REPO).filter((p) => p.head === "overseer/pr/T-1")).toHaveLength(1);
    expect(await gh.forge.git.git(REPO, ["show", `${main}:src/app.ts`])).toContain("v = 3");
    expect(gh.forge.takeViolations()).toEqual([]);

    // Figures for the closing note.
    const row = await printLoopFigures(cluster.scratch.db, project, { figure: "pull-request-loop" });
    expect(row.api_calls).toBeGreaterThan(0);
  }, 600_000);
});
