/**
 * Rules 8–10 and run violations: a run that timed out, ended without a transition, broke a run rule or left its scope.
 * The flow rules of docs/state-machine.md, one `describe` per rule, against the pure state
 * machine (the handlers in src/transitions/). Each test builds a small project, drives it with
 * commands and checks the resulting state, events, incidents and decision cards.
 */
import { describe, expect, it } from "vitest";
import { type Command, nextWakeAt } from "../../src/index.ts";
import { expectDomainError } from "../support/rule-helpers.ts";
import {
  activeRunOf,
  buildState,
  claimFor,
  createDriver,
  decisionOf,
  getTask,
  resolversOf,
  task,
  toDone,
  toReview,
} from "../support/state-builder.ts";

describe("rule 8: timeout kills the run and creates a remediation with the timeout as reason", () => {
  it("fails the run, records an incident and blocks the task behind a resolver", () => {
    const d = createDriver();
    const claimed = claimFor(d, buildState({ tasks: [task("A")] }), "A");
    const result = d.step(claimed.state, {
      kind: "timeout",
      runId: claimed.run.id,
      stalled: false,
      seconds: 1800,
    });
    const run = result.state.runs.get(claimed.run.id);
    expect(run?.status).toBe("failed");
    expect(run?.failure).toContain("timed out after 1800 s");
    expect(result.incidents).toEqual([
      expect.objectContaining({ kind: "timeout", taskId: "A", runId: claimed.run.id }),
    ]);
    const a = getTask(result.state, "A");
    expect(a.status).toBe("blocked");
    expect(a.retiredAgentIds).toContain(claimed.run.agentId);
    const resolver = getTask(result.state, a.blockedBy ?? "");
    expect(resolver).toMatchObject({ status: "todo", kind: "resolver" });
    expect(resolver.body).toContain("timed out after 1800 s");
  });

  it("an idle stall is recorded as a stall incident", () => {
    const d = createDriver();
    const claimed = claimFor(d, buildState({ tasks: [task("A")] }), "A");
    const result = d.step(claimed.state, {
      kind: "timeout",
      runId: claimed.run.id,
      stalled: true,
      seconds: 300,
    });
    expect(result.incidents.map((i) => i.kind)).toEqual(["stall"]);
    expect(result.state.runs.get(claimed.run.id)?.failure).toContain("stalled");
  });

  it("a stall names the idle time that triggered it, not the run's whole duration", () => {
    const d = createDriver();
    const claimed = claimFor(d, buildState({ tasks: [task("A")] }), "A");
    const result = d.step(claimed.state, {
      kind: "timeout",
      runId: claimed.run.id,
      stalled: true,
      seconds: 100,
      idleSeconds: 45,
    });
    expect(result.incidents[0]?.message).toContain(
      "no output and no file change for 45 s, after 100 s of run",
    );
    expect(result.incidents[0]?.details).toMatchObject({ seconds: 100, idleSeconds: 45 });
  });
});

