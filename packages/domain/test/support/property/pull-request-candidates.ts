/**
 * The forge runner's reports the property test may send in a state (projects in
 * `landing.mode: pull_request`): for every task with a pull request, reports about its approved
 * head and about a stale one (opened, checks of each state, reviews with and without work,
 * merged, closed, a conflict), and reports about tasks that never had one (refused).
 */
import fc from "fast-check";
import type { Command, PrerequisiteMode, ProjectState, PullRequestOnClosed } from "../../../src/index.ts";
import type { Candidate } from "./run-outcome-candidates.ts";

/** A project's pull-request settings (null: push mode, no pull requests). */
export interface PullRequestSpec {
  prerequisites: PrerequisiteMode;
  onClosed: PullRequestOnClosed;
  requiredApprovals: number;
}

export const pullRequestSpecArb: fc.Arbitrary<PullRequestSpec | null> = fc.option(
  fc.record({
    prerequisites: fc.constantFrom<PrerequisiteMode>("merged", "stacked"),
    onClosed: fc.constantFrom<PullRequestOnClosed>("cancel", "todo"),
    requiredApprovals: fc.integer({ min: 0, max: 2 }),
  }),
  { nil: null, freq: 2 },
);

/** A head no pull request ever carries: reports about it are stale. */
export const STALE_HEAD = "stale-head";

export function pullRequestReports(
  state: ProjectState,
  spec: PullRequestSpec,
  maxAttempts: number,
): Candidate[] {
  const out: Candidate[] = [];
  const ok = (command: Command, n = 1): void => {
    for (let i = 0; i < n; i++) out.push({ command, expect: "ok" });
  };
  let number = 0;
  for (const t of state.tasks.values()) {
    number++;
    const pr = t.pullRequest;
    if (pr === null) {
      if (number === 1) out.push({ command: merged(t.id), expect: "error" });
      continue;
    }
    for (const headSha of [pr.headSha, pr.headSha, pr.headSha, STALE_HEAD]) {
      const taskId = t.id;
      ok({ kind: "pr-opened", taskId, number, url: `https://forge.test/pull/${number}`, headSha }, 2);
      ok({ kind: "pr-checks", taskId, headSha, state: "success", failing: [], maxAttempts }, 2);
      ok({ kind: "pr-checks", taskId, headSha, state: "pending", failing: [], maxAttempts });
      ok(
        {
          kind: "pr-checks",
          taskId,
          headSha,
          state: "failure",
          failing: [
            { name: "unit", url: "https://ci.test/1", logTail: "FAIL a.test.ts" },
            { name: "lint", url: null, logTail: "" },
          ],
          maxAttempts,
        },
        3,
      );
      const review = {
        kind: "pr-review" as const,
        taskId,
        headSha,
        changesRequested: false,
        threads: [],
        comments: [],
        requiredApprovals: spec.requiredApprovals,
      };
      ok({ ...review, approvals: 1 }, 2);
      ok({ ...review, approvals: 2 });
      ok({ ...review, approvals: 0, changesRequested: true }, 2);
      ok(
        {
          ...review,
          approvals: 1,
          threads: [
            {
              path: "src/a.ts",
              line: 3,
              comments: [
                { author: "alice", body: "Why?" },
                { author: "bob", body: "Agreed, why?" },
              ],
            },
          ],
          comments: [{ author: "carol", body: "@overseer also bump the version" }],
        },
        2,
      );
      ok({ kind: "pr-conflict", taskId, headSha, files: ["src/a.ts"], maxAttempts });
    }
    ok(merged(t.id), 8);
    ok({ kind: "pr-closed", taskId: t.id, onClosed: spec.onClosed, closedBy: "alice" });
  }
  return out;
}

function merged(taskId: string): Command {
  return { kind: "pr-merged", taskId, mergeCommitSha: `merge-${taskId}`, mergedBy: "alice" };
}
