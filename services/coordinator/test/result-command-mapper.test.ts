import type { RunResult } from "@overseer/run-contract";
import { runResultFixture } from "@overseer/test-support";
import { describe, expect, it } from "vitest";
import { commandForResult } from "../src/result-command-mapper.ts";

const retry = { maxAttempts: 3, backoffMs: 1000 };

function result(outcome: RunResult["outcome"], extra: Partial<RunResult> = {}): RunResult {
  return runResultFixture({ runId: "r1", outcome, ...extra });
}

/** Outcomes whose command is fully determined by the result and the retry policy. */
const MAPPINGS: {
  name: string;
  outcome: RunResult["outcome"];
  extra?: Partial<RunResult>;
  command: ReturnType<typeof commandForResult>;
}[] = [
  {
    name: "turns a worker's refusal into a run-violation that keeps the checkpoint",
    outcome: {
      kind: "violation",
      violation: "forbidden_transition",
      detail: "an execute run may only submit, escalate",
    },
    extra: { checkpointRef: "overseer/checkpoint/S1/a" },
    command: {
      kind: "run-violation",
      runId: "r1",
      violation: "forbidden_transition",
      detail: "an execute run may only submit, escalate",
      checkpointRef: "overseer/checkpoint/S1/a",
      retry,
    },
  },
  {
    name: "turns a timeout into a timeout command that keeps the checkpoint",
    outcome: { kind: "timeout", stalled: true, seconds: 90 },
    extra: { checkpointRef: "overseer/checkpoint/x" },
    command: {
      kind: "timeout",
      runId: "r1",
      stalled: true,
      seconds: 90,
      checkpointRef: "overseer/checkpoint/x",
      retry,
    },
  },
  {
    name: "gives a run without a transition the project's retry policy",
    outcome: { kind: "no-transition", detail: "exit 1", crashed: true },
    command: {
      kind: "no-transition",
      runId: "r1",
      detail: "exit 1",
      crashed: true,
      maxAttempts: 3,
      backoffMs: 1000,
    },
  },
  {
    name: "passes a misconfigured run's reason and message along",
    outcome: { kind: "misconfigured", reason: "harness_not_configured", message: "no agent" },
    command: {
      kind: "run-misconfigured",
      runId: "r1",
      reason: "harness_not_configured",
      message: "no agent",
      retry,
    },
  },
  {
    name: "lets a scope violation take precedence over the agent's own transition",
    outcome: {
      kind: "transition",
      transition: { version: 1, kind: "submit", message: "m" },
      usage: undefined,
    },
    extra: { scopeViolations: ["secrets/key"] },
    command: { kind: "scope-violation", runId: "r1", paths: ["secrets/key"], retry },
  },
  {
    name: "turns a submit into a submit with the commit, the branch head and the usage",
    outcome: {
      kind: "transition",
      transition: { version: 1, kind: "submit", message: "feat: x", summary: "did x" },
      usage: { costUsd: 0.25 },
    },
    extra: { commitSha: "c1", branchHead: "h1" },
    command: {
      kind: "submit",
      runId: "r1",
      message: "feat: x",
      summary: "did x",
      commitSha: "c1",
      branchHead: "h1",
      usage: { costUsd: 0.25 },
      retry,
    },
  },
  {
    name: "turns a reject into a reject carrying the feedback",
    outcome: {
      kind: "transition",
      transition: { version: 1, kind: "reject", feedback: "Tests are missing for a.ts." },
      usage: undefined,
    },
    command: {
      kind: "reject",
      runId: "r1",
      feedback: "Tests are missing for a.ts.",
      usage: undefined,
      retry,
    },
  },
  {
    name: "turns an escalate into an escalate with the question, the options and the checkpoint",
    outcome: {
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
    extra: { checkpointRef: "overseer/checkpoint/y" },
    command: {
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
      retry,
    },
  },
  {
    name: "turns a complete into a proposal of completion with the evidence",
    outcome: {
      kind: "transition",
      transition: { version: 1, kind: "complete", evidence: "all tests pass" },
      usage: undefined,
    },
    extra: { commitSha: "c2", branchHead: "h2" },
    command: {
      kind: "propose",
      runId: "r1",
      proposal: { kind: "complete", evidence: "all tests pass" },
      commitSha: "c2",
      branchHead: "h2",
      maxAttempts: 3,
      usage: undefined,
      retry,
    },
  },
];

describe("commandForResult", () => {
  it.each(MAPPINGS)("$name", ({ outcome, extra, command }) => {
    expect(commandForResult(result(outcome, extra), retry)).toEqual(command);
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
      retry,
    });
  });

  it("turns an approve whose head went to the PR branch into an approve asking for the pull request", () => {
    const approve = {
      kind: "transition" as const,
      transition: { version: 1 as const, kind: "approve" as const },
    };
    const extra = {
      branchHead: "abc",
      landedSha: null,
      landedBranch: null,
      pullRequestHead: { branch: "overseer/pr/S1", sha: "abc" },
    };
    const stacked = commandForResult(result(approve, extra), retry, [], undefined, "trunk", 50, "stacked");
    expect(stacked).toMatchObject({
      kind: "approve",
      reviewedHead: "abc",
      landedSha: null,
      pullRequest: { base: "trunk", prerequisites: "stacked", headSha: "abc" },
    });
    // Push mode (no pull request head): nothing asks for a pull request.
    const pushed = commandForResult(
      result(approve, { branchHead: "abc", landedSha: "l1", landedBranch: "trunk" }),
      retry,
    );
    expect(pushed).not.toHaveProperty("pullRequest");
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

  it("bounds a planned task's title as imports do (a 250 K title is a problem, not a task)", () => {
    const plan = ["tasks:", "  - id: S01-001", `    title: ${"x".repeat(250_000)}`].join("\n");
    const command = commandForResult(
      result({ kind: "transition", transition: { version: 1, kind: "plan", plan }, usage: undefined }),
      retry,
      [],
    );
    if (command.kind !== "propose" || command.proposal.kind !== "problems")
      throw new Error("expected problems");
    expect(command.proposal.problems.join("\n")).toContain("title: expected at most 500 characters");
  });
});
