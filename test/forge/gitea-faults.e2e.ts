/**
 * A Gitea that fails (issue 21: "forge 5xx and rate limits (backoff, and still one PR per
 * task)", on the Gitea adapter): the Gitea double answers 5xx bursts and rate limits (429 with
 * `Retry-After`, as a proxy in front of Gitea does) while Overseer opens, syncs and merges a
 * task's pull request; some 5xx come after the request took effect (a create or a merge whose
 * answer was lost: Gitea then answers the repeat 409 "already exists" / 405 "already merged").
 * Overseer backs off, waits what it is told, and still opens exactly one pull request for the
 * task and merges it once. Coordinator, worker, bwrap, git, Postgres and Redis are real; the
 * forge is reached by polling only.
 */

import { GiteaDouble } from "@overseer/test-support";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClusterFixture, scriptedTask } from "../support/cluster-fixture.ts";
import { answers, pr } from "./pull-request-state.ts";

const REPO = "acme/gitea-faulty";
const API = `/api/v1/repos/${REPO}`;
const BOT = { login: "overseer-bot", token: "gitea-overseer-faults" };
const CI = "CI / test (pull_request)";

let forge: GiteaDouble;
const cluster = new ClusterFixture({ sandbox: "bwrap" });

beforeAll(async () => {
  forge = await GiteaDouble.start();
  forge.addUser(BOT);
  await forge.createRepository(REPO, { "README.md": "# app\n", "src/app.ts": "export const v = 0;\n" });
  await forge.protectBranch(REPO, ["main"], [CI]);
  await cluster.setup();
  await cluster.startCoordinator("coord-gitea-faults", { forgeRetryBaseMs: 20 });
  await cluster.startWorker(2);
}, 120_000);

afterAll(async () => {
  await cluster.teardown();
  await forge?.close();
});

