/**
 * Merged, by anyone (README "Land through pull requests"; docs/state-machine.md rule 18): a
 * person merges Overseer's pull request on the forge under `merge: manual`. A real coordinator
 * with its forge runner, a real worker with bwrap and git, Postgres and Redis, and the gateway
 * as its own process; only the forge is the GitHub double (real git over smart HTTP with
 * `main` protected, REST validated against @octokit/openapi), read by ETag polling.
 *
 * H's pull request is open and green; alice presses the merge button → the task is `done`
 * with her merge commit and her login recorded (`pr.merged`, `task.approved`, the API's task
 * view). W, another task of the project whose pull request stays open, is the witness that
 * the runner kept polling afterwards: by then Overseer has written nothing to the forge and
 * moved no ref.
 */

import { createApiToken, listEvents } from "@overseer/db";
import type { ProjectState } from "@overseer/domain";
import { afterAll, describe, expect, it } from "vitest";
import { scriptedTask } from "../support/cluster-fixture.ts";
import { type GatewayProcess, startGatewayProcess } from "../support/gateway-process.ts";
import { useGitHubCase } from "./github-setup.ts";
import { pr, until } from "./pull-request-state.ts";

const REPO = "acme/human-merge";
const gh = useGitHubCase({ repo: REPO, tag: "human_merge", coordinator: "coord-human-merge", workers: 2 });
const { cluster, human: HUMAN } = gh;
let gateway: GatewayProcess | null = null;

afterAll(async () => {
  await gateway?.service.kill("SIGTERM");
});

const isOpen = (state: ProjectState, id: string) =>
  state.tasks.get(id)?.status === "pr_open" && pr(state, id)?.status === "open";

/** Every ref of the forge's repository with its commit. */
const refs = () => gh.forge.git.git(REPO, ["for-each-ref", "--format=%(refname) %(objectname)"]);

describe("pull_request mode: merged by a person outside Overseer (GitHub double, merge: manual)", () => {
  it("a human merge makes the task done with the merge commit; Overseer moves nothing afterwards", async () => {
    const project = "pr-human-merge";
    await cluster.addProject({
      id: project,
      tasks: [
        scriptedTask(
          "H",
          'execute: write src/app.ts "export const v = 1;\\n"; submit "Bump v"\nreview: approve "Fine"',
          { title: "Bump v" },
        ),
        scriptedTask(
          "W",
          'execute: write src/w.ts "export const w = 1;\\n"; submit "Add w"\nreview: approve "Fine"',
          { title: "Add w" },
        ),
      ],
      remote: () => gh.forge.cloneUrl(REPO),
      runnerConfig: gh.pullRequestConfig({ merge: "manual" }),
    });

    // 1. Both pull requests open; H's checks go green (Overseer sees it and, manual, waits).
    const open = await cluster.waitForProject(project, (s) => isOpen(s, "H") && isOpen(s, "W"), 240_000);
    const h = pr(open, "H");
    const w = pr(open, "W");
    if (!h?.number || !w?.number) throw new Error("no pull requests");
    gh.forge.setCheckRun(REPO, h.headSha, { name: "ci", conclusion: "success" });
    await cluster.waitForProject(project, (s) => pr(s, "H")?.checks === "success", 120_000);
    expect(gh.forge.pulls(REPO).find((p) => p.number === h.number)?.state).toBe("open");

    // 2. Alice merges it on the forge; the task is done with her merge commit.
    const mergeSha = await gh.forge.mergeByHuman(REPO, h.number, HUMAN.login, "merge");
    const done = await cluster.waitForProject(project, (s) => s.tasks.get("H")?.status === "done", 120_000);
    const doneAt = Date.now();
    expect(await gh.forge.git.resolve(REPO, "refs/heads/main")).toBe(mergeSha);
    expect(pr(done, "H")).toMatchObject({
      number: h.number,
      status: "merged",
      mergeCommitSha: mergeSha,
      mergedBy: HUMAN.login,
      headSha: h.headSha,
    });
    expect(isOpen(done, "W")).toBe(true);
    const events = await listEvents(cluster.scratch.db, {
      projectId: project,
      taskId: "H",
      types: ["pr.merged", "task.approved", "pr.close_requested"],
      limit: 100,
    });
    expect(events.map((e) => e.type)).toEqual(["pr.merged", "task.approved"]);
    expect(events[0]?.data).toMatchObject({
      number: h.number,
      mergeCommitSha: mergeSha,
      mergedBy: HUMAN.login,
      headSha: h.headSha,
      base: "main",
    });
    expect(events[1]?.data).toMatchObject({
      landedSha: mergeSha,
      landedBranch: "main",
      pullRequest: h.number,
    });

    // 3. The API's task view says the same.
    gateway = await startGatewayProcess(cluster.env({ LOG_LEVEL: "info" }), 60_000);
    const { token } = await createApiToken(cluster.scratch.db, { name: "reader", scope: "read" });
    const res = await fetch(`${gateway.url}/api/v1/projects/${project}/tasks/H`, {
      headers: { Authorization: `Bearer ${token}` },
    });
    expect(res.status).toBe(200);
    const view = (await res.json()) as { status: string; pull_request: Record<string, unknown> | null };
    expect(view.status).toBe("done");
    expect(view.pull_request).toMatchObject({
      number: h.number,
      status: "merged",
      merge_commit_sha: mergeSha,
      merged_by: HUMAN.login,
      base: "main",
    });

    // 4. Afterwards: the runner kept polling W (three reads of its pull request after H was
    //    done), yet it wrote nothing to the forge and moved no ref.
    const refsAtDone = await refs();
    const wPath = `/repos/${REPO}/pulls/${w.number}`;
    await until(
      () =>
        gh.forge.requests.filter((r) => r.at > doneAt && r.method === "GET" && r.path.endsWith(wPath))
          .length >= 3,
      120_000,
    );
    const after = gh.forge.requests.filter((r) => r.at > doneAt);
    // GraphQL reads are POSTs too (the review threads); the one mutation the adapter has
    // (auto-merge) would show on the pull requests.
    const writes = after.filter((r) => r.method !== "GET" && r.path !== "/api/graphql");
    expect(writes).toEqual([]);
    expect(gh.forge.pulls(REPO).map((p) => p.autoMerge)).toEqual([null, null]);
    expect(await refs()).toBe(refsAtDone);
    expect(await gh.forge.git.resolve(REPO, "refs/heads/main")).toBe(mergeSha);
    expect(gh.forge.pulls(REPO)).toHaveLength(2);
    expect(gh.forge.takeViolations()).toEqual([]);

    // Figures: forge API calls for H (Overseer's counter) and what the double logged.
    const row = await cluster.scratch.db
      .selectFrom("pull_requests")
      .select(["api_calls"])
      .where("project_id", "=", project)
      .where("task_id", "=", "H")
      .executeTakeFirstOrThrow();
    const hPath = `/repos/${REPO}/pulls/${h.number}`;
    const hPaths = (r: { path: string }) => r.path.endsWith(hPath) || r.path.includes(`${hPath}/`);
    console.log(
      JSON.stringify({
        figure: "merged-by-human",
        forgeApiCallsForTask: row.api_calls,
        doubleRequestsForRepo: gh.forge.requests.length,
        readsOfMergedPullAfterDone: after.filter(hPaths).length,
      }),
    );
    expect(row.api_calls).toBeGreaterThan(0);
  }, 600_000);
});
