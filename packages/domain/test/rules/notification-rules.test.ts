/**
 * Notifications (README "Intake and notifications"): which events of a transition become an
 * outbox notification, with which type, severity and data. One test a rule of `notificationsOf`,
 * each driving the real state machine.
 */
import { describe, expect, it } from "vitest";
import { type ApplyResult, type Notification, notificationsOf, severityRank } from "../../src/index.ts";
import {
  buildState,
  claimFor,
  createDriver,
  type Driver,
  task,
  toBlocked,
} from "../support/state-builder.ts";

const notified = (r: ApplyResult): Notification[] => notificationsOf(r.events, r.changes.decisions);

function needsUser(d: Driver) {
  return toBlocked(d, buildState({ tasks: [task("A")] }), "A", {
    needsUser: true,
    category: "credentials",
    reason: "Needs a deploy token",
    question: "Which token should I use?",
    options: [
      { id: "staging", label: "Staging token" },
      { id: "prod", label: "Production token", requires_note: true },
    ],
  });
}

describe("notificationsOf", () => {
  it("a decision card opened is a warning carrying the card (question, options), pointing at its event", () => {
    const d = createDriver();
    const claimed = claimFor(d, buildState({ tasks: [task("A")] }), "A");
    const result = d.step(claimed.state, {
      kind: "escalate",
      runId: claimed.run.id,
      reason: "Needs a deploy token",
      needsUser: true,
      category: "credentials",
      question: "Which token should I use?",
      options: [{ id: "staging", label: "Staging token" }],
    });
    const [opened, ...rest] = notified(result);
    expect(rest).toEqual([]);
    expect(opened).toMatchObject({ type: "decision.opened", severity: "warning" });
    expect(result.events[opened?.eventIndex ?? -1]?.type).toBe("decision.created");
    expect(opened?.data).toMatchObject({
      question: "Which token should I use?",
      options: [{ id: "staging", label: "Staging token", requires_note: false }],
    });
    expect(opened?.taskId).toBe(result.events[opened?.eventIndex ?? -1]?.taskId);
  });

  it("a decision resolved is info naming the option and who chose it", () => {
    const d = createDriver();
    const b = needsUser(d);
    const result = d.step(b.state, {
      kind: "resolve-decision",
      decisionId: `decision-${b.resolverId}`,
      optionId: "staging",
      by: "op",
      note: "ship it",
      resolutionId: "res-1",
    });
    expect(notified(result)).toEqual([
      expect.objectContaining({
        type: "decision.resolved",
        severity: "info",
        taskId: b.resolverId,
        data: expect.objectContaining({
          optionId: "staging",
          by: "op",
          resolutionId: "res-1",
          note: "ship it",
        }),
      }),
    ]);
  });

  it("an incident is critical; the pause it causes is not a bound pause; its card opens", () => {
    const d = createDriver();
    const claimed = claimFor(d, buildState({ tasks: [task("A")] }), "A");
    const result = d.step(claimed.state, {
      kind: "scope-violation",
      runId: claimed.run.id,
      paths: ["secrets/key.pem"],
    });
    expect(result.state.project.status).toBe("paused");
    expect(notified(result).map((n) => [n.type, n.severity])).toEqual([
      ["incident.recorded", "critical"],
      ["decision.opened", "warning"],
    ]);
  });

  it("a pause at a bound (the budget check) is a warning; an operator's own pause is not notified", () => {
    const d = createDriver();
    const s = buildState({ tasks: [task("A")] });
    const budget = d.step(s, {
      kind: "set-project-status",
      status: "paused",
      by: "coordinator-1",
      reason: "budget_usd 5 reached (spent $5.01)",
      bound: "budget",
    });
    expect(notified(budget)).toEqual([
      expect.objectContaining({
        type: "project.paused",
        severity: "warning",
        data: expect.objectContaining({ bound: "budget", reason: "budget_usd 5 reached (spent $5.01)" }),
      }),
    ]);
    const operator = d.step(s, { kind: "set-project-status", status: "paused", by: "op" });
    expect(operator.state.project.status).toBe("paused");
    expect(notified(operator)).toEqual([]);
  });

  it("max_sessions reached pauses at the sessions bound", () => {
    const d = createDriver();
    let s = buildState({ project: { sessionsLimit: 1 }, tasks: [task("A"), task("B")] });
    const claimed = claimFor(d, s, "A");
    s = d.apply(claimed.state, { kind: "cancel", taskId: "A", by: "op" });
    const result = d.step(s, { kind: "claim" });
    expect(notified(result)).toEqual([
      expect.objectContaining({
        type: "project.paused",
        data: expect.objectContaining({ bound: "sessions" }),
      }),
    ]);
  });

  it("pull requests opened and merged are info with the link and merge commit", () => {
    const events = [
      { type: "pr.opened", taskId: "A", runId: null, data: { number: 7, url: "https://x/pull/7" } },
      { type: "task.approved", taskId: "A", runId: null, data: {} },
      { type: "pr.merged", taskId: "A", runId: null, data: { number: 7, mergeCommitSha: "abc" } },
      { type: "mission.completed", taskId: "P", runId: null, data: { evidence: [] } },
    ] as const;
    expect(notificationsOf(events, []).map((n) => [n.eventIndex, n.type, n.severity])).toEqual([
      [0, "pr.opened", "info"],
      [2, "pr.merged", "info"],
      [3, "mission.completed", "info"],
    ]);
  });

  it("severities are ordered info < warning < critical", () => {
    expect(severityRank("info")).toBeLessThan(severityRank("warning"));
    expect(severityRank("warning")).toBeLessThan(severityRank("critical"));
  });
});
