/**
 * A GitLab that fails (issue 21: "forge 5xx and rate limits (backoff, and still one PR per
 * task)", on the GitLab adapter): the GitLab double answers 5xx bursts and rate limits (429 with
 * `Retry-After`, as GitLab.com's rate limiter does) while Overseer opens, syncs and merges a
 * task's merge request; some 5xx come after the request took effect (a create or a merge whose
 * answer was lost: GitLab then answers the repeat 409 "Another open merge request already exists
 * for this source branch" / 405 "Method Not Allowed", the merge request being merged). Overseer
 * backs off, waits what it is told, and still opens exactly one merge request for the task and
 * merges it once. Coordinator, worker, bwrap, git, Postgres and Redis are real; the forge is
 * reached by polling only.
 */

import { GitLabDouble } from "@overseer/test-support";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClusterFixture, scriptedTask } from "../support/cluster-fixture.ts";
import { answers, pr } from "./pull-request-state.ts";

const PROJECT = "acme/gitlab-faulty";
const API = `/api/v4/projects/${encodeURIComponent(PROJECT)}`;
const BOT = { username: "overseer-bot", token: "glpat-overseer-faults", accessLevel: 40 };

let forge: GitLabDouble;
const cluster = new ClusterFixture({ sandbox: "bwrap" });

beforeAll(async () => {
  forge = await GitLabDouble.start();
  forge.addUser(BOT);
  await forge.createProject(
    PROJECT,
    { "README.md": "# app\n", "src/app.ts": "export const v = 0;\n" },
    { pipelineMustSucceed: true },
  );
  await forge.protectBranch(PROJECT, ["main"]);
  await cluster.setup();
  await cluster.startCoordinator("coord-gitlab-faults", { forgeRetryBaseMs: 20 });
  await cluster.startWorker(2);
}, 120_000);

afterAll(async () => {
  await cluster.teardown();
  await forge?.close();
});

