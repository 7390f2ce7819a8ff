/**
 * A stacked prerequisite closed unmerged (docs/state-machine.md rule 20), end to end: a real
 * coordinator with its forge runner, a real worker with bwrap and git, Postgres and Redis; only
 * the forge is the GitHub double (real git over smart HTTP with `main` protected, REST
 * validated against @octokit/openapi), read by ETag polling.
 *
 * B is stacked on A (`prerequisites: stacked`): B's pull request targets `overseer/pr/A`. A
 * person closes A's pull request unmerged (`on_closed: cancel`) → A is cancelled and B waits on
 * a "Needs you" card → the operator answers `retarget` → B's pull request targets `main` on the
 * forge at once (the answer asks the runner for it; nothing on the forge changed, so no poll
 * would have noticed), while B's new executor is still at work → B's approved head updates the
 * same pull request, green → merged under `auto`.
 */

import { randomUUID } from "node:crypto";
import { listEvents } from "@overseer/db";
import { type ProjectState, RETARGET_OPTION_ID } from "@overseer/domain";
import { GitHubDouble } from "@overseer/test-support";
import { TransitionApplier } from "@overseer/transitions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClusterFixture, scriptedTask } from "../support/cluster-fixture.ts";
import { pr, until } from "./pull-request-state.ts";

const REPO = "acme/stacked-closed";
const BOT = { login: "overseer-bot", token: "ghp_overseer_stacked_closed" };
const HUMAN = { login: "alice", token: "ghp_alice_stacked_closed" };

let forge: GitHubDouble;
const cluster = new ClusterFixture({ sandbox: "bwrap" });

beforeAll(async () => {
  forge = await GitHubDouble.start();
  forge.addUser(BOT);
  forge.addUser(HUMAN);
  await forge.createRepository(REPO, { "README.md": "# app\n" });
  await forge.protectBranch(REPO, ["main"], ["ci"]);
  await cluster.setup();
  // GitHub writes unpaced (OVERSEER_GITHUB_WRITE_INTERVAL_MS=0): the double sets no limit.
  await cluster.startCoordinator("coord-stacked-closed", { forgeRetryBaseMs: 20, githubWriteIntervalMs: 0 });
  await cluster.startWorker(2);
}, 120_000);

afterAll(async () => {
  await cluster.teardown();
  await forge?.close();
});

const isOpen = (state: ProjectState, id: string) =>
  state.tasks.get(id)?.status === "pr_open" && pr(state, id)?.status === "open";

