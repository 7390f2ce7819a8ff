/**
 * Landing through pull requests, end to end: a conflict with a moved base (README "Land through
 * pull requests", step 6; docs/state-machine.md rule 18). A real coordinator with its forge
 * runner, a real worker with bwrap and git, Postgres and Redis; only the forge is the GitHub
 * double (real git over smart HTTP with `main` protected, REST validated against
 * @octokit/openapi), read by ETag polling.
 *
 * The approved head's pull request is open; a person pushes a conflicting commit to `main`; the
 * forge says the pull request no longer merges → `pr-conflict` sends the task to a conflict-only
 * executor whose checkout is the task branch with the base merged in (markers committed), its
 * prompt naming the pull request and its base → its resolution is reviewed and pushed to the
 * same pull request (a fast-forward: the merge commit's first parent is the head the pull
 * request carried) → green → merged under `auto`, with both sides' change on `main`.
 */

import { listEvents } from "@overseer/db";
import { GitHubDouble } from "@overseer/test-support";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClusterFixture, scriptedTask } from "../support/cluster-fixture.ts";
import { pr } from "./pull-request-state.ts";

const REPO = "acme/conflict";
const BOT = { login: "overseer-bot", token: "ghp_overseer_conflict" };

let forge: GitHubDouble;
const cluster = new ClusterFixture({ sandbox: "bwrap" });

beforeAll(async () => {
  forge = await GitHubDouble.start();
  forge.addUser(BOT);
  await forge.createRepository(REPO, {
    "README.md": "# app\n",
    "src/app.ts": "export const a = 0;\nexport const b = 0;\n",
  });
  await forge.protectBranch(REPO, ["main"], ["ci"]);
  await cluster.setup();
  // GitHub writes unpaced (OVERSEER_GITHUB_WRITE_INTERVAL_MS=0): the double sets no limit.
  await cluster.startCoordinator("coord-conflict", { forgeRetryBaseMs: 20, githubWriteIntervalMs: 0 });
  await cluster.startWorker(2);
}, 120_000);

afterAll(async () => {
  await cluster.teardown();
  await forge?.close();
});

describe("pull_request mode: the base moved into a conflict (GitHub double, coordinator + worker + bwrap)", () => {
  it("unmergeable → the base merged into the task branch → conflict-only run → same pull request green → merged", async () => {
    const project = "pr-conflict";
    const task = scriptedTask(
      "T-C",
      [
        'execute: write src/app.ts "export const a = 1;\\nexport const b = 0;\\n"; submit "Set a to 1"',
        // The conflict-only run: keeps both sides' intent (its a = 1, the base's b = 2).
        'execute#2: write src/app.ts "export const a = 1;\\nexport const b = 2;\\n"; submit "Resolve the conflict with main"',
        'review: approve "Looks right"',
      ].join("\n"),
      { title: "Set a" },
    );
    await cluster.addProject({
      id: project,
      tasks: [task],
      remote: () => forge.cloneUrl(REPO),
      runnerConfig: ClusterFixture.fakeRunnerConfig({
        attempts: 3,
        landing: {
          mode: "pull_request",
          pull_request: { poll_seconds: 1, required_checks: ["ci"], merge: "auto", required_approvals: 0 },
        },
        forge: { kind: "github", url: forge.url, repository: REPO, token: BOT.token },
      }),
    });

    // 1. The approved head's pull request is open (checks pending: nothing merges yet).
    const opened = await cluster.waitForProject(
      project,
      (s) => pr(s, "T-C")?.status === "open" && s.tasks.get("T-C")?.status === "pr_open",
      120_000,
    );
    const first = pr(opened, "T-C");
    if (!first?.number) throw new Error("no pull request");
    const number = first.number;

    // 2. A person pushes a conflicting change to main (the same line region of src/app.ts).
    const human = await forge.git.commitFiles(
      REPO,
      "main",
      { "src/app.ts": "export const a = 2;\nexport const b = 2;\n" },
      "Set a and b to 2",
    );

    // 3. The forge says it no longer merges: the task goes to a conflict-only executor, whose
    //    resolution is approved and pushed to the same pull request.
    const updated = await cluster.waitForProject(
      project,
      (s) =>
        s.tasks.get("T-C")?.status === "pr_open" &&
        pr(s, "T-C")?.status === "open" &&
        pr(s, "T-C")?.headSha !== first.headSha,
      240_000,
    );
    const second = pr(updated, "T-C");
    if (!second) throw new Error("no pull request");
    expect(second.number).toBe(number);
    expect(second.base).toBe("main");
    const failed = await listEvents(cluster.scratch.db, {
      projectId: project,
      taskId: "T-C",
      types: ["task.landing_failed"],
      limit: 10,
    });
    expect(failed).toHaveLength(1);
    expect(failed[0]?.data).toMatchObject({ reason: "conflict", branch: "main", pullRequest: number });
    const executes = await cluster.scratch.db
      .selectFrom("runs")
      .select(["prompt"])
      .where("project_id", "=", project)
      .where("action", "=", "execute")
      .orderBy("created_at")
      .execute();
    expect(executes).toHaveLength(2);
    const prompt = executes[1]?.prompt ?? "";
    expect(prompt).toContain("## Resolve the merge conflict");
    expect(prompt).toContain(`its pull request #${number}`);
    expect(prompt).toContain("no longer merges: it conflicts with the current `main`");
    // The branch was updated by merging the base (never rewritten): the new head is a merge of
    // the head the pull request carried and the person's commit, so the PR branch fast-forwarded.
    const parents = (await forge.git.git(REPO, ["rev-list", "--parents", "-n", "1", second.headSha]))
      .split(" ")
      .slice(1);
    expect(parents).toEqual([first.headSha, human]);
    expect(await forge.git.resolve(REPO, "refs/heads/overseer/pr/T-C")).toBe(second.headSha);
    expect(await forge.git.git(REPO, ["show", `${second.headSha}:src/app.ts`])).not.toContain("<<<<<<<");

    // 4. Green on the resolved head: Overseer merges it; main holds both sides' change.
    forge.setCheckRun(REPO, second.headSha, { name: "ci", conclusion: "success" });
    const done = await cluster.waitForProject(project, (s) => s.tasks.get("T-C")?.status === "done", 120_000);
    const main = await forge.git.resolve(REPO, "refs/heads/main");
    expect(pr(done, "T-C")).toMatchObject({ status: "merged", mergeCommitSha: main, mergedBy: BOT.login });
    expect(await forge.git.git(REPO, ["show", `${main}:src/app.ts`])).toBe(
      "export const a = 1;\nexport const b = 2;",
    );
    await forge.git.git(REPO, ["merge-base", "--is-ancestor", human, `${main}`]);
    expect(forge.pulls(REPO).filter((p) => p.head === "overseer/pr/T-C")).toHaveLength(1);
    expect(forge.takeViolations()).toEqual([]);
  }, 600_000);
});