describe("forge 5xx and rate limits (GitLab double)", () => {
  it("backs off, waits what it is told, and still opens one merge request and merges it once", async () => {
    const project = "gitlab-faulty";
    const start = forge.requests.length;
    const commits = async () => Number(await forge.git.git(PROJECT, ["rev-list", "--count", "main"]));
    const before = await commits();
    // Opening: the list of merge requests is rate limited, then fails in a 5xx burst longer than
    // the adapter's retries (the forge job itself is retried); the create takes effect but its
    // answer is lost (502).
    forge.fail({ status: 429, retryAfter: 2, matching: new RegExp(`^GET ${API}/merge_requests$`) });
    forge.fail({ status: 503, times: 6, matching: new RegExp(`^GET ${API}/merge_requests$`) });
    forge.fail({ status: 502, afterEffect: true, matching: new RegExp(`^POST ${API}/merge_requests$`) });
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
      remote: () => forge.cloneUrl(PROJECT),
      runnerConfig: ClusterFixture.fakeRunnerConfig({
        attempts: 3,
        landing: {
          mode: "pull_request",
          pull_request: {
            labels: ["overseer"],
            poll_seconds: 1,
            required_checks: ["test"],
            merge: "auto",
            required_approvals: 0,
          },
        },
        forge: { kind: "gitlab", url: forge.url, repository: PROJECT, token: BOT.token },
      }),
    });
    const opened = await cluster.waitForProject(
      project,
      (s) => pr(s, "F-1")?.status === "open" && s.tasks.get("F-1")?.status === "pr_open",
      180_000,
    );
    const iid = pr(opened, "F-1")?.number ?? 0;
    const head = pr(opened, "F-1")?.headSha ?? "";
    expect(forge.mergeRequests(PROJECT)).toHaveLength(1);
    expect(forge.mergeRequests(PROJECT)[0]?.labels).toEqual(["overseer"]);

    // Syncing: the merge request read is rate limited, the pipeline's jobs read fails twice;
    // merging: a 503, then a merge that takes effect but whose answer is lost (502): GitLab
    // answers its repeat 405, and the sync after it finds the merge request merged.
    const syncing = forge.requests.length;
    forge.fail({ status: 429, retryAfter: 2, matching: new RegExp(`^GET ${API}/merge_requests/${iid}$`) });
    forge.fail({ status: 502, times: 2, matching: new RegExp(`^GET ${API}/pipelines/\\d+/jobs$`) });
    forge.fail({ status: 503, matching: new RegExp(`^PUT ${API}/merge_requests/${iid}/merge$`) });
    forge.fail({
      status: 502,
      afterEffect: true,
      matching: new RegExp(`^PUT ${API}/merge_requests/${iid}/merge$`),
    });
    forge.setPipeline(
      PROJECT,
      head,
      [{ name: "test", status: "success" }],
      `refs/merge-requests/${iid}/head`,
      "merge_request_event",
    );
    const done = await cluster.waitForProject(project, (s) => s.tasks.get("F-1")?.status === "done", 180_000);
    const main = await forge.git.resolve(PROJECT, "refs/heads/main");
    expect(pr(done, "F-1")).toMatchObject({
      status: "merged",
      number: iid,
      mergeCommitSha: main,
      mergedBy: BOT.username,
    });

    // One merge request for the task, whatever was retried, and one squash commit on main.
    expect(forge.mergeRequests(PROJECT)).toHaveLength(1);
    expect(forge.mergeRequests(PROJECT)[0]).toMatchObject({ source: "overseer/pr/F-1", state: "merged" });
    expect(await commits()).toBe(before + 1);
    expect(await forge.git.git(PROJECT, ["show", `${main}:src/app.ts`])).toBe("export const v = 1;");
    const creates = answers(forge.requests, start, "POST", new RegExp(`^${API}/merge_requests$`));
    expect(creates.map((r) => r.status)).toEqual([502, ...creates.slice(1).map(() => 409)]);
    expect(creates.length).toBeGreaterThan(1);
    const merges = answers(
      forge.requests,
      syncing,
      "PUT",
      new RegExp(`^${API}/merge_requests/${iid}/merge$`),
    );
    expect(merges.slice(0, 2).map((r) => r.status)).toEqual([503, 502]);
    expect(merges.slice(2).every((r) => r.status === 405)).toBe(true);
    const merged = await cluster.scratch.db
      .selectFrom("events")
      .select("type")
      .where("project_id", "=", project)
      .where("type", "=", "pr.merged")
      .execute();
    expect(merged).toHaveLength(1);

    // Every fault was met; the rate-limited routes were asked again only once the time named
    // had passed (a request of another forge job already on its way when the 429 came back may
    // still arrive meanwhile: the double logs a request when it answers).
    const statuses = forge.requests.slice(start).map((r) => r.status);
    expect(statuses.filter((s) => s >= 500)).toHaveLength(6 + 1 + 2 + 1 + 1);
    for (const limited of forge.requests.slice(start).filter((r) => r.status === 429)) {
      const route = limited.path.split("?")[0];
      const same = forge.requests.filter(
        (r) => r.at > limited.at && r.method === limited.method && r.path.split("?")[0] === route,
      );
      const early = same.filter((r) => r.at < limited.at + 1900);
      expect(early.length, `${route} asked again ${early.length} times before the wait`).toBeLessThanOrEqual(
        1,
      );
      expect(same.some((r) => r.at >= limited.at + 1900)).toBe(true);
    }
    expect(forge.takeViolations()).toEqual([]);
    const row = await cluster.scratch.db
      .selectFrom("pull_requests")
      .select(["api_calls"])
      .where("project_id", "=", project)
      .where("task_id", "=", "F-1")
      .executeTakeFirstOrThrow();
    console.log(
      JSON.stringify({ figure: "forge-faults", forge: "gitlab", forgeApiCallsForTask: row.api_calls }),
    );
  }, 600_000);
});