describe("forge 5xx and rate limits (Gitea double)", () => {
  it("backs off, waits what it is told, and still opens one pull request and merges it once", async () => {
    const project = "gitea-faulty";
    const start = forge.requests.length;
    const commits = async () => Number(await forge.git.git(REPO, ["rev-list", "--count", "main"]));
    const before = await commits();
    // Opening: the list of pull requests is rate limited, then fails in a 5xx burst longer than
    // the adapter's retries (the forge job itself is retried); the create takes effect but its
    // answer is lost (502); the label is created only on the second try.
    forge.fail({ status: 429, retryAfter: 2, matching: new RegExp(`^GET ${API}/pulls$`) });
    forge.fail({ status: 503, times: 6, matching: new RegExp(`^GET ${API}/pulls$`) });
    forge.fail({ status: 502, afterEffect: true, matching: new RegExp(`^POST ${API}/pulls$`) });
    forge.fail({ status: 500, matching: new RegExp(`^POST ${API}/labels$`) });
    await cluster.addProject({
      id: project,
      tasks: [
        scriptedTask(
          "F-1",
          [
            'execute: write src/app.ts "export const v = 1;\\n"; submit "Bump v"',
            'review: approve "Right"',
          ].join("\n"),
          { title: "Bump v" },
        ),
      ],
      remote: () => forge.cloneUrl(REPO),
      runnerConfig: ClusterFixture.fakeRunnerConfig({
        attempts: 3,
        landing: {
          mode: "pull_request",
          pull_request: {
            labels: ["overseer"],
            poll_seconds: 1,
            required_checks: [CI],
            merge: "auto",
            required_approvals: 0,
          },
        },
        forge: { kind: "gitea", url: forge.url, repository: REPO, token: BOT.token },
      }),
    });
    const opened = await cluster.waitForProject(
      project,
      (s) => pr(s, "F-1")?.status === "open" && s.tasks.get("F-1")?.status === "pr_open",
      180_000,
    );
    const number = pr(opened, "F-1")?.number ?? 0;
    const head = pr(opened, "F-1")?.headSha ?? "";
    expect(forge.pulls(REPO)).toHaveLength(1);
    expect(forge.labelNames(REPO, forge.pulls(REPO)[0]!)).toEqual(["overseer"]);

    // Syncing: the pull request read is rate limited, the statuses read fails twice; merging: a
    // 503, then a merge that takes effect but whose answer is lost (502): Gitea answers its
    // repeat 405 "already merged", and the sync after it finds the pull request merged.
    const syncing = forge.requests.length;
    forge.fail({ status: 429, retryAfter: 2, matching: new RegExp(`^GET ${API}/pulls/${number}$`) });
    forge.fail({ status: 502, times: 2, matching: new RegExp(`^GET ${API}/commits/${head}/statuses$`) });
    forge.fail({ status: 503, matching: new RegExp(`^POST ${API}/pulls/${number}/merge$`) });
    forge.fail({
      status: 502,
      afterEffect: true,
      matching: new RegExp(`^POST ${API}/pulls/${number}/merge$`),
    });
    forge.actionsJob(REPO, head, { workflow: "CI", job: "test", state: "success", log: "ok\n" });
    const done = await cluster.waitForProject(project, (s) => s.tasks.get("F-1")?.status === "done", 180_000);
    const main = await forge.git.resolve(REPO, "refs/heads/main");
    expect(pr(done, "F-1")).toMatchObject({
      status: "merged",
      number,
      mergeCommitSha: main,
      mergedBy: BOT.login,
    });

    // One pull request for the task, whatever was retried, and one merge into main.
    expect(forge.pulls(REPO)).toHaveLength(1);
    expect(forge.pulls(REPO)[0]).toMatchObject({ head: "overseer/pr/F-1", state: "closed", merged: true });
    // Squash (the default merge method): one commit on main, whatever was retried.
    expect(await commits()).toBe(before + 1);
    expect(await forge.git.git(REPO, ["show", `${main}:src/app.ts`])).toBe("export const v = 1;");
    const creates = answers(forge.requests, start, "POST", new RegExp(`^${API}/pulls$`));
    expect(creates.map((r) => r.status)).toEqual([502, ...creates.slice(1).map(() => 409)]);
    const merges = answers(forge.requests, syncing, "POST", new RegExp(`^${API}/pulls/${number}/merge$`));
    expect(merges.slice(0, 2).map((r) => r.status)).toEqual([503, 502]);
    expect(merges.slice(2).every((r) => r.status === 405)).toBe(true);
    const merged = await cluster.scratch.db
      .selectFrom("events")
      .select("type")
      .where("project_id", "=", project)
      .where("type", "=", "pr.merged")
      .execute();
    expect(merged).toHaveLength(1);

    // Every fault was met, and each 5xx was retried.
    const statuses = forge.requests.slice(start).map((r) => r.status);
    expect(statuses.filter((s) => s >= 500)).toHaveLength(6 + 1 + 1 + 2 + 1 + 1);
    // While the token was held (Retry-After: 2), no request of it reached Gitea (the gate is
    // shared by every adapter of the token; a request already on its way when the 429 came is
    // given half a second), and the limited route was asked again only after the wait.
    const limited = forge.requests.slice(start).filter((r) => r.status === 429);
    expect(limited).toHaveLength(2);
    for (const hit of limited) {
      expect(forge.requests.filter((r) => r.at > hit.at + 500 && r.at < hit.at + 1900)).toEqual([]);
      const route = hit.path.split("?")[0];
      const again = forge.requests.filter(
        (r) => r.at > hit.at + 500 && r.method === hit.method && r.path.split("?")[0] === route,
      );
      expect(again[0]?.at ?? 0).toBeGreaterThanOrEqual(hit.at + 1900);
    }
    expect(forge.takeViolations()).toEqual([]);
    const row = await cluster.scratch.db
      .selectFrom("pull_requests")
      .select(["api_calls"])
      .where("project_id", "=", project)
      .where("task_id", "=", "F-1")
      .executeTakeFirstOrThrow();
    console.log(
      JSON.stringify({ figure: "forge-faults", forge: "gitea", forgeApiCallsForTask: row.api_calls }),
    );
  }, 600_000);
});
