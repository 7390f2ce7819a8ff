import type { RunResult } from "@overseer/queue";
import { runResultFixture } from "@overseer/test-support";
import { describe, expect, it } from "vitest";
import { commandForResult } from "../src/result-command-mapper.ts";

const retry = { maxAttempts: 3, backoffMs: 1000 };

function result(outcome: RunResult["outcome"], extra: Partial<RunResult> = {}): RunResult {
  return runResultFixture({ runId: "r1", outcome, ...extra });
}

describe("commandForResult", () => {
  it("turns a worker's refusal into a run-violation that keeps the checkpoint", () => {
    const command = commandForResult(
      result(
        {
          kind: "violation",
          violation: "forbidden_transition",
          detail: "an execute run may only submit, escalate",
        },
        { checkpointRef: "overseer/checkpoint/S1/a" },
      ),
      retry,
    );
    expect(command).toEqual({
      kind: "run-violation",
      runId: "r1",
      violation: "forbidden_transition",
      detail: "an execute run may only submit, escalate",
      checkpointRef: "overseer/checkpoint/S1/a",
    });
  });

  it("records an approve that did not land as land-failed with the files, never as a landing", () => {
    const command = commandForResult(
      result(
        { kind: "transition", transition: { version: 1, kind: "approve", feedback: "fine" } },
        {
          branchHead: "abc",
          landingFailure: { reason: "conflict", files: ["a.txt"], details: "CONFLICT (content): a.txt" },
        },
      ),
      retry,
      [],
      undefined,
      "trunk",
    );
    expect(command).toEqual({
      kind: "land-failed",
      runId: "r1",
      reason: "conflict",
      files: ["a.txt"],
      details: "CONFLICT (content): a.txt",
      branch: "trunk",
      reviewerFeedback: "fine",
      maxAttempts: 3,
      usage: undefined,
    });
  });

  it("passes the landed task head along with an approve, so Postgres checks it is the submitted one", () => {
    const command = commandForResult(
      result(
        { kind: "transition", transition: { version: 1, kind: "approve" } },
        { branchHead: "abc", landedSha: "def", landedBranch: "main" },
      ),
      retry,
    );
    expect(command).toMatchObject({ kind: "approve", reviewedHead: "abc", landedSha: "def" });
  });

  it("turns a timeout into a timeout command that keeps the checkpoint", () => {
    const command = commandForResult(
      result({ kind: "timeout", stalled: true, seconds: 90 }, { checkpointRef: "overseer/checkpoint/x" }),
      retry,
    );
    expect(command).toEqual({
      kind: "timeout",
      runId: "r1",
      stalled: true,
      seconds: 90,
      checkpointRef: "overseer/checkpoint/x",
    });
  });

  it("gives a run without a transition the project's retry policy", () => {
    const command = commandForResult(
      result({ kind: "no-transition", detail: "exit 1", crashed: true }),
      retry,
    );
    expect(command).toEqual({
      kind: "no-transition",
      runId: "r1",
      detail: "exit 1",
      crashed: true,
      maxAttempts: 3,
      backoffMs: 1000,
    });
  });

  it("passes a misconfigured run's reason and message along", () => {
    const command = commandForResult(
      result({ kind: "misconfigured", reason: "harness_not_configured", message: "no agent" }),
      retry,
    );
    expect(command).toEqual({
      kind: "run-misconfigured",
      runId: "r1",
      reason: "harness_not_configured",
      message: "no agent",
    });
  });

  it("lets a scope violation take precedence over the agent's own transition", () => {
    const command = commandForResult(
      result(
        { kind: "transition", transition: { version: 1, kind: "submit", message: "m" }, usage: undefined },
        { scopeViolations: ["secrets/key"] },
      ),
      retry,
    );
    expect(command).toEqual({ kind: "scope-violation", runId: "r1", paths: ["secrets/key"] });
  });

  it("turns a submit into a submit with the commit, the branch head and the usage", () => {
    const command = commandForResult(
      result(
        {
          kind: "transition",
          transition: { version: 1, kind: "submit", message: "feat: x", summary: "did x" },
          usage: { costUsd: 0.25 },
        },
        { commitSha: "c1", branchHead: "h1" },
      ),
      retry,
    );
    expect(command).toEqual({
      kind: "submit",
      runId: "r1",
      message: "feat: x",
      summary: "did x",
      commitSha: "c1",
      branchHead: "h1",
      usage: { costUsd: 0.25 },
    });
  });

  it("turns a reject into a reject carrying the feedback", () => {
    const feedback = "Tests are missing for a.ts.";
    const command = commandForResult(
      result({ kind: "transition", transition: { version: 1, kind: "reject", feedback }, usage: undefined }),
      retry,
    );
    expect(command).toEqual({ kind: "reject", runId: "r1", feedback, usage: undefined });
  });

  it("turns an escalate into an escalate with the question, the options and the checkpoint", () => {
    const command = commandForResult(
      result(
        {
          kind: "transition",
          transition: {
            version: 1,
            kind: "escalate",
            reason: "which database?",
            needs_user: true,
            question: "Postgres or SQLite?",
            options: [{ id: "pg", label: "Postgres", requires_note: false }],
          },
          usage: undefined,
        },
        { checkpointRef: "overseer/checkpoint/y" },
      ),
      retry,
    );
    expect(command).toEqual({
      kind: "escalate",
      runId: "r1",
      reason: "which database?",
      needsUser: true,
      category: undefined,
      question: "Postgres or SQLite?",
      options: [{ id: "pg", label: "Postgres", requires_note: false }],
      checkpointRef: "overseer/checkpoint/y",
      replan: undefined,
      usage: undefined,
    });
  });

  it("validates a planner's graph: a valid plan becomes a proposal of tasks", () => {
    const plan = [
      "tasks:",
      "  - id: S01-001",
      "    title: Build it",
      "    scope: [src/**]",
      "    prerequisites: [S00-001]",
    ].join("\n");
    const command = commandForResult(
      result({ kind: "transition", transition: { version: 1, kind: "plan", plan }, usage: undefined }),
      retry,
      ["S00-001"],
    );
    expect(command).toMatchObject({ kind: "propose", runId: "r1", maxAttempts: 3 });
    if (command.kind !== "propose" || command.proposal.kind !== "plan")
      throw new Error(`got ${command.kind}`);
    expect(command.proposal.tasks.map((t) => [t.id, t.prerequisites])).toEqual([["S01-001", ["S00-001"]]]);
  });

  it("validates a planner's graph: an unknown prerequisite becomes a list of problems", () => {
    const plan = ["tasks:", "  - id: S01-001", "    title: Build it", "    prerequisites: [S09-404]"].join(
      "\n",
    );
    const command = commandForResult(
      result({ kind: "transition", transition: { version: 1, kind: "plan", plan }, usage: undefined }),
      retry,
      [],
    );
    if (command.kind !== "propose" || command.proposal.kind !== "problems")
      throw new Error("expected problems");
    expect(command.proposal.problems.join("\n")).toContain("S09-404");
  });

  it("turns a complete into a proposal of completion with the evidence", () => {
    const command = commandForResult(
      result(
        {
          kind: "transition",
          transition: { version: 1, kind: "complete", evidence: "all tests pass" },
          usage: undefined,
        },
        { commitSha: "c2", branchHead: "h2" },
      ),
      retry,
    );
    expect(command).toEqual({
      kind: "propose",
      runId: "r1",
      proposal: { kind: "complete", evidence: "all tests pass" },
      commitSha: "c2",
      branchHead: "h2",
      maxAttempts: 3,
      usage: undefined,
    });
  });
});