describe("rule 9: no transition → retry with exponential backoff, then a remediation", () => {
  const noTransition = (runId: string, crashed = false): Command => ({
    kind: "no-transition",
    runId,
    detail: "exit 1",
    crashed,
    maxAttempts: 3,
    backoffMs: 1000,
  });

  it("retries after 1×, then 2× the backoff, then escalates after maxAttempts", () => {
    const d = createDriver();
    let s = buildState({ tasks: [task("A")] });

    let claimed = claimFor(d, s, "A");
    expect(claimed.run.attempt).toBe(1);
    let r = d.step(claimed.state, noTransition(claimed.run.id));
    expect(r.state.runs.get(claimed.run.id)?.status).toBe("failed");
    expect(getTask(r.state, "A")).toMatchObject({ status: "todo", failures: 1, notBefore: d.ctx.now + 1000 });
    expect(r.events.find((e) => e.type === "task.retry_scheduled")?.data).toMatchObject({
      attempt: 2,
      delayMs: 1000,
    });
    expect(nextWakeAt(r.state, d.ctx.now)).toBe(d.ctx.now + 1000);
    expect(d.step(r.state, { kind: "claim" }).changes.runs).toEqual([]);

    d.ctx.advance(1000);
    claimed = claimFor(d, r.state, "A");
    expect(claimed.run.attempt).toBe(2);
    expect(getTask(claimed.state, "A").notBefore).toBeNull();
    r = d.step(claimed.state, noTransition(claimed.run.id));
    expect(getTask(r.state, "A")).toMatchObject({ status: "todo", failures: 2, notBefore: d.ctx.now + 2000 });
    // The next run is told why each earlier one ended, oldest first (the detail holds its last lines).
    expect(getTask(r.state, "A").feedback).toMatch(
      /^The previous run \(\S+\) ended without a transition: exit 1\n\nThe previous run \(\S+\) ended without a transition: exit 1$/,
    );

    d.ctx.advance(1999);
    expect(d.step(r.state, { kind: "claim" }).changes.runs).toEqual([]);
    d.ctx.advance(1);
    claimed = claimFor(d, r.state, "A");
    expect(claimed.run.attempt).toBe(3);
    r = d.step(claimed.state, noTransition(claimed.run.id));
    s = r.state;
    const a = getTask(s, "A");
    expect(a).toMatchObject({ status: "blocked", failures: 0, notBefore: null });
    expect(a.statusReason).toContain("attempt 3 of 3");
    expect(getTask(s, a.blockedBy ?? "")).toMatchObject({ status: "todo", kind: "resolver" });
  });

  it("a crash records a harness_crash incident; a review run retries in review", () => {
    const d = createDriver();
    const reviewed = toReview(d, buildState({ tasks: [task("A")] }), "A");
    const review = claimFor(d, reviewed.state, "A");
    const r = d.step(review.state, noTransition(review.run.id, true));
    expect(r.incidents.map((i) => i.kind)).toEqual(["harness_crash"]);
    expect(getTask(r.state, "A")).toMatchObject({ status: "review", failures: 1 });
    d.ctx.advance(1000);
    const again = claimFor(d, r.state, "A");
    expect(again.run).toMatchObject({ action: "review", attempt: 2 });
  });

  it("after an escalation the unblocked task gets its full retry budget again", () => {
    const d = createDriver();
    const twice = (runId: string): Command => ({ ...noTransition(runId), maxAttempts: 2 }) as Command;
    let claimed = claimFor(d, buildState({ tasks: [task("A")] }), "A");
    let s = d.apply(claimed.state, twice(claimed.run.id));
    expect(getTask(s, "A").failures).toBe(1);
    d.ctx.advance(1000);
    claimed = claimFor(d, s, "A");
    s = d.apply(claimed.state, { kind: "escalate", runId: claimed.run.id, reason: "needs a fixture" });
    expect(getTask(s, "A")).toMatchObject({ status: "blocked", failures: 0, notBefore: null });
    s = toDone(d, s, getTask(s, "A").blockedBy ?? "");
    claimed = claimFor(d, s, "A");
    expect(claimed.run.attempt).toBe(1);
    s = d.apply(claimed.state, twice(claimed.run.id));
    expect(getTask(s, "A")).toMatchObject({ status: "todo", failures: 1 });
  });

  it("runs that keep ending without calling overseer-agent pause the project with one incident, no resolver", () => {
    const d = createDriver();
    const protocol = (runId: string): Command =>
      ({
        ...noTransition(runId),
        detail: "exit 0 without calling overseer-agent. The model's last message: I have created hello.txt.",
        protocolNotFollowed: true,
      }) as Command;
    let s = buildState({ tasks: [task("A"), task("B")] });
    const incidents: string[] = [];
    for (let attempt = 1; attempt <= 3; attempt++) {
      const claimed = claimFor(d, s, "A");
      const r = d.step(claimed.state, protocol(claimed.run.id));
      incidents.push(...r.incidents.map((i) => i.kind));
      s = r.state;
      d.ctx.advance(10_000);
    }
    expect(incidents).toEqual(["protocol_not_followed"]);
    expect(resolversOf(s, "A")).toEqual([]);
    expect(getTask(s, "A")).toMatchObject({
      status: "awaiting_input",
      awaitingReason: "configuration_error",
    });
    const card = decisionOf(s, "A");
    expect(card?.title).toBe("The agent does not follow the protocol");
    expect(card?.reason).toContain("3 runs of A in a row ended without calling overseer-agent");
    expect(card?.reason).toContain("The model's last message: I have created hello.txt.");
    expect(s.project.status).toBe("paused");
    expect(s.project.statusReason).toMatch(
      /^protocol_not_followed in A: The agent does not follow the protocol/,
    );
    // After the fix, start alone runs A again.
    s = d.apply(s, { kind: "start-project", by: "op", stage: null, sessionsLimit: null });
    expect(claimFor(d, s, "A").run.attempt).toBe(1);
  });

  it("a successful transition resets the failure count", () => {
    const d = createDriver();
    const claimed = claimFor(d, buildState({ tasks: [task("A")] }), "A");
    let s = d.apply(claimed.state, noTransition(claimed.run.id));
    d.ctx.advance(1000);
    const next = toReview(d, s, "A");
    s = next.state;
    expect(getTask(s, "A").failures).toBe(0);
  });
});

