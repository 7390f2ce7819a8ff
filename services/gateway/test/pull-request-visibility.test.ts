/**
 * A task waiting on its pull request (status `pr_open`, docs/state-machine.md rules 14–19) as
 * the API shows it: the task routes carry `pull_request`; the status counts `pr_open`; the
 * Argus snapshot, which knows no `pr_open`, shows such a task as `review` with the pull request
 * added (docs/argus-compatibility.md). A project in pull_request mode shows its forge (never the
 * token) and merge policy on the project and status routes, and the status lists each open pull
 * request with its link, checks, review and approvals, in JSON and in the text `overseer status`
 * prints.
 */
import { applyTransition, recordPullRequestPoll } from "@overseer/db";
import { openPullRequest } from "@overseer/test-support";
import { describe, expect, it } from "vitest";
import { card, seedProject, statusWhen, useGatewayFixture } from "./support/gateway-fixture.ts";

const fx = useGatewayFixture();

const FORGE_TOKEN = "ghp_visibilityCanary0123456789abcdef";
const PR_MODE = {
  landing: {
    mode: "pull_request",
    pull_request: {
      merge: "auto",
      merge_method: "rebase",
      required_approvals: 2,
      required_checks: ["ci", "lint"],
    },
  },
  forge: { kind: "github", url: "https://github.example", repository: "acme/shop", token: FORGE_TOKEN },
};

/** S00-001 approved in pull_request mode and its pull request #9 open. */
async function seedPrOpen(projectId: string, runnerConfig: Record<string, unknown> = {}): Promise<void> {
  await seedProject(fx, projectId, [card("S00-001"), card("S00-002", ["S00-001"])], runnerConfig);
  await openPullRequest(fx.scratch.db, projectId, {
    taskId: "S00-001",
    number: 9,
    url: "https://forge.test/acme/shop/pull/9",
    head: "c0ffee",
  });
}

describe("a task whose pull request is open", () => {
  it("shows pr_open with its pull request on the task routes, and counts as pr_open", async () => {
    await seedPrOpen("prv");
    const task = await fx.request("GET", "/api/v1/projects/prv/tasks/S00-001", { token: fx.tokens.read });
    expect(task.status).toBe(200);
    expect(task.body.status).toBe("pr_open");
    expect(task.body.pull_request).toEqual({
      number: 9,
      url: "https://forge.test/acme/shop/pull/9",
      branch: "overseer/pr/S00-001",
      base: "main",
      head_sha: "c0ffee",
      status: "open",
      checks: "pending",
      review: "none",
      approvals: 0,
      ci_failures: 0,
      merge_commit_sha: null,
      merged_by: null,
    });
    const list = await fx.request("GET", "/api/v1/projects/prv/tasks?status=pr_open", {
      token: fx.tokens.read,
    });
    expect(list.status).toBe(200);
    expect(list.body.tasks.map((t: { id: string }) => t.id)).toEqual(["S00-001"]);
    const status = await statusWhen(fx, "prv", (s) => s.counts.pr_open === 1);
    expect(status.body.counts).toMatchObject({ pr_open: 1, todo: 1, total: 2 });
    expect(status.body.text).toContain("1 pr_open");
  });

  it("is counted in the metrics with the forge API calls made for it", async () => {
    await seedPrOpen("prv-metrics");
    await recordPullRequestPoll(fx.scratch.db, "prv-metrics", "S00-001", { etagPull: '"e1"', apiCalls: 3 });
    const res = await fx.request("GET", "/metrics", { token: fx.tokens.read });
    expect(res.status).toBe(200);
    expect(res.text).toContain('overseer_pull_requests{project="prv-metrics",status="open"} 1');
    expect(res.text).toContain('overseer_forge_api_calls_total{project="prv-metrics"} 3');
  });

  it("is `review` in the Argus snapshot, with the pull request added", async () => {
    await seedPrOpen("prv-argus");
    const snap = await fx.request("GET", "/api/projects/prv-argus/snapshot", { token: fx.tokens.read });
    expect(snap.status).toBe(200);
    const row = snap.body.backlog.find((r: { id: string }) => r.id === "S00-001");
    expect(row.status).toBe("review");
    expect(row.pull_request).toMatchObject({ number: 9, status: "open" });
    const plain = snap.body.backlog.find((r: { id: string }) => r.id === "S00-002");
    expect(plain).toMatchObject({ status: "todo", pull_request: null });
    // Answering it through the Argus route reports the Argus status too.
    const answered = await fx.request("POST", "/api/projects/prv-argus/backlog/S00-001/answer", {
      token: fx.tokens.operate,
      body: { text: "Mention the migration in the description." },
    });
    expect(answered.status).toBe(200);
    expect(answered.body.task_status).toBe("review");
  });
});

