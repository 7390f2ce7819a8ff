/**
 * The forge runner's reports the property test may send in a state (projects in
 * `landing.mode: pull_request`): for every task with a pull request, reports about its approved
 * head and about a stale one (opened, checks of each state, reviews with and without work,
 * merged, closed, a conflict), and reports about tasks that never had one (refused).
 */
import fc from "fast-check";
import {
  type Command,
  openPullRequest,
  type PrerequisiteMode,
  type ProjectState,
  type PullRequestOnClosed,
} from "../../../src/index.ts";
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
    // A task waiting on its open pull request gets most reports, about its approved head
    // (weighted so random sequences reach red rounds up to `attempts`, review work and merges);
    // every other task with a record gets each report once (a late or crossing webhook).
    const live = t.status === "pr_open" && openPullRequest(pr) !== null;
    const w = (n: number): number => (live ? n : 1);
    const taskId = t.id;
    const headSha = pr.headSha;
    ok({ kind: "pr-opened", taskId, number, url: `https://forge.test/pull/${number}`, headSha }, w(3));
    ok({ kind: "pr-checks", taskId, headSha, state: "success", failing: [], maxAttempts }, w(3));
    ok({ kind: "pr-checks", taskId, headSha, state: "pending", failing: [], maxAttempts });
    ok({ kind: "pr-checks", taskId, headSha, state: "failure", failing: FAILING, maxAttempts }, w(8));
    const review = {
      kind: "pr-review" as const,
      taskId,
      headSha,
      changesRequested: false,
      threads: [],
      comments: [],
      requiredApprovals: spec.requiredApprovals,
    };
    ok({ ...review, approvals: 1 }, w(3));
    ok({ ...review, approvals: 2 });
    ok({ ...review, approvals: 0, changesRequested: true });
    ok({ ...review, approvals: 1, threads: THREADS, comments: COMMENTS }, w(2));
    ok({ kind: "pr-conflict", taskId, headSha, files: ["src/a.ts"], maxAttempts });
    ok(merged(t.id), w(5));
    ok({ kind: "pr-closed", taskId, onClosed: spec.onClosed, closedBy: "alice" });
    // A pull request others are stacked on, closed for good: their corner (rule 20).
    const stackedOn = [...state.tasks.values()].some(
      (o) => o.id !== t.id && openPullRequest(o.pullRequest)?.base === pr.branch,
    );
    if (stackedOn) ok({ kind: "pr-closed", taskId, onClosed: "cancel", closedBy: "alice" }, 4);
    // The same reports about a head the pull request does not carry: stale, no-ops.
    const stale = { taskId, headSha: STALE_HEAD, maxAttempts };
    ok({ kind: "pr-opened", taskId, number, url: `https://forge.test/pull/${number}`, headSha: STALE_HEAD });
    ok({ kind: "pr-checks", ...stale, state: "failure", failing: FAILING });
    ok({ ...review, headSha: STALE_HEAD, approvals: 0, changesRequested: true });
    ok({ kind: "pr-conflict", ...stale, files: ["src/a.ts"] });
  }
  return out;
}

const FAILING = [
  { name: "unit", url: "https://ci.test/1", logTail: "FAIL a.test.ts" },
  { name: "lint", url: null, logTail: "" },
];

const THREADS = [
  {
    path: "src/a.ts",
    line: 3,
    comments: [
      { author: "alice", body: "Why?" },
      { author: "bob", body: "Agreed, why?" },
    ],
  },
];

const COMMENTS = [{ author: "carol", body: "@overseer also bump the version" }];

function merged(taskId: string): Command {
  return { kind: "pr-merged", taskId, mergeCommitSha: `merge-${taskId}`, mergedBy: "alice" };
}
