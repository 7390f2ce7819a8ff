/**
 * Rule 7 and operator cancel: awaiting_input, decision cards, answers, release-external, cancel.
 * The flow rules of docs/state-machine.md, one `describe` per rule, against the pure state
 * machine (the handlers in src/transitions/). Each test builds a small project, drives it with
 * commands and checks the resulting state, events, incidents and decision cards.
 */
import { describe, expect, it } from "vitest";
import { type Command, firstRunnable, runnableTasks, STOP_OPTION_ID } from "../../src/index.ts";
import { expectDomainError, ids } from "../support/rule-helpers.ts";
import {
  activeRuns,
  buildState,
  claimFor,
  createDriver,
  type Driver,
  decisionOf,
  getTask,
  task,
  toBlocked,
  toDone,
  toReview,
} from "../support/state-builder.ts";

describe("rule 7: awaiting_input waits for an operator; release-external; answers and decisions", () => {
  function needsUser(d: Driver) {
    return toBlocked(d, buildState({ tasks: [task("A")] }), "A", {
      needsUser: true,
      category: "credentials",
      reason: "Needs a deploy token",
      question: "Which token should I use?",
      options: [
        { id: "Use Staging", label: "Staging token" },
        { id: "use staging", label: "duplicate" },
        { id: "prod", label: "Production token", requires_note: true },
      ],
    });
  }

  it("an agent that needs the user creates an awaiting_input resolver with the agent's card", () => {
    const d = createDriver();
    const b = needsUser(d);
    const resolver = getTask(b.state, b.resolverId);
    expect(resolver).toMatchObject({
      status: "awaiting_input",
      awaitingReason: "credentials",
      returnTo: "todo",
    });
    const card = decisionOf(b.state, b.resolverId);
    expect(card).toMatchObject({
      id: `decision-${b.resolverId}`,
      itemId: b.resolverId,
      status: "pending",
      question: "Which token should I use?",
      optionsSource: "agent",
    });
    expect(card?.options.map((o) => o.id)).toEqual(["use_staging", "prod"]);
    expect(getTask(b.state, "A").status).toBe("blocked");
  });

  it("is never done by itself: claims leave it waiting", () => {
    const d = createDriver();
    let s = needsUser(d).state;
    for (let i = 0; i < 3; i++) {
      d.ctx.advance(60_000);
      const r = d.step(s, { kind: "claim" });
      expect(r.changes.runs).toEqual([]);
      s = r.state;
    }
    expect([...s.tasks.values()].filter((t) => t.status === "done")).toEqual([]);
  });

  it("release-external makes the resolver runnable without completing it or unblocking the original", () => {
    const d = createDriver();
    const b = toBlocked(d, buildState({ tasks: [task("A")] }), "A", {
      needsUser: true,
      category: "external_admin",
      reason: "DNS record must be created by an admin",
    });
    const result = d.step(b.state, {
      kind: "release-external",
      taskId: b.resolverId,
      reason: "admin created it",
      by: "op",
    });
    const resolver = getTask(result.state, b.resolverId);
    expect(resolver).toMatchObject({ status: "todo", awaitingReason: null });
    expect(resolver.answers.at(-1)).toMatchObject({ answer: "admin created it", by: "op" });
    expect(getTask(result.state, "A").status).toBe("blocked");
    expect(decisionOf(result.state, b.resolverId)?.status).toBe("resolved");
    expect(firstRunnable(result.state, d.ctx.now)?.id).toBe(b.resolverId);
    expect(result.events.map((e) => e.type)).toContain("task.released");
  });

  it("release-external refuses ordinary tasks and resolvers that are not awaiting input", () => {
    const d = createDriver();
    const b = toBlocked(d, buildState({ tasks: [task("A")] }), "A");
    expectDomainError(
      () => d.step(b.state, { kind: "release-external", taskId: "A", reason: "r", by: "op" }),
      "invalid_transition",
    );
    expectDomainError(
      () => d.step(b.state, { kind: "release-external", taskId: b.resolverId, reason: "r", by: "op" }),
      "invalid_transition",
    );
    expectDomainError(
      () => d.step(b.state, { kind: "release-external", taskId: "nope", reason: "r", by: "op" }),
      "not_found",
    );
  });

  it("answer resolves the pending card with the text and releases the task", () => {
    const d = createDriver();
    const b = needsUser(d);
    const result = d.step(b.state, {
      kind: "answer",
      taskId: b.resolverId,
      text: "use the staging one",
      by: "op",
    });
    expect(getTask(result.state, b.resolverId).status).toBe("todo");
    expect(getTask(result.state, b.resolverId).answers.at(-1)).toMatchObject({
      question: "Which token should I use?",
      answer: "use the staging one",
    });
    const card = decisionOf(result.state, b.resolverId);
    expect(card).toMatchObject({ status: "resolved", selectedOption: "custom", note: "use the staging one" });
    expect(result.resolution).toMatchObject({
      decisionId: card?.id,
      optionId: "custom",
      resolutionId: card?.resolutionId,
    });
  });

  it("answer refuses empty text and terminal tasks", () => {
    const d = createDriver();
    const b = needsUser(d);
    expectDomainError(
      () => d.step(b.state, { kind: "answer", taskId: b.resolverId, text: "   ", by: "op" }),
      "note_required",
    );
    const done = toDone(d, buildState({ tasks: [task("A")] }), "A");
    expectDomainError(
      () => d.step(done, { kind: "answer", taskId: "A", text: "x", by: "op" }),
      "invalid_transition",
    );
  });

  it("resolve-decision with an offered option releases the task with the option recorded", () => {
    const d = createDriver();
    const b = needsUser(d);
    const result = d.step(b.state, {
      kind: "resolve-decision",
      decisionId: `decision-${b.resolverId}`,
      optionId: "use_staging",
      by: "op",
      resolutionId: "res-1",
    });
    expect(result.outcome).toBe("applied");
    expect(result.resolution).toEqual({
      decisionId: `decision-${b.resolverId}`,
      resolutionId: "res-1",
      optionId: "use_staging",
    });
    expect(decisionOf(result.state, b.resolverId)).toMatchObject({
      status: "resolved",
      selectedOption: "use_staging",
      resolutionId: "res-1",
      resolvedBy: "op",
    });
    expect(getTask(result.state, b.resolverId).status).toBe("todo");
    expect(getTask(result.state, b.resolverId).answers.at(-1)?.answer).toBe("Staging token");
  });

  it("custom is always accepted but requires a note; an option's own requires_note is enforced", () => {
    const d = createDriver();
    const b = needsUser(d);
    const decisionId = `decision-${b.resolverId}`;
    const base = { kind: "resolve-decision" as const, decisionId, by: "op", resolutionId: "res-1" };
    expectDomainError(() => d.step(b.state, { ...base, optionId: "custom" }), "note_required");
    expectDomainError(() => d.step(b.state, { ...base, optionId: "custom", note: "  " }), "note_required");
    expectDomainError(() => d.step(b.state, { ...base, optionId: "prod" }), "note_required");
    const ok = d.step(b.state, { ...base, optionId: "custom", note: "use token #3" });
    expect(decisionOf(ok.state, b.resolverId)).toMatchObject({
      selectedOption: "custom",
      note: "use token #3",
    });
    expect(getTask(ok.state, b.resolverId).answers.at(-1)?.answer).toContain("use token #3");
  });

  it("an option that is not offered is refused with the allowed ids", () => {
    const d = createDriver();
    const b = needsUser(d);
    const error = expectDomainError(
      () =>
        d.step(b.state, {
          kind: "resolve-decision",
          decisionId: `decision-${b.resolverId}`,
          optionId: "nope",
          by: "op",
          resolutionId: "r",
        }),
      "invalid_option",
    );
    expect(error.details.allowed).toEqual(["use_staging", "prod", "custom", "stop"]);
    expect(error.message).toContain("use_staging, prod, custom, stop");
    expectDomainError(
      () =>
        d.step(b.state, {
          kind: "resolve-decision",
          decisionId: "decision-nope",
          optionId: "x",
          by: "op",
          resolutionId: "r",
        }),
      "not_found",
    );
  });

  it("resolving again with the same option is already_applied with the same resolution id", () => {
    const d = createDriver();
    const b = needsUser(d);
    const decisionId = `decision-${b.resolverId}`;
    const first = d.step(b.state, {
      kind: "resolve-decision",
      decisionId,
      optionId: "use_staging",
      by: "op",
      resolutionId: "res-1",
    });
    const again = d.step(first.state, {
      kind: "resolve-decision",
      decisionId,
      optionId: "use_staging",
      by: "someone-else",
      resolutionId: "res-2",
    });
    expect(again.outcome).toBe("already_applied");
    expect(again.resolution?.resolutionId).toBe("res-1");
    expect(again.state).toBe(first.state);
    expect(again.events).toEqual([]);
    expect(again.changes.tasks).toEqual([]);
  });

  it("another option after resolution is stale and changes nothing", () => {
    const d = createDriver();
    const b = needsUser(d);
    const decisionId = `decision-${b.resolverId}`;
    const first = d.apply(b.state, {
      kind: "resolve-decision",
      decisionId,
      optionId: "use_staging",
      by: "op",
      resolutionId: "res-1",
    });
    const before = structuredClone(first);
    const error = expectDomainError(
      () =>
        d.step(first, {
          kind: "resolve-decision",
          decisionId,
          optionId: "custom",
          note: "x",
          by: "op",
          resolutionId: "res-2",
        }),
      "stale",
    );
    expect(error.details).toMatchObject({
      application_status: "stale",
      resolution_id: "res-1",
      selected_option: "use_staging",
    });
    expect(first).toEqual(before);
  });

  it("run-misconfigured puts the task awaiting_input (harness_not_configured) with a card and an incident", () => {
    const d = createDriver();
    const claimed = claimFor(d, buildState({ tasks: [task("A")] }), "A");
    const result = d.step(claimed.state, {
      kind: "run-misconfigured",
      runId: claimed.run.id,
      reason: "harness_not_configured",
      message: "No argv is configured for role general.",
    });
    expect(getTask(result.state, "A")).toMatchObject({
      status: "awaiting_input",
      awaitingReason: "harness_not_configured",
      returnTo: "todo",
    });
    expect(result.state.runs.get(claimed.run.id)?.status).toBe("failed");
    expect(result.incidents).toEqual([
      expect.objectContaining({ kind: "harness_not_configured", taskId: "A", runId: claimed.run.id }),
    ]);
    const card = decisionOf(result.state, "A");
    expect(card).toMatchObject({ status: "pending", title: "Harness not configured", optionsSource: "none" });
    expect(card?.options.map((o) => o.id)).toEqual(["continue", "custom", STOP_OPTION_ID]);
    // Every other task would fail the same way: the project pauses naming the cause.
    expect(result.state.project).toMatchObject({
      status: "paused",
      statusReason: "harness_not_configured in A: No argv is configured for role general.",
    });
    expect(d.step(result.state, { kind: "claim" }).changes.runs).toEqual([]);
    const resumed = d.apply(result.state, {
      kind: "resolve-decision",
      decisionId: "decision-A",
      optionId: "continue",
      by: "op",
      resolutionId: "res-1",
    });
    expect(getTask(resumed, "A").status).toBe("todo");
    // Continuing the card is the fix's one step: the project claims again.
    expect(resumed.project.status).toBe("active");
  });

  it("`start` after a configuration fix releases the card and resumes, in one step", () => {
    const d = createDriver();
    const claimed = claimFor(d, buildState({ tasks: [task("A"), task("B")] }), "A");
    const paused = d.apply(claimed.state, {
      kind: "run-misconfigured",
      runId: claimed.run.id,
      reason: "configuration_error",
      message: "the model API refused the credentials: Invalid API key (HTTP 401). Fix: set a valid key.",
    });
    expect(decisionOf(paused, "A")?.question).toContain("`overseer start --project");
    const started = d.step(paused, { kind: "start-project", by: "op", stage: null, sessionsLimit: null });
    expect(started.state.project.status).toBe("active");
    expect(getTask(started.state, "A")).toMatchObject({ status: "todo", awaitingReason: null });
    expect(decisionOf(started.state, "A")).toMatchObject({
      status: "resolved",
      selectedOption: "continue",
      resolvedBy: "op",
    });
    expect(getTask(started.state, "A").answers.at(-1)?.answer).toMatch(/configuration was fixed/);
    expect(ids(runnableTasks(started.state, d.ctx.now))).toEqual(["A", "B"]);
  });

  it("a misconfigured review run returns to review once the operator continues, and gets a new card revision next time", () => {
    const d = createDriver();
    const reviewed = toReview(d, buildState({ tasks: [task("A")] }), "A");
    let review = claimFor(d, reviewed.state, "A");
    const cmd = (runId: string): Command => ({
      kind: "run-misconfigured",
      runId,
      reason: "configuration_error",
      message: "bad",
    });
    let s = d.apply(review.state, cmd(review.run.id));
    expect(getTask(s, "A")).toMatchObject({ status: "awaiting_input", returnTo: "review" });
    s = d.apply(s, { kind: "answer", taskId: "A", text: "fixed", by: "op" });
    expect(getTask(s, "A").status).toBe("review");
    expect(s.project.status).toBe("paused");
    s = d.apply(s, { kind: "start-project", by: "op", stage: null, sessionsLimit: null });
    review = claimFor(d, s, "A");
    s = d.apply(review.state, cmd(review.run.id));
    expect(decisionOf(s, "A")).toMatchObject({ status: "pending", revision: 2 });
  });
});

