/**
 * Run outcomes the property test may send in a state: the outcomes of every active run (its
 * worker started it, the agent's transition, a timeout, a crash, a scope violation, a
 * misconfiguration) and late redeliveries of outcomes of runs that already ended.
 */
import {
  type Command,
  type PlanApproval,
  type PrerequisiteMode,
  type ProjectState,
  type Run,
  STOP_OPTION_ID,
} from "../../../src/index.ts";
import { planCard } from "../mission-builder.ts";
import { activeRuns } from "../state-builder.ts";

/** `ok`: must apply (possibly as `already_applied`); `error`: must throw a DomainError. */
export interface Candidate {
  command: Command;
  expect: "ok" | "error";
}

export const BACKOFF_MS = 100;

/** Adds a candidate that must apply, once or `n` times (a weight). */
interface Add {
  ok(command: Command): void;
  times(n: number, command: Command): void;
}

/**
 * Outcomes of every active run. `escalating` sequences favour escalations (deep resolver
 * chains, limits); the others favour submit/approve (tasks reaching done).
 */
export function runOutcomes(
  state: ProjectState,
  maxAttempts: number,
  escalating: boolean,
  planApproval: PlanApproval = "reviewer",
  /** pull_request mode (its prerequisite mode), or undefined: push mode. */
  pullRequests?: PrerequisiteMode,
): Candidate[] {
  const out: Candidate[] = [];
  for (const run of activeRuns(state)) {
    const runId = run.id;
    const ok = (command: Command): void => {
      out.push({ command, expect: "ok" });
    };
    const times = (n: number, command: Command): void => {
      for (let i = 0; i < n; i++) ok(command);
    };
    const add: Add = { ok, times };
    if (run.status === "queued") times(2, { kind: "run-started", runId, workerId: "w1" });
    // A redelivery to another worker (recorded only when it is later than the current start).
    if (run.status === "running") ok({ kind: "run-started", runId, workerId: "w2" });
    if (run.action === "review")
      reviewOutcomes(add, state, run, maxAttempts, escalating, planApproval, pullRequests);
    else if (state.tasks.get(run.taskId)?.kind === "plan") planningOutcomes(add, state, runId, maxAttempts);
    else executorOutcomes(add, runId, escalating);
    failureOutcomes(add, run, maxAttempts, escalating);
  }
  return out;
}

/** A reviewer's approve, reject and failed landings. */
function reviewOutcomes(
  { ok, times }: Add,
  state: ProjectState,
  run: Run,
  maxAttempts: number,
  escalating: boolean,
  planApproval: PlanApproval,
  pullRequests: PrerequisiteMode | undefined,
): void {
  const runId = run.id;
  times(escalating ? 2 : 12, {
    kind: "approve",
    runId,
    landedSha: pullRequests ? null : "sha",
    landedBranch: pullRequests ? null : "main",
    feedback: "ok",
    planApproval,
    // pull_request mode: the worker pushed the reviewed head to the PR branch.
    ...(pullRequests
      ? {
          reviewedHead: state.tasks.get(run.taskId)?.branchHead ?? null,
          pullRequest: { base: "main", prerequisites: pullRequests },
        }
      : {}),
  });
  times(escalating ? 1 : 3, { kind: "reject", runId, feedback: "needs tests" });
  // Work lands on the main branch; a plan's landing failing is left out so the mission
  // corners (operator plan approval) stay as reachable as before.
  if (state.tasks.get(run.taskId)?.kind !== "plan") {
    times(escalating ? 1 : 2, {
      kind: "land-failed",
      runId,
      reason: "conflict",
      files: ["src/b.ts", "src/a.ts", "src/a.ts"],
      details: "CONFLICT (content): Merge conflict in src/a.ts",
      branch: "main",
      maxAttempts,
    });
    ok({
      kind: "land-failed",
      runId,
      reason: "check_failed",
      files: [],
      details: "1 failed",
      branch: "main",
      maxAttempts,
    });
  }
}

