/**
 * The forge loop in the gateway's /metrics (issue 21, "API calls per task counted in the
 * metrics"): calls by project, the conditional reads answered 304 apart, and a histogram of
 * calls per task over pull requests that ended. Figures come from `pull_requests`, where the
 * coordinator's forge runner records each job's calls (recordPullRequestPoll).
 */
import { applyTransition, recordPullRequestPoll } from "@overseer/db";
import { openPullRequest } from "@overseer/test-support";
import { describe, expect, it } from "vitest";
import { card, seedProject, useGatewayFixture } from "./support/gateway-fixture.ts";

const fx = useGatewayFixture();

const PR_MODE = {
  landing: { mode: "pull_request", pull_request: { merge: "auto", required_approvals: 0 } },
  forge: { kind: "github", url: "https://github.example", repository: "acme/shop", token: "ghp_metrics" },
};

/** `taskId` approved in pull_request mode, its pull request `number` open on head c0ffee. */
const openPull = (projectId: string, taskId: string, number: number) =>
  openPullRequest(fx.scratch.db, projectId, {
    taskId,
    number,
    url: `https://forge.test/acme/shop/pull/${number}`,
    head: "c0ffee",
  });

describe("forge API calls in /metrics", () => {
  it("counts calls and 304s by project, and calls per task over the pull requests that ended", async () => {
    const project = "fm";
    await seedProject(fx, project, [card("S00-001"), card("S00-002", ["S00-001"])], PR_MODE);
    await openPull(project, "S00-001", 1);
    const db = fx.scratch.db;
    await recordPullRequestPoll(db, project, "S00-001", { apiCalls: 7 });
    await recordPullRequestPoll(db, project, "S00-001", { etagPull: '"e1"', apiCalls: 5, notModified: 3 });
    await expect(
      recordPullRequestPoll(db, project, "S00-001", { apiCalls: 1, notModified: -1 }),
    ).rejects.toThrow(RangeError);
    // An open pull request is in the totals, not yet in the per-task histogram.
    let text = (await fx.request("GET", "/metrics", { token: fx.tokens.read })).text;
    expect(text).toContain('overseer_forge_api_calls_total{project="fm"} 12');
    expect(text).toContain('overseer_forge_api_not_modified_total{project="fm"} 3');
    expect(text).not.toContain('overseer_forge_api_calls_per_task_count{project="fm"}');

    await applyTransition(db, project, {
      kind: "pr-merged",
      taskId: "S00-001",
      mergeCommitSha: "beef",
      mergedBy: "overseer-bot",
    });
    await openPull(project, "S00-002", 2);
    await recordPullRequestPoll(db, project, "S00-002", { apiCalls: 40 });
    await applyTransition(db, project, {
      kind: "pr-merged",
      taskId: "S00-002",
      mergeCommitSha: "f00d",
      mergedBy: "overseer-bot",
    });
    // The snapshot is cached for a moment: read until it shows both tasks.
    const deadline = Date.now() + 30_000;
    for (;;) {
      text = (await fx.request("GET", "/metrics", { token: fx.tokens.read })).text;
      if (text.includes('overseer_forge_api_calls_per_task_count{project="fm"} 2')) break;
      if (Date.now() > deadline) throw new Error(`the per-task histogram never showed 2 tasks:\n${text}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(text).toContain("# TYPE overseer_forge_api_calls_per_task histogram");
    expect(text).toContain('overseer_forge_api_calls_per_task_bucket{project="fm",le="10"} 0');
    expect(text).toContain('overseer_forge_api_calls_per_task_bucket{project="fm",le="25"} 1');
    expect(text).toContain('overseer_forge_api_calls_per_task_bucket{project="fm",le="50"} 2');
    expect(text).toContain('overseer_forge_api_calls_per_task_bucket{project="fm",le="+Inf"} 2');
    expect(text).toContain('overseer_forge_api_calls_per_task_sum{project="fm"} 52');
    expect(text).toContain('overseer_forge_api_calls_total{project="fm"} 52');
  });
});