describe("run violations: a transition the run may not make, or the disk limit → incident and escalation", () => {
  for (const violation of ["forbidden_transition", "disk_limit"] as const) {
    it(`records a ${violation} incident, fails the run and hands the task to a resolver`, () => {
      const d = createDriver();
      const claimed = claimFor(d, buildState({ tasks: [task("A")] }), "A");
      const result = d.step(claimed.state, {
        kind: "run-violation",
        runId: claimed.run.id,
        violation,
        detail: "what the worker saw",
        checkpointRef: "overseer/checkpoint/A/x",
      });
      expect(result.incidents).toEqual([
        expect.objectContaining({
          kind: violation,
          taskId: "A",
          runId: claimed.run.id,
          details: { action: "execute", checkpointRef: "overseer/checkpoint/A/x" },
        }),
      ]);
      expect(result.incidents[0]?.message).toContain("what the worker saw");
      expect(result.state.runs.get(claimed.run.id)?.status).toBe("failed");
      const a = getTask(result.state, "A");
      expect(a.status).toBe("blocked");
      expect(resolversOf(result.state, "A")).toHaveLength(1);
      // Redelivered: applied once.
      expect(
        d.step(result.state, { kind: "run-violation", runId: claimed.run.id, violation, detail: "x" })
          .outcome,
      ).toBe("already_applied");
    });
  }
});

describe("rule 10: scope violation → incident, awaiting remediation, project paused, nothing rolled back", () => {
  it("records the paths, creates an awaiting_input resolver and pauses the project", () => {
    const d = createDriver();
    const base = buildState({
      project: { concurrency: 2 },
      tasks: [task("A", { scope: ["src/a/**"] }), task("B")],
    });
    const claimed = d.apply(base, { kind: "claim" });
    const runA = activeRunOf(claimed, "A");
    const runB = activeRunOf(claimed, "B");
    const result = d.step(claimed, {
      kind: "scope-violation",
      runId: runA.id,
      paths: ["z/secret.txt", "README.md"],
    });
    expect(result.incidents).toEqual([
      expect.objectContaining({
        kind: "scope_violation",
        taskId: "A",
        runId: runA.id,
        details: { paths: ["README.md", "z/secret.txt"], scope: ["src/a/**"] },
      }),
    ]);
    expect(result.state.runs.get(runA.id)?.status).toBe("failed");
    const a = getTask(result.state, "A");
    expect(a.status).toBe("blocked");
    const resolver = getTask(result.state, a.blockedBy ?? "");
    expect(resolver).toMatchObject({ status: "awaiting_input", awaitingReason: "scope_violation" });
    expect(decisionOf(result.state, resolver.id)?.status).toBe("pending");
    expect(result.state.project).toMatchObject({ status: "paused" });
    expect(result.state.project.statusReason).toContain("scope violation");
    // Nothing rolled back: the other run goes on, no run is cancelled.
    expect(result.state.runs.get(runB.id)?.status).toBe("queued");
    expect(result.events.map((e) => e.type)).not.toContain("run.cancelled");
    // Paused: nothing new starts.
    expect(d.step(result.state, { kind: "claim" }).changes.runs).toEqual([]);
  });
});