describe("rule 20 end to end: a stacked prerequisite closed unmerged (GitHub double, coordinator + worker + bwrap)", () => {
  it("the operator's retarget moves the stacked pull request onto main at once; it then merges there", async () => {
    const project = "pr-stacked-closed";
    await cluster.addProject({
      id: project,
      tasks: [
        scriptedTask("A", 'execute: write src/A.ts "export const a = 1;\\n"; submit "A"\nreview: approve'),
        scriptedTask(
          "B",
          [
            'execute: write src/B.ts "export const b = 1;\\n"; submit "B"',
            // After the retarget: a slow executor, so the forge's base is seen to move while it works.
            'execute#2: sleep 45; delete src/A.ts; write src/B.ts "export const b = 2;\\n"; submit "B without A"',
            "review: approve",
          ].join("\n"),
          { prerequisites: ["A"] },
        ),
      ],
      remote: () => forge.cloneUrl(REPO),
      runnerConfig: ClusterFixture.fakeRunnerConfig({
        timeout_seconds: 180,
        landing: {
          mode: "pull_request",
          pull_request: {
            poll_seconds: 1,
            required_checks: ["ci"],
            merge: "auto",
            required_approvals: 0,
            prerequisites: "stacked",
            on_closed: "cancel",
          },
        },
        forge: { kind: "github", url: forge.url, repository: REPO, token: BOT.token },
      }),
    });

    // 1. Both pull requests open; B's targets A's PR branch.
    const both = await cluster.waitForProject(project, (s) => isOpen(s, "A") && isOpen(s, "B"), 240_000);
    const a = pr(both, "A");
    const b = pr(both, "B");
    if (!a?.number || !b?.number) throw new Error("no pull requests");
    const bNumber = b.number;
    const forgeBase = () => forge.pulls(REPO).find((p) => p.number === bNumber)?.base;
    expect(forgeBase()).toBe("overseer/pr/A");

    // 2. Alice closes A's pull request unmerged: A is cancelled, B waits on rule 20's card.
    await forge.closeByHuman(REPO, a.number, HUMAN.login);
    const asked = await cluster.waitForProject(
      project,
      (s) => s.tasks.get("A")?.status === "cancelled" && s.tasks.get("B")?.status === "awaiting_input",
      120_000,
    );
    const card = [...asked.decisions.values()].find((d) => d.itemId === "B" && d.status === "pending");
    if (!card) throw new Error("no card for B");
    expect(card.options.map((o) => o.id)).toEqual([RETARGET_OPTION_ID, "stop"]);
    expect(forgeBase()).toBe("overseer/pr/A");

    // 3. The operator answers retarget: the forge's pull request targets main while B's new
    //    executor still runs (it sleeps 45 s before it submits; runs may take 180 s).
    await new TransitionApplier({ db: cluster.scratch.db }).apply(project, {
      kind: "resolve-decision",
      decisionId: card.id,
      optionId: RETARGET_OPTION_ID,
      by: "operator",
      resolutionId: randomUUID(),
    });
    const answeredAt = Date.now();
    const executorOf = async () =>
      cluster.scratch.db
        .selectFrom("runs")
        .select(["status"])
        .where("project_id", "=", project)
        .where("task_id", "=", "B")
        .where("action", "=", "execute")
        .orderBy("created_at")
        .execute();
    const submitted = async () =>
      (await executorOf()).some((r, i) => i > 0 && r.status !== "queued" && r.status !== "running");
    await until(async () => forgeBase() === "main" || (await submitted()), 120_000);
    const retargetMs = Date.now() - answeredAt;
    expect(forgeBase()).toBe("main");
    expect(await submitted()).toBe(false);
    const retargeted = await listEvents(cluster.scratch.db, {
      projectId: project,
      taskId: "B",
      types: ["pr.base_closed", "pr.retarget_requested"],
      limit: 10,
    });
    expect(retargeted.map((e) => e.type)).toEqual(["pr.base_closed", "pr.retarget_requested"]);
    expect(retargeted[1]?.data).toMatchObject({ number: bNumber, from: "overseer/pr/A", to: "main" });

    // 4. B's new head updates the same pull request on main; green, Overseer merges it.
    const updated = await cluster.waitForProject(
      project,
      (s) => isOpen(s, "B") && pr(s, "B")?.headSha !== b.headSha,
      240_000,
    );
    const head = pr(updated, "B");
    if (!head) throw new Error("no pull request");
    expect(head).toMatchObject({ number: bNumber, base: "main" });
    forge.setCheckRun(REPO, head.headSha, { name: "ci", conclusion: "success" });
    const done = await cluster.waitForProject(project, (s) => s.tasks.get("B")?.status === "done", 120_000);
    const main = await forge.git.resolve(REPO, "refs/heads/main");
    expect(pr(done, "B")).toMatchObject({ status: "merged", base: "main", mergeCommitSha: main });
    expect(await forge.git.git(REPO, ["show", `${main}:src/B.ts`])).toBe("export const b = 2;");
    expect(forge.pulls(REPO)).toHaveLength(2);
    expect(forge.takeViolations()).toEqual([]);
    console.log(JSON.stringify({ figure: "stacked-closed-retarget", answerToForgeRetargetMs: retargetMs }));
  }, 600_000);
});
