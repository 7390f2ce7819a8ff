/**
 * Landing through pull requests on Gitea / Forgejo, end to end: a real coordinator (with its
 * forge runner), a real worker with bwrap and git, Postgres and Redis; only the forge is the
 * Gitea double (real git over smart HTTP with `main` protected and a required status, REST
 * checked against Gitea's swagger models as gitea-js types them). No webhook reaches the
 * coordinator: everything the forge says is caught by polling (Gitea answers no ETags).
 *
 * The main path, as on GitHub (pull-request-loop.e2e.ts): the reviewer approves → the worker
 * pushes overseer/pr/T → the runner opens the pull request (creating its missing label) →
 * the Gitea Actions job fails → its log tail goes to an executor → fix → green → a person
 * requests changes with an inline comment → fix, the thread answered on its line → approved
 * → merged by Overseer under `merge: auto`. Figures (forge API calls per task, green → merged)
 * are printed for the closing note.
 */

import { GiteaDouble } from "@overseer/test-support";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClusterFixture, scriptedTask } from "../support/cluster-fixture.ts";
import { printLoopFigures, requestsByRoute } from "./loop-figures.ts";
import { openOn, pr, until } from "./pull-request-state.ts";

const REPO = "acme/app";
const BOT = { login: "overseer-bot", token: "gitea-overseer-e2e" };
const HUMAN = { login: "alice", token: "gitea-alice-e2e" };
/** The status Gitea Actions sets for job `test` of workflow `CI` on a pull request. */
const CI = "CI / test (pull_request)";

let forge: GiteaDouble;
const cluster = new ClusterFixture({ sandbox: "bwrap" });

beforeAll(async () => {
  forge = await GiteaDouble.start();
  forge.addUser(BOT);
  forge.addUser(HUMAN);
  await forge.createRepository(REPO, { "README.md": "# app\n", "src/app.ts": "export const v = 0;\n" });
  await forge.protectBranch(REPO, ["main"], [CI]);
  await cluster.setup();
  await cluster.startCoordinator("coord-gitea", { forgeRetryBaseMs: 20 });
  await cluster.startWorker(2);
}, 120_000);

afterAll(async () => {
  await cluster.teardown();
  await forge?.close();
});

function prConfig(pullRequest: Record<string, unknown>) {
  return ClusterFixture.fakeRunnerConfig({
    attempts: 3,
    landing: {
      mode: "pull_request",
      pull_request: { labels: ["overseer"], poll_seconds: 1, required_checks: [CI], ...pullRequest },
    },
    forge: { kind: "gitea", url: forge.url, repository: REPO, token: BOT.token },
  });
}

async function executePrompts(project: string): Promise<string[]> {
  const runs = await cluster.scratch.db
    .selectFrom("runs")
    .select(["prompt"])
    .where("project_id", "=", project)
    .where("action", "=", "execute")
    .orderBy("created_at")
    .execute();
  return runs.map((r) => r.prompt ?? "");
}

