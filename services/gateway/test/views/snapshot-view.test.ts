import { type Decision, taskFromCard } from "@overseer/domain";
import { taskCard } from "@overseer/test-support";
import { describe, expect, it } from "vitest";
import { type SnapshotStatus, snapshotView } from "../../src/views/snapshot-view.ts";

const status: SnapshotStatus = {
  project_id: "p1",
  status: "active",
  status_reason: null,
  objective: "ship it",
  stage: null,
  counts: { todo: 2, total: 2 },
  pending_questions: [],
  pending_count: 0,
  waiting_for_you: null,
  mission: null,
  mission_notice: null,
  generated_at: "2026-01-02T03:04:05.000Z",
  running: [],
};

function card(itemId: string, status: Decision["status"], question: string): Decision {
  return {
    id: `decision-${itemId}`,
    projectId: "p1",
    itemId,
    revision: 1,
    status,
    title: `About ${itemId}`,
    reason: "blocked",
    question,
    evidence: [],
    options: [],
    optionsSource: "none",
    selectedOption: status === "resolved" ? "custom" : null,
    note: null,
    resolutionId: null,
    resolvedBy: null,
    createdAt: Date.parse("2026-01-02T03:00:00.000Z"),
    resolvedAt: null,
  };
}

describe("snapshotView", () => {
  it("compact: the counts and pending questions, no running runs and no backlog", () => {
    const view = snapshotView(status, true);
    expect(view).toMatchObject({ compact: true, project_id: "p1", counts: { todo: 2, total: 2 } });
    expect(view).not.toHaveProperty("backlog");
    expect(view).not.toHaveProperty("running");
  });

  it("full: every task in order, with its pending question and its card", () => {
    const tasks = [
      taskFromCard("p1", taskCard("S00-001")),
      taskFromCard("p1", taskCard("S00-002", ["S00-001"])),
    ];
    const view = snapshotView(status, false, tasks, [
      card("S00-001", "resolved", "Which way?"),
      card("S00-002", "pending", "May I delete it?"),
    ]);
    expect(view.compact).toBe(false);
    expect(view.running).toEqual([]);
    expect(view.backlog?.map((t) => [t.id, t.prerequisites, t.pending_question])).toEqual([
      ["S00-001", [], null],
      ["S00-002", ["S00-001"], "May I delete it?"],
    ]);
    expect(view.backlog?.[0]?.operator_decision).toMatchObject({
      id: "decision-S00-001",
      status: "resolved",
    });
    expect(view.backlog?.[1]?.operator_decision).toMatchObject({ id: "decision-S00-002", status: "pending" });
  });

  it("a task without a card has neither question nor decision", () => {
    const view = snapshotView(status, false, [taskFromCard("p1", taskCard("S00-003"))], []);
    expect(view.backlog?.[0]).toMatchObject({
      id: "S00-003",
      pending_question: null,
      operator_decision: null,
    });
  });
});
