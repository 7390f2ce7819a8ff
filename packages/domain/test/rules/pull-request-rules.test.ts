/**
 * Rules 14–18: landing through pull requests. A fresh reviewer's approve in pull_request mode
 * makes the task `pr_open`; the forge runner's reports (pr-opened, pr-checks, pr-review,
 * pr-merged, pr-closed, pr-conflict) move it on, each idempotent and blind to stale heads.
 * Rules 19–20 (stacked pull requests): pull-request-stack-rules.test.ts.
 */
import { describe, expect, it } from "vitest";
import { runnableTasks } from "../../src/index.ts";
import {
  checks,
  HEAD,
  opened,
  prOf,
  review,
  toPrOpen,
  toPrOpenFromReview,
} from "../support/pull-request-builder.ts";
import { expectDomainError } from "../support/rule-helpers.ts";
import {
  buildState,
  claimFor,
  createDriver,
  decisionOf,
  getTask,
  task,
  toBlocked,
  toReview,
} from "../support/state-builder.ts";

describe("rule 14: approve in pull_request mode opens a pull request instead of landing", () => {
  it("moves the task to pr_open with an opening record of the reviewed head and asks for the pull request", () => {
    const d = createDriver();
    const reviewed = toReview(d, buildState({ tasks: [task("A")] }), "A");
    const { state, run } = claimFor(d, reviewed.state, "A");
    const result = d.step(state, {
      kind: "approve",
      runId: run.id,
      landedSha: HEAD,
      landedBranch: "overseer/pr/A",
      reviewedHead: HEAD,
      pullRequest: { base: "main" },
    });
    expect(run.action).toBe("review");
    const t = getTask(result.state, "A");
    expect(t.status).toBe("pr_open");
    expect(t.pullRequest).toEqual({
      number: null,
      url: null,
      branch: "overseer/pr/A",
      base: "main",
      headSha: HEAD,
      status: "opening",
      checks: "pending",
      review: "none",
      approvals: 0,
      ciFailures: 0,
      mergeCommitSha: null,
      mergedBy: null,
    });
    const requested = result.events.find((e) => e.type === "task.pr_requested");
    expect(requested?.data).toMatchObject({ branch: "overseer/pr/A", base: "main", headSha: HEAD });
    expect(result.events.map((e) => e.type)).not.toContain("task.approved");
  });

  it("is not done and not runnable while its pull request is open", () => {
    const d = createDriver();
    const s = toPrOpen(d, buildState({ tasks: [task("A"), task("B", { prerequisites: ["A"] })] }), "A");
    expect(runnableTasks(s, d.ctx.now).map((t) => t.id)).toEqual([]);
    const claimed = d.step(s, { kind: "claim" });
    expect(claimed.changes.runs).toEqual([]);
  });

  it("refuses an approve in pull_request mode without a reviewed head", () => {
    const d = createDriver();
    const s = buildState({ tasks: [task("A")] });
    const claimed = claimFor(d, s, "A");
    const submitted = d.apply(claimed.state, {
      kind: "submit",
      runId: claimed.run.id,
      message: "m",
      commitSha: null,
      branchHead: null,
    });
    const rev = claimFor(d, submitted, "A");
    expectDomainError(
      () =>
        d.step(rev.state, {
          kind: "approve",
          runId: rev.run.id,
          landedSha: null,
          landedBranch: null,
          pullRequest: { base: "main" },
        }),
      "invalid_transition",
    );
  });

  it("refuses a PR branch that carries another commit than the reviewed head", () => {
    const d = createDriver();
    const reviewed = toReview(d, buildState({ tasks: [task("A")] }), "A");
    const rev = claimFor(d, reviewed.state, "A");
    expectDomainError(
      () =>
        d.step(rev.state, {
          kind: "approve",
          runId: rev.run.id,
          landedSha: null,
          landedBranch: null,
          reviewedHead: HEAD,
          pullRequest: { base: "main", headSha: "0ther" },
        }),
      "invalid_transition",
    );
  });

  it("stacked with no open prerequisite, or merged mode, targets the landing branch", () => {
    const d = createDriver();
    let s = buildState({ tasks: [task("A"), task("B", { prerequisites: ["A"] })] });
    s = opened(d, toPrOpen(d, s, "A"), "A");
    s = d.apply(s, { kind: "pr-merged", taskId: "A", mergeCommitSha: "m", mergedBy: null });
    const reviewed = toReview(d, s, "B");
    s = toPrOpenFromReview(d, reviewed.state, "B", { base: "trunk", prerequisites: "stacked" });
    expect(prOf(s, "B").base).toBe("trunk");
  });

  it("keeps the number of a pull request still open from an earlier round and updates its head", () => {
    const d = createDriver();
    let s = opened(d, toPrOpen(d, buildState({ tasks: [task("A")] }), "A"), "A", 12);
    s = d.apply(s, checks("A", "failure"));
    expect(getTask(s, "A").status).toBe("todo");
    const reviewed = claimFor(d, s, "A");
    s = d.apply(reviewed.state, {
      kind: "submit",
      runId: reviewed.run.id,
      message: "fix",
      commitSha: "beef02",
      branchHead: "beef02",
    });
    const rev = claimFor(d, s, "A");
    s = d.apply(rev.state, {
      kind: "approve",
      runId: rev.run.id,
      landedSha: "beef02",
      landedBranch: "overseer/pr/A",
      reviewedHead: "beef02",
      pullRequest: { base: "main" },
    });
    expect(prOf(s, "A")).toMatchObject({
      number: 12,
      status: "open",
      headSha: "beef02",
      checks: "pending",
      ciFailures: 1,
    });
  });
});

