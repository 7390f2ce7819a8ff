/**
 * Rule 19 (prerequisites across pull requests): merged and stacked prerequisites, the stacked
 * base and its retarget when the prerequisite merges.
 */
import { describe, expect, it } from "vitest";
import { pullRequestBase, runnableTasks } from "../../src/index.ts";
import { checks, HEAD, opened, prOf, toPrOpen, toPrOpenFromReview } from "../support/pull-request-builder.ts";
import { activeRunOf, buildState, createDriver, getTask, task } from "../support/state-builder.ts";

describe("rule 19: prerequisites across pull requests", () => {
  it("merged (default): a dependent waits until its prerequisite's pull request merged", () => {
    const d = createDriver();
    const s = opened(
      d,
      toPrOpen(d, buildState({ tasks: [task("A"), task("B", { prerequisites: ["A"] })] }), "A"),
      "A",
    );
    expect(runnableTasks(s, d.ctx.now).map((t) => t.id)).toEqual([]);
    const merged = d.apply(s, { kind: "pr-merged", taskId: "A", mergeCommitSha: "m", mergedBy: null });
    expect(runnableTasks(merged, d.ctx.now).map((t) => t.id)).toEqual(["B"]);
  });

  it("stacked: a pr_open prerequisite satisfies it, its base is that pull request's branch, retargeted on merge", () => {
    const d = createDriver();
    let s = opened(
      d,
      toPrOpen(d, buildState({ tasks: [task("A"), task("B", { prerequisites: ["A"] })] }), "A"),
      "A",
    );
    expect(runnableTasks(s, d.ctx.now, null, "stacked").map((t) => t.id)).toEqual(["B"]);
    const claimed = d.step(s, { kind: "claim", prerequisites: "stacked" });
    expect(activeRunOf(claimed.state, "B").action).toBe("execute");
    expect(pullRequestBase(claimed.state, getTask(claimed.state, "B"), "main")).toBe("overseer/pr/A");
    s = d.apply(claimed.state, {
      kind: "submit",
      runId: activeRunOf(claimed.state, "B").id,
      message: "b",
      commitSha: HEAD,
      branchHead: HEAD,
    });
    s = toPrOpenFromReview(d, s, "B", { base: "main", prerequisites: "stacked", headSha: HEAD });
    expect(prOf(s, "B").base).toBe("overseer/pr/A");
    const merged = d.step(s, { kind: "pr-merged", taskId: "A", mergeCommitSha: "m", mergedBy: null });
    expect(prOf(merged.state, "B").base).toBe("main");
    expect(merged.events.find((e) => e.type === "pr.retarget_requested")).toMatchObject({
      taskId: "B",
      data: { from: "overseer/pr/A", to: "main" },
    });
  });

  it("stacked: a prerequisite back with an executor (red checks) keeps its pull request open and stays the base", () => {
    const d = createDriver();
    let s = opened(
      d,
      toPrOpen(d, buildState({ tasks: [task("A"), task("B", { prerequisites: ["A"] })] }), "A"),
      "A",
    );
    const claimed = d.step(s, { kind: "claim", prerequisites: "stacked" });
    s = d.apply(claimed.state, {
      kind: "submit",
      runId: activeRunOf(claimed.state, "B").id,
      message: "b",
      commitSha: HEAD,
      branchHead: HEAD,
    });
    // A's checks go red: A is todo again, its pull request still open on overseer/pr/A.
    s = d.apply(s, checks("A", "failure"));
    expect(getTask(s, "A").status).toBe("todo");
    expect(pullRequestBase(s, getTask(s, "B"), "main")).toBe("overseer/pr/A");
    s = toPrOpenFromReview(d, s, "B", { base: "main", prerequisites: "stacked", headSha: HEAD });
    expect(prOf(s, "B").base).toBe("overseer/pr/A");
    // Its own open pull request keeps the base it targets (its next runs build on it too).
    expect(pullRequestBase(s, getTask(s, "B"), "main")).toBe("overseer/pr/A");
  });

  it("stacked: two prerequisites with open pull requests cannot both be the base; it waits", () => {
    const d = createDriver({});
    let s = buildState({
      project: { concurrency: 1 },
      tasks: [task("A"), task("B"), task("C", { prerequisites: ["A", "B"] })],
    });
    s = toPrOpen(d, s, "A");
    s = toPrOpen(d, s, "B");
    expect(runnableTasks(s, d.ctx.now, null, "stacked").map((t) => t.id)).toEqual([]);
  });
});
