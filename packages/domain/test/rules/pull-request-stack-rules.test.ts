/**
 * Rules 19 and 20 (prerequisites across pull requests): merged and stacked prerequisites, the
 * stacked base and its retarget when the prerequisite merges; a stacked prerequisite closed
 * unmerged and cancelled leaves its dependents on a card.
 */
import { describe, expect, it } from "vitest";
import { type ProjectState, pullRequestBase, RETARGET_OPTION_ID, runnableTasks } from "../../src/index.ts";
import { checks, HEAD, opened, prOf, toPrOpen, toPrOpenFromReview } from "../support/pull-request-builder.ts";
import {
  activeRunOf,
  buildState,
  createDriver,
  type Driver,
  decisionOf,
  getTask,
  task,
} from "../support/state-builder.ts";

describe("rule 19: prerequisites across pull requests", () => {
  it("merged (default): a dependent waits until its prerequisite's pull request merged", () => {
    const d = createDriver();
    const s = withAOpen(d);
    expect(runnableTasks(s, d.ctx.now).map((t) => t.id)).toEqual([]);
    const merged = d.apply(s, { kind: "pr-merged", taskId: "A", mergeCommitSha: "m", mergedBy: null });
    expect(runnableTasks(merged, d.ctx.now).map((t) => t.id)).toEqual(["B"]);
  });

  it("stacked: a pr_open prerequisite satisfies it, its base is that pull request's branch, retargeted on merge", () => {
    const d = createDriver();
    let s = withAOpen(d);
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
    let s = submittedOnA(d, withAOpen(d));
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

/** A pr_open with #7 open, and B, whose prerequisite is A, todo. */
function withAOpen(d: Driver): ProjectState {
  return opened(
    d,
    toPrOpen(d, buildState({ tasks: [task("A"), task("B", { prerequisites: ["A"] })] }), "A"),
    "A",
  );
}

/** `s` with B claimed stacked on A's pull request and its work submitted: B in review. */
function submittedOnA(d: Driver, s: ProjectState): ProjectState {
  const claimed = d.step(s, { kind: "claim", prerequisites: "stacked" });
  return d.apply(claimed.state, {
    kind: "submit",
    runId: activeRunOf(claimed.state, "B").id,
    message: "b",
    commitSha: HEAD,
    branchHead: HEAD,
  });
}

/** A pr_open with #7 open; B stacked on it, pr_open with #8 targeting overseer/pr/A. */
function stackedPair(d: Driver): ProjectState {
  const s = submittedOnA(d, withAOpen(d));
  return opened(
    d,
    toPrOpenFromReview(d, s, "B", { base: "main", prerequisites: "stacked", headSha: HEAD }),
    "B",
    8,
  );
}

describe("rule 20: a stacked prerequisite closed unmerged", () => {
  it("cancelled (on_closed: cancel): the dependent waits on a card naming the closed pull request", () => {
    const d = createDriver();
    const s = stackedPair(d);
    const closed = d.step(s, { kind: "pr-closed", taskId: "A", onClosed: "cancel", closedBy: "alice" });
    expect(getTask(closed.state, "A").status).toBe("cancelled");
    const b = getTask(closed.state, "B");
    expect(b).toMatchObject({ status: "awaiting_input", awaitingReason: "other", returnTo: "todo" });
    expect(prOf(closed.state, "B")).toMatchObject({ status: "open", base: "overseer/pr/A" });
    const card = decisionOf(closed.state, "B");
    expect(card?.title).toBe("Stacked pull request lost its base");
    expect(card?.reason).toContain("#8 (https://forge.test/o/r/pull/8) targets overseer/pr/A");
    expect(card?.reason).toContain(
      "A's pull request #7 (https://forge.test/o/r/pull/7), which was closed unmerged",
    );
    expect(card?.options.map((o) => o.id)).toEqual([RETARGET_OPTION_ID, "stop"]);
    expect(card?.evidence.map((e) => e.path)).toEqual([
      "https://forge.test/o/r/pull/8",
      "https://forge.test/o/r/pull/7",
    ]);
    expect(closed.events.find((e) => e.type === "pr.base_closed")).toMatchObject({
      taskId: "B",
      data: { number: 8, base: "overseer/pr/A", prerequisite: "A", prerequisiteNumber: 7, to: "main" },
    });
    // Redelivered: nothing more.
    const again = d.step(closed.state, { kind: "pr-closed", taskId: "A", onClosed: "cancel" });
    expect(again.outcome).toBe("already_applied");
  });

  it("retarget: the pull request targets the closed one's base and the task runs past the cancelled prerequisite", () => {
    const d = createDriver();
    const closed = d.apply(stackedPair(d), { kind: "pr-closed", taskId: "A", onClosed: "cancel" });
    const card = decisionOf(closed, "B");
    if (!card) throw new Error("no card");
    const answered = d.step(closed, {
      kind: "resolve-decision",
      decisionId: card.id,
      optionId: RETARGET_OPTION_ID,
      by: "op",
      resolutionId: "r1",
    });
    const b = getTask(answered.state, "B");
    expect(b.status).toBe("todo");
    expect(b.feedback).toContain("now targets main");
    // Opening again (number kept): the coordinator moves it on the forge at once, as it opens
    // every opening record, and reads or merges nothing of it against the old base meanwhile.
    expect(prOf(answered.state, "B")).toMatchObject({ status: "opening", base: "main", number: 8 });
    expect(answered.events.find((e) => e.type === "pr.retarget_requested")).toMatchObject({
      taskId: "B",
      data: { number: 8, from: "overseer/pr/A", to: "main" },
    });
    expect(runnableTasks(answered.state, d.ctx.now, null, "stacked").map((t) => t.id)).toEqual(["B"]);
    expect(pullRequestBase(answered.state, b, "main")).toBe("main");
    // The forge's word that it targets main makes it open again; a repeat changes nothing.
    const moved = d.step(answered.state, {
      kind: "pr-opened",
      taskId: "B",
      number: 8,
      url: "https://forge.test/o/r/pull/8",
      headSha: HEAD,
    });
    expect(prOf(moved.state, "B")).toMatchObject({ status: "open", base: "main", number: 8 });
    expect(moved.events.find((e) => e.type === "pr.opened")).toMatchObject({
      data: { number: 8, base: "main" },
    });
    expect(
      d.step(moved.state, {
        kind: "pr-opened",
        taskId: "B",
        number: 8,
        url: "https://forge.test/o/r/pull/8",
        headSha: HEAD,
      }).outcome,
    ).toBe("already_applied");
    // A free-text answer retargets the same way, its words kept for the executor.
    const text = d.apply(closed, { kind: "answer", taskId: "B", text: "keep A's parser", by: "op" });
    expect(prOf(text, "B").base).toBe("main");
    expect(getTask(text, "B").answers.at(-1)?.answer).toBe("keep A's parser");
  });

  it("stop: the dependent is cancelled and its pull request closed", () => {
    const d = createDriver();
    const closed = d.apply(stackedPair(d), { kind: "pr-closed", taskId: "A", onClosed: "cancel" });
    const card = decisionOf(closed, "B");
    if (!card) throw new Error("no card");
    const stopped = d.step(closed, {
      kind: "resolve-decision",
      decisionId: card.id,
      optionId: "stop",
      by: "op",
      resolutionId: "r1",
    });
    expect(getTask(stopped.state, "B").status).toBe("cancelled");
    expect(stopped.events.find((e) => e.type === "pr.close_requested")).toMatchObject({
      taskId: "B",
      data: { number: 8 },
    });
  });

  it("on_closed: todo keeps the branch alive (the dependent stays stacked); cancelling it later asks", () => {
    const d = createDriver();
    const closed = d.apply(stackedPair(d), { kind: "pr-closed", taskId: "A", onClosed: "todo" });
    expect(getTask(closed, "A").status).toBe("todo");
    expect(getTask(closed, "B").status).toBe("pr_open");
    expect(pullRequestBase(closed, getTask(closed, "B"), "main")).toBe("overseer/pr/A");
    const cancelled = d.step(closed, { kind: "cancel", taskId: "A", by: "op" });
    expect(getTask(cancelled.state, "B").status).toBe("awaiting_input");
    expect(cancelled.events.map((e) => e.type)).toContain("pr.base_closed");
  });
});

describe("rule 20 at the dependent's approve", () => {
  it("a dependent still in review when its base died is asked at its approve, its pull request on the dead base", () => {
    const d = createDriver();
    let s = submittedOnA(d, withAOpen(d));
    s = d.apply(s, { kind: "pr-closed", taskId: "A", onClosed: "cancel" });
    expect(getTask(s, "B").status).toBe("review");
    s = toPrOpenFromReview(d, s, "B", { base: "main", prerequisites: "stacked", headSha: HEAD });
    expect(getTask(s, "B").status).toBe("awaiting_input");
    expect(prOf(s, "B")).toMatchObject({ base: "overseer/pr/A", status: "opening" });
    expect(decisionOf(s, "B")?.options.map((o) => o.id)).toEqual([RETARGET_OPTION_ID, "stop"]);
  });
});