describe("a project landing through pull requests", () => {
  it("shows its forge and merge policy, never the token, on the project and status routes", async () => {
    await seedPrOpen("prv-policy", PR_MODE);
    const policy = {
      forge: "github",
      forge_url: "https://github.example",
      repository: "acme/shop",
      merge: "auto",
      merge_method: "rebase",
      required_approvals: 2,
      required_checks: ["ci", "lint"],
      prerequisites: "merged",
      on_closed: "cancel",
    };
    const project = await fx.request("GET", "/api/v1/projects/prv-policy", { token: fx.tokens.read });
    expect(project.status).toBe(200);
    expect(project.body).toMatchObject({ landing_mode: "pull_request", pull_requests: policy });
    expect(project.text).not.toContain(FORGE_TOKEN);

    const status = await statusWhen(fx, "prv-policy", (s) => s.open_pull_requests?.length === 1);
    expect(status.body).toMatchObject({ landing_mode: "pull_request", pull_requests: policy });
    expect(status.body.open_pull_requests).toEqual([
      {
        task_id: "S00-001",
        title: "Task S00-001",
        number: 9,
        url: "https://forge.test/acme/shop/pull/9",
        branch: "overseer/pr/S00-001",
        base: "main",
        head_sha: "c0ffee",
        status: "open",
        checks: "pending",
        review: "none",
        approvals: 0,
        ci_failures: 0,
        merge_commit_sha: null,
        merged_by: null,
      },
    ]);
    expect(status.body.text).toContain(
      "landing: through pull requests into main on github https://github.example (acme/shop); merge: auto by rebase once 2 approvals and checks ci, lint green",
    );
    expect(status.body.text).toContain(
      "pull request: S00-001 PR #9 open https://forge.test/acme/shop/pull/9 → main (checks pending, review none, 0 approvals)",
    );
    expect(status.text).not.toContain(FORGE_TOKEN);
  });

  it("follows the checks and review the forge runner records, and drops the pull request once merged", async () => {
    await seedPrOpen("prv-follow", { ...PR_MODE, landing: { mode: "pull_request" } });
    const db = fx.scratch.db;
    await applyTransition(db, "prv-follow", {
      kind: "pr-checks",
      taskId: "S00-001",
      headSha: "c0ffee",
      state: "success",
      failing: [],
      maxAttempts: 3,
    });
    await applyTransition(db, "prv-follow", {
      kind: "pr-review",
      taskId: "S00-001",
      headSha: "c0ffee",
      approvals: 1,
      changesRequested: true,
      threads: [],
      comments: [],
      requiredApprovals: 1,
    });
    const red = await statusWhen(
      fx,
      "prv-follow",
      (s) => s.open_pull_requests?.[0]?.review === "changes_requested",
    );
    expect(red.body.open_pull_requests[0]).toMatchObject({ checks: "success", approvals: 1 });
    expect(red.body.text).toContain("merge: manual (a person merges on the forge)");
    expect(red.body.text).toContain("(checks success, changes requested, 1 approval)");
    await applyTransition(db, "prv-follow", {
      kind: "pr-merged",
      taskId: "S00-001",
      mergeCommitSha: "beef",
      mergedBy: "alice",
    });
    const merged = await statusWhen(fx, "prv-follow", (s) => s.open_pull_requests?.length === 0);
    expect(merged.body.text).toContain("pull requests: none open");
    const task = await fx.request("GET", "/api/v1/projects/prv-follow/tasks/S00-001", {
      token: fx.tokens.read,
    });
    expect(task.body.pull_request).toMatchObject({
      status: "merged",
      merge_commit_sha: "beef",
      merged_by: "alice",
    });
  });

  it("a push-mode project says so and has no pull request policy", async () => {
    await seedProject(fx, "prv-push");
    const project = await fx.request("GET", "/api/v1/projects/prv-push", { token: fx.tokens.read });
    expect(project.body).toMatchObject({ landing_mode: "push", pull_requests: null });
    const status = await statusWhen(fx, "prv-push", (s) => s.project_id === "prv-push");
    expect(status.body).toMatchObject({ landing_mode: "push", pull_requests: null, open_pull_requests: [] });
    expect(status.body.text).toContain("landing: approved work lands on main");
  });
});