describe("rule 9: a worker's outcome the machine refuses is a failed run, decided in the same command", () => {
  const retry = { maxAttempts: 2, backoffMs: 1000 };
  const usage = { tokensIn: 1200, tokensOut: 300, costUsd: 0.02 };

  it("an execute run's reject with the retry policy fails the run and schedules a retry; nothing of the reject is kept", () => {
    const d = createDriver();
    const claimed = claimFor(d, buildState({ tasks: [task("A")] }), "A");
    const result = d.step(claimed.state, {
      kind: "reject",
      runId: claimed.run.id,
      feedback: "not mine to reject",
      usage,
      retry,
    });
    expect(result.outcome).toBe("applied");
    expect(result.state.runs.get(claimed.run.id)).toMatchObject({ status: "failed", transition: null });
    expect(result.state.runs.get(claimed.run.id)?.failure).toMatch(
      /ended without a transition: invalid transition: Task A is in_progress; a execute run.s outcome needs it in review\./,
    );
    const a = getTask(result.state, "A");
    expect(a).toMatchObject({ status: "todo", failures: 1, notBefore: d.ctx.now + 1000 });
    expect(a.feedback).toMatch(/^The previous run \(\S+\) ended without a transition: invalid transition/);
    expect(a.feedback).not.toContain("not mine to reject");
    expect(result.events.map((e) => e.type)).toEqual(["run.failed", "task.retry_scheduled"]);
    // The refused outcome's usage is the failed run's: what it spent is counted once.
    expect(result.events[0]?.data).toMatchObject({ usage });
  });

  it("at the last attempt the refused outcome escalates like any run that ended without a transition", () => {
    const d = createDriver();
    const claimed = claimFor(d, buildState({ tasks: [task("A", { failures: 1 })] }), "A");
    const result = d.step(claimed.state, {
      kind: "approve",
      runId: claimed.run.id,
      landedSha: null,
      landedBranch: null,
      retry,
    });
    expect(result.state.runs.get(claimed.run.id)?.status).toBe("failed");
    expect(getTask(result.state, "A")).toMatchObject({ status: "blocked", failures: 0 });
    expect(resolversOf(result.state, "A")).toHaveLength(1);
  });

  it("a redelivered refused outcome is already applied, and without the policy the refusal is thrown", () => {
    const d = createDriver();
    const claimed = claimFor(d, buildState({ tasks: [task("A")] }), "A");
    const submit: Command = {
      kind: "propose",
      runId: claimed.run.id,
      proposal: { kind: "complete", evidence: "done" },
      commitSha: null,
      branchHead: null,
      maxAttempts: 2,
    };
    expectDomainError(() => d.step(claimed.state, submit), "invalid_transition");
    const failed = d.step(claimed.state, { ...submit, retry });
    expect(failed.state.runs.get(claimed.run.id)?.status).toBe("failed");
    const again = d.step(failed.state, { ...submit, retry });
    expect(again.outcome).toBe("already_applied");
    expect(again.state).toBe(failed.state);
  });

  it("a refusal other than an invalid transition (an unknown run) is thrown even with the policy", () => {
    const d = createDriver();
    const s = buildState({ tasks: [task("A")] });
    expectDomainError(
      () => d.step(s, { kind: "reject", runId: "run-unknown", feedback: "f", retry }),
      "not_found",
    );
  });
});