describe("rule 15: pr-opened records the forge's pull request of the approved head", () => {
  it("records number and link once; the same report again changes nothing", () => {
    const d = createDriver();
    const s = toPrOpen(d, buildState({ tasks: [task("A")] }), "A");
    const result = d.step(s, {
      kind: "pr-opened",
      taskId: "A",
      number: 7,
      url: "https://forge.test/o/r/pull/7",
      headSha: HEAD,
    });
    expect(prOf(result.state, "A")).toMatchObject({
      status: "open",
      number: 7,
      url: "https://forge.test/o/r/pull/7",
    });
    expect(result.events.map((e) => e.type)).toEqual(["pr.opened"]);
    const again = d.step(result.state, {
      kind: "pr-opened",
      taskId: "A",
      number: 7,
      url: "https://forge.test/o/r/pull/7",
      headSha: HEAD,
    });
    expect(again.outcome).toBe("already_applied");
  });

  it("ignores a report about another head", () => {
    const d = createDriver();
    const s = toPrOpen(d, buildState({ tasks: [task("A")] }), "A");
    const stale = d.step(s, { kind: "pr-opened", taskId: "A", number: 7, url: "u", headSha: "0ld" });
    expect(stale.outcome).toBe("already_applied");
    expect(stale.state).toBe(s);
  });

  it("refuses reports about a task that never had a pull request", () => {
    const d = createDriver();
    expectDomainError(
      () =>
        d.step(buildState({ tasks: [task("A")] }), {
          kind: "pr-opened",
          taskId: "A",
          number: 1,
          url: "u",
          headSha: HEAD,
        }),
      "invalid_transition",
    );
    expectDomainError(
      () =>
        d.step(buildState({ tasks: [task("A")] }), {
          kind: "pr-merged",
          taskId: "A",
          mergeCommitSha: "m",
          mergedBy: null,
        }),
      "invalid_transition",
    );
  });
});