describe("operator cancel", () => {
  it("cancels the task's active runs and drops the worker's late outcome", () => {
    const d = createDriver();
    const claimed = claimFor(d, buildState({ tasks: [task("A")] }), "A");
    const result = d.step(claimed.state, { kind: "cancel", taskId: "A", by: "op", reason: "not needed" });
    expect(getTask(result.state, "A")).toMatchObject({ status: "cancelled", statusReason: "not needed" });
    expect(result.state.runs.get(claimed.run.id)?.status).toBe("cancelled");
    expect(activeRuns(result.state)).toEqual([]);
    // The worker's late outcome is dropped.
    const late = d.step(result.state, {
      kind: "submit",
      runId: claimed.run.id,
      message: "m",
      commitSha: null,
      branchHead: null,
    });
    expect(late.outcome).toBe("already_applied");
    expectDomainError(
      () => d.step(result.state, { kind: "cancel", taskId: "A", by: "op" }),
      "invalid_transition",
    );
  });

  it("resolves a pending card with the stop option when cancelling an awaiting task", () => {
    const d = createDriver();
    const b = toBlocked(d, buildState({ tasks: [task("A")] }), "A", {
      needsUser: true,
      reason: "which API?",
    });
    const result = d.step(b.state, { kind: "cancel", taskId: b.resolverId, by: "op" });
    expect(getTask(result.state, b.resolverId).status).toBe("cancelled");
    expect(decisionOf(result.state, b.resolverId)).toMatchObject({
      status: "resolved",
      selectedOption: STOP_OPTION_ID,
    });
  });

  it("cancelling a resolver asks the operator how its blocked original continues", () => {
    const d = createDriver();
    const b = toBlocked(d, buildState({ tasks: [task("A")] }), "A");
    const s = d.apply(b.state, { kind: "cancel", taskId: b.resolverId, by: "op" });
    expect(getTask(s, "A")).toMatchObject({
      status: "awaiting_input",
      awaitingReason: "other",
      blockedBy: null,
    });
    expect(decisionOf(s, "A")?.status).toBe("pending");
    const resumed = d.apply(s, { kind: "answer", taskId: "A", text: "do it another way", by: "op" });
    expect(getTask(resumed, "A").status).toBe("todo");
  });
});
