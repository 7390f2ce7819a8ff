/**
 * A stacked pair of tasks on GitLab, end to end (README "Land through pull requests";
 * docs/state-machine.md rule 19): a real coordinator with its forge runner, a real worker with
 * bwrap and git, Postgres and Redis; only the forge is the GitLab double (real git over smart
 * HTTP with `main` protected and "Pipelines must succeed"), read by polling.
 *
 * `prerequisites: stacked`: B (after A) starts while A's pull request is open, from A's PR
 * branch; B's merge request targets `overseer/pr/A` and, green, is not merged into it; A merges
 * → B's merge request is retargeted onto `main` (GitLab: PUT of its target_branch) → B merges.
 */

import { listEvents } from "@overseer/db";
import type { ProjectState } from "@overseer/domain";
import { GitLabDouble } from "@overseer/test-support";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClusterFixture, scriptedTask } from "../support/cluster-fixture.ts";
import { pr } from "./pull-request-state.ts";

const REPO = "acme/gitlab-stacked";
const BOT = { username: "overseer-bot", token: "glpat-overseer-stacked", accessLevel: 40 };
const CI = "test";

let forge: GitLabDouble;
const cluster = new ClusterFixture({ sandbox: "bwrap" });

beforeAll(async () => {
  forge = await GitLabDouble.start();
  forge.addUser(BOT);
  await forge.createProject(REPO, { "README.md": "# app\n" }, { pipelineMustSucceed: true });
  await forge.protectBranch(REPO, ["main"]);
  await cluster.setup();
  await cluster.startCoordinator("coord-gitlab-stacked", { forgeRetryBaseMs: 20 });
  await cluster.startWorker(2);
}, 120_000);

afterAll(async () => {
  await cluster.teardown();
  await forge?.close();
});

const isOpen = (state: ProjectState, id: string) =>
  state.tasks.get(id)?.status === "pr_open" && pr(state, id)?.status === "open";
/** A green merge request pipeline on `sha`. */
const green = (sha: string, iid: number) =>
  forge.setPipeline(
    REPO,
    sha,
    [{ name: CI, status: "success" }],
    `refs/merge-requests/${iid}/head`,
    "merge_request_event",
  );

describe("a stacked pair of pull requests (GitLab double, coordinator + worker + bwrap)", () => {
  it("B builds on A's PR branch and targets it, is retargeted onto main when A merges, then merges", async () => {
    const project = "gitlab-stacked";
    await cluster.addProject({
      id: project,
      tasks: [
        scriptedTask("A", 'execute: write src/A.ts "export const x = 1;\\n"; submit "A"\nreview: approve'),
        scriptedTask("B", 'execute: write src/B.ts "export const y = 2;\\n"; submit "B"\nreview: approve', {
          prerequisites: ["A"],
        }),
      ],
      remote: () => forge.cloneUrl(REPO),
      runnerConfig: ClusterFixture.fakeRunnerConfig({
        landing: {
          mode: "pull_request",
          pull_request: {
            poll_seconds: 1,
            required_checks: [CI],
            merge: "auto",
            required_approvals: 0,
            prerequisites: "stacked",
          },
        },
        forge: { kind: "gitlab", url: forge.url, repository: REPO, token: BOT.token },
      }),
    });

    // 1. Both pull requests open; B's targets A's PR branch and B's head builds on A's.
    const both = await cluster.waitForProject(project, (s) => isOpen(s, "A") && isOpen(s, "B"), 240_000);
    const a = pr(both, "A");
    const b = pr(both, "B");
    if (!a?.number || !b?.number) throw new Error("no pull requests");
    const pull = (n: number) => forge.mergeRequests(REPO).find((m) => m.iid === n);
    expect(b.base).toBe("overseer/pr/A");
    expect(pull(b.number)?.target).toBe("overseer/pr/A");
    expect(pull(a.number)?.target).toBe("main");
    await forge.git.git(REPO, ["merge-base", "--is-ancestor", a.headSha, b.headSha]);

    // 2. B green first: it is never merged into A's branch (it waits for A).
    green(b.headSha, b.number);
    await cluster.waitForProject(project, (s) => pr(s, "B")?.checks === "success", 60_000);
    expect(pull(b.number)?.state).toBe("opened");
    expect(await forge.git.resolve(REPO, "refs/heads/overseer/pr/A")).toBe(a.headSha);

    // 3. A green: Overseer merges A; B is retargeted onto main, then merged there (B's head
    //    did not change, so its green head pipeline still counts).
    green(a.headSha, a.number);
    const done = await cluster.waitForProject(
      project,
      (s) => s.tasks.get("A")?.status === "done" && s.tasks.get("B")?.status === "done",
      180_000,
    );
    expect(pull(b.number)).toMatchObject({ target: "main", state: "merged" });
    const main = await forge.git.resolve(REPO, "refs/heads/main");
    expect(pr(done, "B")).toMatchObject({ status: "merged", base: "main", mergeCommitSha: main });
    expect(await forge.git.git(REPO, ["show", `${main}:src/A.ts`])).toBe("export const x = 1;");
    expect(await forge.git.git(REPO, ["show", `${main}:src/B.ts`])).toBe("export const y = 2;");
    const retargeted = await listEvents(cluster.scratch.db, {
      projectId: project,
      taskId: "B",
      types: ["pr.retarget_requested"],
      limit: 10,
    });
    expect(retargeted.map((e) => e.data)).toEqual([
      expect.objectContaining({ number: b.number, from: "overseer/pr/A", to: "main" }),
    ]);
    expect(forge.mergeRequests(REPO)).toHaveLength(2);
    expect(forge.takeViolations()).toEqual([]);
  }, 600_000);
});