describe("pull_request mode on the Gitea double (coordinator + worker + bwrap + git)", () => {
  it("Actions job red → fix from its log → green → changes requested inline → fix answering the thread → approved → merged (auto)", async () => {
    const project = "gitea-main";
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
      remote: () => forge.cloneUrl(REPO),
      runnerConfig: prConfig({ merge: "auto", required_approvals: 1 }),
    });

    // 1. Approved: the pull request is open on the approved head, with the label Overseer created.
    const opened = await cluster.waitForProject(project, (s) => openOn(s, "T-1"), 120_000);
    const first = pr(opened, "T-1");
    if (!first?.number) throw new Error("no pull request");
    const pull = forge.pulls(REPO).find((p) => p.number === first.number);
    if (!pull) throw new Error("the pull request is not on the forge");
    expect(pull).toMatchObject({ head: "overseer/pr/T-1", base: "main", title: "T-1: Bump v" });
    expect(forge.labelNames(REPO, pull)).toEqual(["overseer"]);
    expect(pull.body).toContain("<!-- overseer:task:T-1 -->");
    expect(pull.body).toContain("v is bumped");
    expect(pull.body).toContain("Looks right");
    expect(await forge.git.resolve(REPO, "refs/heads/overseer/pr/T-1")).toBe(first.headSha);
    const mainBefore = await forge.git.resolve(REPO, "refs/heads/main");

    // 2. The Gitea Actions job fails: its log tail reaches the next executor; the fix updates the same PR.
    forge.actionsJob(REPO, first.headSha, {
      workflow: "CI",
      job: "test",
      state: "failure",
      branch: "overseer/pr/T-1",
      log: `${"setup\n".repeat(50)}FAIL src/app.test.ts\nexpected v to be 2, got 1\n`,
    });
    const fixed = await cluster.waitForProject(project, (s) => openOn(s, "T-1", first.headSha), 180_000);
    const second = pr(fixed, "T-1");
    if (!second?.number) throw new Error("no pull request");
    expect(second.number).toBe(first.number);
    const afterRed = await executePrompts(project);
    expect(afterRed[1]).toContain("expected v to be 2, got 1");
    expect(afterRed[1]).toContain(CI);

    // 3. Green, and a person requests changes with an inline comment on the updated pull request.
    const number = second.number;
    await until(() =>
      (forge.pulls(REPO).find((p) => p.number === number)?.body ?? "").includes(second.headSha.slice(0, 12)),
    );
    forge.actionsJob(REPO, second.headSha, { workflow: "CI", job: "test", state: "success", log: "ok\n" });
    await forge.review(REPO, number, {
      login: HUMAN.login,
      state: "REQUEST_CHANGES",
      body: "One thing.",
      comments: [{ path: "src/app.ts", line: 1, body: "Name the constant." }],
    });
    const answered = await cluster.waitForProject(project, (s) => openOn(s, "T-1", second.headSha), 180_000);
    const third = pr(answered, "T-1");
    if (!third?.number) throw new Error("no pull request");
    const afterReview = await executePrompts(project);
    expect(afterReview[2]).toContain("Name the constant.");
    expect(afterReview[2]).toContain("src/app.ts");
    // The thread is answered on its line by the push that addresses it.
    await until(() => forge.threads(REPO, number)[0]?.comments.at(-1)?.login === BOT.login);
    const [thread] = forge.threads(REPO, number);
    expect(thread).toMatchObject({ path: "src/app.ts", line: 1 });
    expect(thread?.comments.at(-1)?.body).toContain(third.headSha);

    // 4. Green and approved on the new head: Overseer merges it with the approved sha.
    forge.actionsJob(REPO, third.headSha, { workflow: "CI", job: "test", state: "success", log: "ok\n" });
    await forge.review(REPO, number, { login: HUMAN.login, state: "APPROVED" });
    const done = await cluster.waitForProject(project, (s) => s.tasks.get("T-1")?.status === "done", 120_000);
    const merged = pr(done, "T-1");
    const main = await forge.git.resolve(REPO, "refs/heads/main");
    expect(main).not.toBe(mainBefore);
    expect(merged).toMatchObject({ status: "merged", mergeCommitSha: main, mergedBy: BOT.login });
    expect(forge.pulls(REPO).filter((p) => p.head === "overseer/pr/T-1")).toHaveLength(1);
    expect(await forge.git.git(REPO, ["show", `${main}:src/app.ts`])).toContain("v = 3");
    expect(forge.takeViolations()).toEqual([]);

    // Figures for the closing note: every API request the double saw (only Overseer calls the
    // API here), by route.
    const byRoute = requestsByRoute(forge.requests, (p) =>
      p.replace(/\?.*$/, "").replace(/\/[0-9a-f]{40}|\/\d+/g, "/:id"),
    );
    const row = await printLoopFigures(
      cluster.scratch.db,
      project,
      { figure: "pull-request-loop", forge: "gitea" },
      byRoute,
    );
    expect(row.api_calls).toBeGreaterThan(0);
  }, 600_000);
});