/** A planner's proposals: a valid plan, a plan with an unknown prerequisite, problems, completion. */
function planningOutcomes({ ok, times }: Add, state: ProjectState, runId: string, maxAttempts: number): void {
  const fresh = `S05-${state.tasks.size + 1}`;
  times(8, {
    kind: "propose",
    runId,
    proposal: { kind: "plan", tasks: [proposedCard(fresh, []), proposedCard(`${fresh}b`, [fresh])] },
    commitSha: null,
    branchHead: null,
    maxAttempts,
  });
  times(2, {
    kind: "propose",
    runId,
    proposal: { kind: "plan", tasks: [proposedCard(fresh, ["NOPE-1"])] },
    commitSha: null,
    branchHead: null,
    maxAttempts,
  });
  ok({
    kind: "propose",
    runId,
    proposal: { kind: "problems", problems: ["cycle A → A"] },
    commitSha: null,
    branchHead: null,
    maxAttempts,
  });
  times(3, {
    kind: "propose",
    runId,
    proposal: { kind: "complete", evidence: "42 passed" },
    commitSha: null,
    branchHead: null,
    maxAttempts,
  });
}

/** An executor's replan request and submit. */
function executorOutcomes({ ok, times }: Add, runId: string, escalating: boolean): void {
  ok({ kind: "escalate", runId, reason: "the plan is wrong", replan: true });
  // Each submit a new head, so a pull request's reports about an earlier head are stale.
  times(escalating ? 2 : 12, {
    kind: "submit",
    runId,
    message: "work",
    commitSha: `sha-${runId}`,
    branchHead: `sha-${runId}`,
  });
}

/** What any run may end with: escalations, a timeout, no transition, a scope violation, a misconfiguration. */
function failureOutcomes({ ok, times }: Add, run: Run, maxAttempts: number, escalating: boolean): void {
  const runId = run.id;
  times(escalating ? 8 : 3, {
    kind: "escalate",
    runId,
    reason: "blocked on a dependency",
    checkpointRef: "ck",
  });
  ok({
    kind: "escalate",
    runId,
    reason: "needs a product decision",
    needsUser: true,
    question: "Which one?",
    options: [{ id: "Option A" }, { id: "b", requires_note: true }, { id: STOP_OPTION_ID }],
  });
  ok({ kind: "escalate", runId, reason: "needs credentials", needsUser: true, category: "credentials" });
  ok({ kind: "timeout", runId, stalled: run.attempt % 2 === 0, seconds: 30 });
  ok({
    kind: "no-transition",
    runId,
    detail: "exit 1",
    crashed: false,
    maxAttempts,
    backoffMs: BACKOFF_MS,
  });
  ok({
    kind: "no-transition",
    runId,
    detail: "SIGSEGV",
    crashed: true,
    maxAttempts,
    backoffMs: BACKOFF_MS,
  });
  ok({ kind: "scope-violation", runId, paths: ["outside/file.txt"] });
  ok({ kind: "run-misconfigured", runId, reason: "harness_not_configured", message: "no argv" });
}

/** A card the planner proposes in the generated runs. */
function proposedCard(id: string, prerequisites: readonly string[]) {
  return planCard(id, prerequisites, { stage: "S05", body: "", role: "general", scope: ["src/planned/**"] });
}

/** Outcomes for runs that already ended: redeliveries, must be `already_applied`. */
export function lateOutcomes(state: ProjectState, maxAttempts: number): Candidate[] {
  const ended = [...state.runs.values()].filter((r) => r.status !== "queued" && r.status !== "running");
  const out: Candidate[] = [];
  for (const run of ended) {
    const asActive: ProjectState = { ...state, runs: new Map([[run.id, { ...run, status: "running" }]]) };
    for (const c of runOutcomes(asActive, maxAttempts, false)) out.push({ command: c.command, expect: "ok" });
  }
  return out;
}