describe("rule 16: the CI gate", () => {
  it("records green checks once", () => {
    const d = createDriver();
    const s = opened(d, toPrOpen(d, buildState({ tasks: [task("A")] }), "A"), "A");
    const green = d.step(s, checks("A", "success"));
    expect(prOf(green.state, "A").checks).toBe("success");
    expect(getTask(green.state, "A").status).toBe("pr_open");
    expect(green.events.map((e) => e.type)).toEqual(["pr.checks_passed"]);
    expect(d.step(green.state, checks("A", "success")).outcome).toBe("already_applied");
  });

  it("sends a red head back to an executor with each failing check's name, link and log tail", () => {
    const d = createDriver();
    const s = opened(d, toPrOpen(d, buildState({ tasks: [task("A")] }), "A"), "A");
    const red = d.step(s, checks("A", "failure"));
    const t = getTask(red.state, "A");
    expect(t.status).toBe("todo");
    expect(t.pullRequest).toMatchObject({ status: "open", checks: "failure", ciFailures: 1 });
    expect(t.feedback).toContain("unit");
    expect(t.feedback).toContain("https://ci.test/job/1");
    expect(t.feedback).toContain("expected 2, got 3\nFAIL unit");
    const event = red.events.find((e) => e.type === "pr.checks_failed");
    expect(event?.data).toMatchObject({ attempt: 1, maxAttempts: 3, failing: [{ name: "unit" }] });
    // Redelivered: the task no longer waits on that head.
    expect(d.step(red.state, checks("A", "failure")).outcome).toBe("already_applied");
  });

  it("at `attempts` red rounds in a row asks an operator on a card with the links", () => {
    const d = createDriver();
    const s = opened(d, toPrOpen(d, buildState({ tasks: [task("A")] }), "A"), "A");
    const red = d.step(s, checks("A", "failure", { maxAttempts: 1 }));
    const t = getTask(red.state, "A");
    expect(t).toMatchObject({ status: "awaiting_input", awaitingReason: "other", returnTo: "todo" });
    expect(t.pullRequest?.ciFailures).toBe(0);
    const card = decisionOf(red.state, "A");
    expect(card?.status).toBe("pending");
    expect(card?.title).toBe("Pull request checks keep failing");
    expect(card?.evidence.map((e) => e.path)).toEqual([
      "https://forge.test/o/r/pull/7",
      "https://ci.test/job/1",
    ]);
  });

  it("counts red rounds in a row: a green round starts the count again", () => {
    const d = createDriver();
    const s = opened(d, toPrOpen(d, buildState({ tasks: [task("A")] }), "A"), "A");
    const red = d.step(s, checks("A", "failure", { maxAttempts: 2 }));
    const again = toPrOpen(d, red.state, "A");
    expect(prOf(again, "A").ciFailures).toBe(1);
    const green = d.step(again, checks("A", "success"));
    expect(prOf(green.state, "A").ciFailures).toBe(0);
    // A later red (a re-run of the same head) is the first of a new row, not the `attempts`-th.
    const redAgain = d.step(green.state, checks("A", "failure", { maxAttempts: 2 }));
    expect(getTask(redAgain.state, "A").status).toBe("todo");
    expect(prOf(redAgain.state, "A").ciFailures).toBe(1);
  });

  it("ignores checks of a stale head", () => {
    const d = createDriver();
    const s = opened(d, toPrOpen(d, buildState({ tasks: [task("A")] }), "A"), "A");
    const stale = d.step(s, checks("A", "failure", { headSha: "0ld" }));
    expect(stale.outcome).toBe("already_applied");
  });
});

