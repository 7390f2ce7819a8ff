import type { RunResult } from "@overseer/queue";
import { describe, expect, it } from "vitest";
import { commandForResult } from "../src/result-command-mapper.ts";

const retry = { maxAttempts: 3, backoffMs: 1000 };

function result(outcome: RunResult["outcome"], extra: Partial<RunResult> = {}): RunResult {
  return {
    v: 1,
    kind: "run-result",
    runId: "r1",
    projectId: "p",
    workerId: "w",
    outcome,
    scopeViolations: [],
    commitSha: null,
    branchHead: null,
    landedSha: null,
    landedBranch: null,
    checkpointRef: null,
    exitCode: 0,
    signal: null,
    durationMs: 1,
    output: "",
    outputTruncated: false,
    timing: { enqueuedAt: 0, pickedAt: 0, spawnedAt: null, exitedAt: null, reportedAt: 0 },
    ...extra,
  };
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
});
