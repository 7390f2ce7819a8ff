/**
 * A forge that fails (issue 21: "forge 5xx and rate limits (backoff, and still one PR per
 * task)"): the GitHub double answers 5xx bursts, GitHub's primary rate limit (403,
 * `x-ratelimit-remaining: 0`, `x-ratelimit-reset`) and its secondary one (429 with
 * `Retry-After`) while Overseer opens, syncs and merges a task's pull request; some 5xx come
 * after the request took effect (a create or a merge whose answer was lost). Overseer backs off,
 * sends nothing of the token before the time the forge named, and still opens exactly one pull
 * request for the task and merges it once. Coordinator, worker, bwrap, git, Postgres and Redis
 * are real; the forge is reached by polling only (no webhooks).
 */

import { type ApiRequest, GitHubDouble } from "@overseer/test-support";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClusterFixture, scriptedTask } from "../support/cluster-fixture.ts";
import { answers, pr } from "./pull-request-state.ts";

const REPO = "acme/faulty";
const API = `/api/v3/repos/${REPO}`;
const BOT = { login: "overseer-bot", token: "ghp_overseer_faults" };

let forge: GitHubDouble;
const cluster = new ClusterFixture({ sandbox: "bwrap" });

beforeAll(async () => {
  forge = await GitHubDouble.start();
  forge.addUser(BOT);
  await forge.createRepository(REPO, { "README.md": "# app\n", "src/app.ts": "export const v = 0;\n" });
  await forge.protectBranch(REPO, ["main"], ["ci"]);
  await cluster.setup();
  // GitHub's write pacing stays at its default (1 s): this case is about rate limits.
  await cluster.startCoordinator("coord-faults", { forgeRetryBaseMs: 20 });
  await cluster.startWorker(2);
}, 120_000);

afterAll(async () => {
  await cluster.teardown();
  await forge?.close();
});

/** The first request answered after `limited` on the same route: the retry of the rate-limited one. */
function retryAfter(limited: ApiRequest, from: number): ApiRequest | undefined {
  const route = limited.path.split("?")[0];
  return forge.requests
    .slice(from)
    .find((r) => r.at > limited.at && r.method === limited.method && r.path.split("?")[0] === route);
}

describe("forge 5xx and rate limits (GitHub double)", () => {
  it("backs off, waits what GitHub names, and still opens one pull request and merges it once", async () => {
    const project = "faulty";
    const start = forge.requests.length;
    const commits = async () => Number(await forge.git.git(REPO, ["rev-list", "--count", "main"]));
    const before = await commits();
    // Opening: the lookup by head is rate limited (primary), then fails in a 5xx burst longer
    // than the adapter's retries (so the forge job itself is retried); the create takes effect
    // but its answer is lost (502), and the label write fails once.
    forge.fail({ status: 403, rateLimitResetSeconds: 2, matching: new RegExp(`^GET ${API}/pulls$`) });
    forge.fail({ status: 503, times: 5, matching: new RegExp(`^GET ${API}/pulls$`) });
    forge.fail({ status: 502, afterEffect: true, matching: new RegExp(`^POST ${API}/pulls$`) });
    forge.fail({ status: 500, matching: new RegExp(`^POST ${API}/issues/\\d+/labels$`) });
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
            required_checks: ["ci"],
            merge: "auto",
            required_approvals: 0,
          },
        },
        forge: { kind: "github", url: forge.url, repository: REPO, token: BOT.token },
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
    expect(forge.pulls(REPO)[0]?.labels).toEqual(["overseer"]);

    // Syncing: the pull request read hits a secondary rate limit (429, Retry-After), the
    // checks read a 5xx burst; merging: a 503, then a merge that takes effect but whose answer
    // is lost (502), so its retry finds the pull request merged already.
    const syncing = forge.requests.length;
    forge.fail({ status: 429, retryAfter: 2, matching: new RegExp(`^GET ${API}/pulls/${number}$`) });
    forge.fail({ status: 502, times: 2, matching: new RegExp(`^GET ${API}/commits/${head}/check-runs$`) });
    forge.fail({ status: 503, matching: new RegExp(`^PUT ${API}/pulls/${number}/merge$`) });
    forge.fail({
      status: 502,
      afterEffect: true,
      matching: new RegExp(`^PUT ${API}/pulls/${number}/merge$`),
    });
    forge.setCheckRun(REPO, head, { name: "ci", conclusion: "success" });
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
    expect(forge.pulls(REPO)[0]).toMatchObject({ head: "overseer/pr/F-1", state: "closed" });
    // Squash (the default merge method): one commit on main, whatever was retried.
    expect(await commits()).toBe(before + 1);
    const creates = answers(forge.requests, start, "POST", new RegExp(`^${API}/pulls$`));
    expect(creates.map((r) => r.status)).toEqual([502, ...creates.slice(1).map(() => 422)]);
    const merges = answers(forge.requests, syncing, "PUT", new RegExp(`^${API}/pulls/${number}/merge$`));
    expect(merges.slice(0, 2).map((r) => r.status)).toEqual([503, 502]);
    expect(merges.slice(2).every((r) => r.status === 405)).toBe(true);
    const events = await cluster.scratch.db
      .selectFrom("events")
      .select("type")
      .where("project_id", "=", project)
      .where("type", "=", "pr.merged")
      .execute();
    expect(events).toHaveLength(1);

    // Every fault was met, and each 5xx was retried.
    const statuses = forge.requests.slice(start).map((r) => r.status);
    expect(statuses.filter((s) => s >= 500)).toHaveLength(5 + 1 + 1 + 2 + 1 + 1);
    // GitHub named when the token could send again; nothing of that route came before it.
    const primary = forge.requests.slice(start).find((r) => r.status === 403);
    const secondary = forge.requests.slice(syncing).find((r) => r.status === 429);
    if (!primary || !secondary) throw new Error("a rate limit was not met");
    const afterPrimary = retryAfter(primary, start);
    const afterSecondary = retryAfter(secondary, syncing);
    // x-ratelimit-reset is a whole second at least 2 s ahead (+1 s, as GitHub advises).
    expect(afterPrimary?.at ?? 0).toBeGreaterThanOrEqual(primary.at + 2000);
    expect(afterSecondary?.at ?? 0).toBeGreaterThanOrEqual(secondary.at + 1900);
    // While the token was held, no request of it reached GitHub (a request already on its way
    // when the 429 came is given half a second).
    const heldWindow = forge.requests.filter((r) => r.at > secondary.at + 500 && r.at < secondary.at + 1900);
    expect(heldWindow).toEqual([]);
    expect(forge.takeViolations()).toEqual([]);

    const row = await cluster.scratch.db
      .selectFrom("pull_requests")
      .select(["api_calls"])
      .where("project_id", "=", project)
      .where("task_id", "=", "F-1")
      .executeTakeFirstOrThrow();
    console.log(JSON.stringify({ figure: "forge-faults", forgeApiCallsForTask: row.api_calls }));
  }, 600_000);
});