describe("rule 17: human review", () => {
  it("sends changes requested back with every unresolved thread (file, line, comment, replies) and comment", () => {
    const d = createDriver();
    const s = opened(d, toPrOpen(d, buildState({ tasks: [task("A")] }), "A"), "A");
    const result = d.step(
      s,
      review("A", {
        changesRequested: true,
        threads: [
          {
            path: "src/a.ts",
            line: 12,
            comments: [
              { author: "alice", body: "Rename this." },
              { author: "bob", body: "And add a test." },
            ],
          },
          { path: "README.md", line: null, comments: [{ author: "alice", body: "Document the flag." }] },
        ],
        comments: [{ author: "carol", body: "@overseer please also update the changelog" }],
      }),
    );
    const t = getTask(result.state, "A");
    expect(t.status).toBe("todo");
    expect(t.pullRequest?.review).toBe("changes_requested");
    for (const text of [
      "src/a.ts:12",
      "alice: Rename this.",
      "reply by bob: And add a test.",
      "README.md",
      "Document the flag.",
      "carol: @overseer please also update the changelog",
    ])
      expect(t.feedback).toContain(text);
    expect(result.events.find((e) => e.type === "pr.changes_requested")?.data).toMatchObject({
      threads: 2,
      comments: 1,
      changesRequested: true,
    });
  });

  it("an unresolved thread alone is work too, even without changes requested", () => {
    const d = createDriver();
    const s = opened(d, toPrOpen(d, buildState({ tasks: [task("A")] }), "A"), "A");
    const result = d.step(
      s,
      review("A", {
        approvals: 1,
        threads: [{ path: "x.ts", line: 1, comments: [{ author: "a", body: "why?" }] }],
      }),
    );
    expect(getTask(result.state, "A").status).toBe("todo");
  });

  it("records approvals, with pr.approved once they reach the required number", () => {
    const d = createDriver();
    const s = opened(d, toPrOpen(d, buildState({ tasks: [task("A")] }), "A"), "A");
    const one = d.step(s, review("A", { approvals: 1, requiredApprovals: 2 }));
    expect(prOf(one.state, "A")).toMatchObject({ approvals: 1, review: "none" });
    expect(one.events.map((e) => e.type)).toEqual(["pr.review_updated"]);
    const two = d.step(one.state, review("A", { approvals: 2, requiredApprovals: 2 }));
    expect(prOf(two.state, "A")).toMatchObject({ approvals: 2, review: "approved" });
    expect(two.events.map((e) => e.type)).toEqual(["pr.approved"]);
    expect(getTask(two.state, "A").status).toBe("pr_open");
    expect(d.step(two.state, review("A", { approvals: 2, requiredApprovals: 2 })).outcome).toBe(
      "already_applied",
    );
  });

  it("ignores a review of a stale head", () => {
    const d = createDriver();
    const s = opened(d, toPrOpen(d, buildState({ tasks: [task("A")] }), "A"), "A");
    expect(d.step(s, review("A", { headSha: "0ld", changesRequested: true })).outcome).toBe(
      "already_applied",
    );
  });
});

describe("rule 18: merged, closed unmerged, conflict with a moved base, cancel", () => {
  it("merged by anyone: done with the merge commit recorded, once", () => {
    const d = createDriver();
    const s = opened(d, toPrOpen(d, buildState({ tasks: [task("A")] }), "A"), "A");
    const merged = d.step(s, { kind: "pr-merged", taskId: "A", mergeCommitSha: "m3rge", mergedBy: "alice" });
    const t = getTask(merged.state, "A");
    expect(t.status).toBe("done");
    expect(t.pullRequest).toMatchObject({ status: "merged", mergeCommitSha: "m3rge", mergedBy: "alice" });
    expect(merged.events.map((e) => e.type)).toEqual(["pr.merged", "task.approved"]);
    expect(
      d.step(merged.state, { kind: "pr-merged", taskId: "A", mergeCommitSha: "m3rge", mergedBy: "alice" })
        .outcome,
    ).toBe("already_applied");
  });

  it("merged while an executor reworks it: the run is cancelled and the task is done", () => {
    const d = createDriver();
    let s = opened(d, toPrOpen(d, buildState({ tasks: [task("A")] }), "A"), "A");
    s = d.apply(s, checks("A", "failure"));
    const claimed = claimFor(d, s, "A");
    const merged = d.step(claimed.state, {
      kind: "pr-merged",
      taskId: "A",
      mergeCommitSha: "m",
      mergedBy: "bob",
    });
    expect(getTask(merged.state, "A").status).toBe("done");
    expect(merged.state.runs.get(claimed.run.id)?.status).toBe("cancelled");
  });

  it("a merged resolver unblocks its original", () => {
    const d = createDriver();
    const blocked = toBlocked(d, buildState({ tasks: [task("A")] }), "A");
    const s = opened(d, toPrOpen(d, blocked.state, blocked.resolverId), blocked.resolverId);
    expect(getTask(s, "A").status).toBe("blocked");
    const merged = d.step(s, {
      kind: "pr-merged",
      taskId: blocked.resolverId,
      mergeCommitSha: "m",
      mergedBy: null,
    });
    expect(getTask(merged.state, "A").status).toBe("todo");
    expect(merged.events.map((e) => e.type)).toContain("task.unblocked");
  });

  it("closed unmerged with on_closed cancel: cancelled; with todo: back to an executor", () => {
    const d = createDriver();
    const s = opened(d, toPrOpen(d, buildState({ tasks: [task("A")] }), "A"), "A");
    const cancelled = d.step(s, { kind: "pr-closed", taskId: "A", onClosed: "cancel", closedBy: "alice" });
    expect(getTask(cancelled.state, "A").status).toBe("cancelled");
    expect(prOf(cancelled.state, "A").status).toBe("closed");
    expect(cancelled.events.map((e) => e.type)).not.toContain("pr.close_requested");
    const todo = d.step(s, { kind: "pr-closed", taskId: "A", onClosed: "todo", closedBy: "alice" });
    expect(getTask(todo.state, "A")).toMatchObject({ status: "todo" });
    expect(getTask(todo.state, "A").feedback).toContain("closed unmerged by alice");
    expect(d.step(todo.state, { kind: "pr-closed", taskId: "A", onClosed: "todo" }).outcome).toBe(
      "already_applied",
    );
  });

  it("a conflict with the moved base is a failed landing: todo with the files, awaiting at the limit", () => {
    const d = createDriver();
    const s = opened(d, toPrOpen(d, buildState({ tasks: [task("A")] }), "A"), "A");
    const conflict = d.step(s, {
      kind: "pr-conflict",
      taskId: "A",
      headSha: HEAD,
      files: ["b.ts", "a.ts", "a.ts"],
      maxAttempts: 2,
    });
    const t = getTask(conflict.state, "A");
    expect(t).toMatchObject({
      status: "todo",
      landing: { reason: "conflict", files: ["a.ts", "b.ts"] },
      landingFailures: 1,
    });
    expect(t.feedback).toContain("could not land on main");
    expect(conflict.events.find((e) => e.type === "task.landing_failed")?.data).toMatchObject({
      pullRequest: 7,
      attempt: 1,
    });
    expect(
      d.step(conflict.state, { kind: "pr-conflict", taskId: "A", headSha: HEAD, files: [], maxAttempts: 2 })
        .outcome,
    ).toBe("already_applied");
    const limit = d.step(s, {
      kind: "pr-conflict",
      taskId: "A",
      headSha: HEAD,
      files: ["a.ts"],
      maxAttempts: 1,
    });
    expect(getTask(limit.state, "A").status).toBe("awaiting_input");
  });

  it("an operator cancel of a pr_open task asks the coordinator to close its pull request", () => {
    const d = createDriver();
    const s = opened(d, toPrOpen(d, buildState({ tasks: [task("A")] }), "A"), "A");
    const cancelled = d.step(s, { kind: "cancel", taskId: "A", by: "op" });
    expect(getTask(cancelled.state, "A").status).toBe("cancelled");
    expect(cancelled.events.find((e) => e.type === "pr.close_requested")?.data).toMatchObject({
      number: 7,
      branch: "overseer/pr/A",
    });
    // The forge then reports it closed: recorded, the task stays cancelled.
    const closed = d.step(cancelled.state, { kind: "pr-closed", taskId: "A", onClosed: "todo" });
    expect(getTask(closed.state, "A").status).toBe("cancelled");
    expect(prOf(closed.state, "A").status).toBe("closed");
  });
});
