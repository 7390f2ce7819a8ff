/**
 * Property tests: random projects (a DAG of tasks with random priorities and stages) driven by
 * random command sequences. Each step picks one of the commands that are meaningful in the
 * current state (claims, outcomes of active runs, operator commands) or a deliberately invalid
 * one, applies it, and checks the invariants below against the previous state.
 *
 *   (a) done only through approve by a review run whose agent is not the task's executor
 *   (b) blocked is left only when its own resolver is done, or by an operator cancel/stop
 *   (c) resolvers deeper than 3, or past the 6th remediation under a root, are awaiting_input
 *   (d) agent ids are never reused and never a retired id
 *   (e) awaiting_input is left only through an operator command
 *   (f) at most `concurrency` active runs
 *   (g) an active run's task is in_progress (execute/resolve) or review (review); one per task
 *   (h) applying a run outcome again is a no-op (`already_applied`, same state, no events)
 *   (i) applyCommand never mutates its input (deep-frozen input, Map entries compared by identity)
 *   (j) only an import creates work tasks (todo, every prerequisite known); a start resets
 *       the session budget and records project.started
 *   (k) missions: an approved plan is imported whole (every proposed card) or not at all;
 *       planning rounds are created only by start-mission, a continuous claim with every task
 *       finished, or a replan, and never past the round limit; a project completes only through
 *       a fresh reviewer's approve of completion evidence with no pending card and no open task;
 *       with plan_approval operator a reviewer's approve imports nothing (the plan waits on a
 *       pending card) and only the operator's approve_plan imports it, whole or not at all
 *   (l) project settings: update-project-config touches no task, run or card, sets the
 *       concurrency it names and records project.config_updated with the changed keys;
 *       create-project against an existing project and invalid settings are refused
 *   (m) a failed landing (land-failed by a fresh reviewer) returns its task to todo with the
 *       landing recorded, or to awaiting_input at the `attempts`-th failure in a row; a task in
 *       review or done never carries one (a submit clears it)
 * plus consistency checks that keep the machine live: an in_progress task has an active run,
 * awaiting_input ⇔ a pending card, blockedBy is set exactly while blocked and names an open
 * resolver. Anything thrown other than a DomainError fails the property.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  AGENT_ID_PATTERN,
  APPROVE_PLAN_OPTION_ID,
  type ApplyResult,
  applyCommand,
  type Command,
  CUSTOM_OPTION_ID,
  isDomainError,
  MAX_REMEDIATIONS_PER_ROOT,
  MAX_RESOLVER_DEPTH,
  type PlanApproval,
  type PlanCard,
  type ProjectState,
  RUN_OUTCOME_KINDS,
  STOP_OPTION_ID,
  type Task,
} from "../src/index.ts";
import { planCard } from "./support/mission-builder.ts";
import { activeRuns, buildState, task, testContext } from "./support/state-builder.ts";

// ---------------------------------------------------------------------------------------
// Generators

interface TaskSpec {
  stage: number;
  priority: number;
  prereqMask: number;
}

const taskSpecArb: fc.Arbitrary<TaskSpec> = fc.record({
  stage: fc.integer({ min: 0, max: 2 }),
  priority: fc.integer({ min: 0, max: 3 }),
  prereqMask: fc.nat({ max: 0xff }),
});

const projectArb = fc.record({
  tasks: fc.array(taskSpecArb, { minLength: 1, maxLength: 5 }),
  concurrency: fc.integer({ min: 1, max: 3 }),
  sessionsLimit: fc.option(fc.integer({ min: 2, max: 25 }), { nil: null }),
  continuous: fc.boolean(),
  maxAttempts: fc.integer({ min: 1, max: 3 }),
  /** Done resolvers already under the first task, so the 6-remediation limit is within reach. */
  priorRemediations: fc.integer({ min: 0, max: MAX_REMEDIATIONS_PER_ROOT }),
  escalating: fc.boolean(),
  /** Start a mission (round limit 1–3) before the first step. */
  mission: fc.option(fc.integer({ min: 1, max: 3 }), { nil: null }),
  /** Who approves a mission's plans (runner config plan_approval), carried by every approve. */
  planApproval: fc.constantFrom<PlanApproval>("reviewer", "operator"),
});
type ProjectSpec = typeof projectArb extends fc.Arbitrary<infer T> ? T : never;

/** Each step: which group of commands, which one inside it, and how far the clock moves. */
const stepArb = fc.record({
  group: fc.integer({ min: 0, max: 99 }),
  pick: fc.nat(),
  advance: fc.constantFrom(0, 0, 50, 400),
});
type StepSpec = typeof stepArb extends fc.Arbitrary<infer T> ? T : never;

/** Ids sort naturally (S00-2 < S00-10); prerequisites only point to earlier tasks: a DAG. */
function buildProject(spec: ProjectSpec): ProjectState {
  const ids = spec.tasks.map((t, k) => `S0${t.stage}-${k + 1}`);
  const tasks = spec.tasks.map((t, k) =>
    task(ids[k] as string, {
      stage: `S0${t.stage}`,
      priority: t.priority,
      role: k % 2 ? "security" : "ci-cd",
      scope: [`src/${k}/**`],
      prerequisites: ids.filter((_, j) => j < k && (t.prereqMask >> j) & 1),
    }),
  );
  const root = tasks[0] as Task;
  for (let n = 1; n <= spec.priorRemediations; n++) {
    tasks.push(
      task(`${root.id}.R${n}`, {
        stage: root.stage,
        kind: "resolver",
        parentId: root.id,
        rootId: root.id,
        depth: 1,
        status: "done",
        prerequisites: root.prerequisites,
      }),
    );
  }
  return buildState({
    project: {
      concurrency: spec.concurrency,
      sessionsLimit: spec.sessionsLimit,
      continuous: spec.continuous,
    },
    tasks,
  });
}

// ---------------------------------------------------------------------------------------
// Candidate commands in a state

/** `ok`: must apply (possibly as `already_applied`); `error`: must throw a DomainError. */
interface Candidate {
  command: Command;
  expect: "ok" | "error";
}

const BACKOFF_MS = 100;

/**
 * Outcomes of every active run. `escalating` sequences favour escalations (deep resolver
 * chains, limits); the others favour submit/approve (tasks reaching done).
 */
function runOutcomes(
  state: ProjectState,
  maxAttempts: number,
  escalating: boolean,
  planApproval: PlanApproval = "reviewer",
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
    if (run.status === "queued") times(2, { kind: "run-started", runId, workerId: "w1" });
    // A redelivery to another worker (recorded only when it is later than the current start).
    if (run.status === "running") ok({ kind: "run-started", runId, workerId: "w2" });
    if (run.action === "review") {
      times(escalating ? 2 : 12, {
        kind: "approve",
        runId,
        landedSha: "sha",
        landedBranch: "main",
        feedback: "ok",
        planApproval,
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
    } else if (state.tasks.get(run.taskId)?.kind === "plan") {
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
    } else {
      ok({ kind: "escalate", runId, reason: "the plan is wrong", replan: true });
      times(escalating ? 2 : 12, {
        kind: "submit",
        runId,
        message: "work",
        commitSha: "sha",
        branchHead: "sha",
      });
    }
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
  return out;
}

/** A card the planner proposes in the generated runs. */
function proposedCard(id: string, prerequisites: readonly string[]) {
  return planCard(id, prerequisites, { stage: "S05", body: "", role: "general", scope: ["src/planned/**"] });
}

/** Operator commands that answer or release: the usual way out of awaiting_input and pauses. */
function operatorReleases(state: ProjectState): Candidate[] {
  const out: Candidate[] = [];
  const by = "operator";
  for (const t of state.tasks.values()) {
    if (t.status === "done" || t.status === "cancelled") continue;
    if (t.status === "awaiting_input") {
      out.push({ command: { kind: "answer", taskId: t.id, text: "here is the answer", by }, expect: "ok" });
      if (t.kind === "resolver") {
        out.push({
          command: { kind: "release-external", taskId: t.id, reason: "done outside", by },
          expect: "ok",
        });
      }
    } else if (t.status === "blocked" || t.status === "in_progress") {
      out.push({
        command: { kind: "answer", taskId: t.id, text: "a hint for the next run", by },
        expect: "ok",
      });
    }
  }
  for (const d of state.decisions.values()) {
    if (d.status !== "pending") continue;
    const base = {
      kind: "resolve-decision" as const,
      decisionId: d.id,
      by,
      resolutionId: `res-${d.id}-${d.revision}`,
    };
    for (const option of d.options) {
      const note = option.requires_note ? "a note" : undefined;
      out.push({ command: { ...base, optionId: option.id, note }, expect: "ok" });
    }
    out.push({ command: { ...base, optionId: CUSTOM_OPTION_ID, note: "free text" }, expect: "ok" });
    const offersStop = d.options.some((o) => o.id === STOP_OPTION_ID);
    out.push({ command: { ...base, optionId: STOP_OPTION_ID }, expect: offersStop ? "ok" : "error" });
  }
  if (state.project.status !== "active") {
    out.push({ command: { kind: "set-project-status", status: "active", by }, expect: "ok" });
  }
  // A new start (rule 12): fresh session budget, sometimes limited to one stage.
  out.push({ command: { kind: "start-project", by, stage: null, sessionsLimit: 6 }, expect: "ok" });
  out.push({ command: { kind: "start-project", by, stage: "S01", sessionsLimit: null }, expect: "ok" });
  // More work arrives: new cards, one depending on an existing task.
  const existing = [...state.tasks.keys()];
  const fresh = `S02-${state.tasks.size + 100}`;
  out.push({
    command: {
      kind: "import-tasks",
      by,
      tasks: [importedCard(fresh, existing.slice(0, 1)), importedCard(`${fresh}b`, [fresh])],
    },
    expect: "ok",
  });
  const planning = [...state.tasks.values()].some((t) => t.kind === "plan" && !isTerminal(t));
  out.push({
    command: {
      kind: "start-mission",
      objective: "Ship it",
      stage: null,
      sessionsLimit: 30,
      maxRounds: 2,
      by,
    },
    expect: planning ? "error" : "ok",
  });
  return out;
}

/** A card the operator imports in the generated runs. */
function importedCard(id: string, prerequisites: readonly string[]) {
  return planCard(id, prerequisites, {
    stage: "S02",
    title: `Imported ${id}`,
    body: "",
    role: "general",
    scope: ["src/imported/**"],
    priority: 1,
  });
}

function isTerminal(t: Task): boolean {
  return t.status === "done" || t.status === "cancelled";
}

/** Operator commands that end things (cancel, stop, stopping the project) and settings changes. Kept rare. */
function operatorEnds(state: ProjectState): Candidate[] {
  const out: Candidate[] = [];
  const by = "operator";
  for (const t of state.tasks.values()) {
    if (t.status === "done" || t.status === "cancelled") continue;
    out.push({ command: { kind: "cancel", taskId: t.id, by, reason: "not needed" }, expect: "ok" });
    out.push({ command: { kind: "stop", taskId: t.id, by }, expect: "ok" });
  }
  if (state.project.status === "active") {
    out.push({ command: { kind: "set-project-status", status: "stopped", by }, expect: "ok" });
  }
  // Operator settings changes, kept rare like the ends so the other operator paths keep their
  // share. Never below the runs already active: lowering concurrency under them is allowed,
  // but (f) then holds only for new claims.
  const concurrency = Math.max(activeRuns(state).length, 1 + (state.tasks.size % 3));
  out.push({
    command: { kind: "update-project-config", by, patch: { concurrency, objective: "Ship the parser" } },
    expect: "ok",
  });
  out.push({
    command: { kind: "update-project-config", by, patch: { runnerConfig: { attempts: 2 }, budgetUsd: null } },
    expect: "ok",
  });
  return out;
}

function invalidCommands(state: ProjectState): Candidate[] {
  const out: Candidate[] = [];
  const by = "operator";
  out.push({
    command: { kind: "submit", runId: "run-unknown", message: "m", commitSha: null, branchHead: null },
    expect: "error",
  });
  out.push({ command: { kind: "cancel", taskId: "NOPE-1", by }, expect: "error" });
  out.push({
    command: {
      kind: "create-project",
      by,
      project: {
        id: state.project.id,
        name: "again",
        repo: "/srv/repo",
        branch: "main",
        repoKind: "bare",
        objective: "",
        runnerConfig: {},
        concurrency: 1,
        budgetUsd: null,
        status: "paused",
        continuous: false,
      },
    },
    expect: "error",
  });
  out.push({ command: { kind: "update-project-config", by, patch: { concurrency: 0 } }, expect: "error" });
  out.push({ command: { kind: "update-project-config", by, patch: { budgetUsd: -1 } }, expect: "error" });
  const someTask = [...state.tasks.keys()][0];
  if (someTask) {
    out.push({ command: { kind: "import-tasks", by, tasks: [importedCard(someTask, [])] }, expect: "error" });
  }
  out.push({
    command: { kind: "import-tasks", by, tasks: [importedCard("S03-new", ["NOPE-1"])] },
    expect: "error",
  });
  out.push({
    command: {
      kind: "start-mission",
      objective: " ",
      stage: null,
      sessionsLimit: null,
      maxRounds: 2,
      by: "operator",
    },
    expect: "error",
  });
  for (const run of activeRuns(state)) {
    if (run.action !== "review" && state.tasks.get(run.taskId)?.kind !== "plan") {
      out.push({
        command: {
          kind: "propose",
          runId: run.id,
          proposal: { kind: "complete", evidence: "done" },
          commitSha: null,
          branchHead: null,
          maxAttempts: 3,
        },
        expect: "error",
      });
    }
    if (run.action === "review") {
      out.push({
        command: { kind: "submit", runId: run.id, message: "m", commitSha: null, branchHead: null },
        expect: "error",
      });
    } else {
      out.push({
        command: { kind: "approve", runId: run.id, landedSha: null, landedBranch: null },
        expect: "error",
      });
      out.push({ command: { kind: "reject", runId: run.id, feedback: "f" }, expect: "error" });
      out.push({
        command: {
          kind: "land-failed",
          runId: run.id,
          reason: "conflict",
          files: ["x"],
          details: "",
          branch: "main",
          maxAttempts: 3,
        },
        expect: "error",
      });
    }
  }
  for (const t of state.tasks.values()) {
    if (t.status === "done" || t.status === "cancelled") {
      out.push({ command: { kind: "cancel", taskId: t.id, by }, expect: "error" });
      out.push({ command: { kind: "stop", taskId: t.id, by }, expect: "error" });
      out.push({ command: { kind: "answer", taskId: t.id, text: "late", by }, expect: "error" });
    } else {
      out.push({ command: { kind: "answer", taskId: t.id, text: " ", by }, expect: "error" });
    }
    if (t.kind !== "resolver" || t.status !== "awaiting_input") {
      out.push({ command: { kind: "release-external", taskId: t.id, reason: "r", by }, expect: "error" });
    }
  }
  for (const d of state.decisions.values()) {
    const base = { kind: "resolve-decision" as const, decisionId: d.id, by, resolutionId: "res-late" };
    if (d.status === "pending") {
      out.push({ command: { ...base, optionId: "not-offered" }, expect: "error" });
      out.push({ command: { ...base, optionId: CUSTOM_OPTION_ID }, expect: "error" });
    } else {
      // Same option again: already_applied; another option: stale.
      out.push({ command: { ...base, optionId: d.selectedOption ?? "x", note: "again" }, expect: "ok" });
      const other = d.selectedOption === CUSTOM_OPTION_ID ? STOP_OPTION_ID : CUSTOM_OPTION_ID;
      out.push({ command: { ...base, optionId: other, note: "other" }, expect: "error" });
    }
  }
  return out;
}

/** Outcomes for runs that already ended: redeliveries, must be `already_applied`. */
function lateOutcomes(state: ProjectState, maxAttempts: number): Candidate[] {
  const ended = [...state.runs.values()].filter((r) => r.status !== "queued" && r.status !== "running");
  const out: Candidate[] = [];
  for (const run of ended) {
    const asActive: ProjectState = { ...state, runs: new Map([[run.id, { ...run, status: "running" }]]) };
    for (const c of runOutcomes(asActive, maxAttempts, false)) out.push({ command: c.command, expect: "ok" });
  }
  return out;
}

function chooseCommand(
  state: ProjectState,
  step: StepSpec,
  spec: ProjectSpec,
): Candidate & { late: boolean } {
  const claim: Candidate[] = [{ command: { kind: "claim" }, expect: "ok" }];
  const groups: { until: number; list: () => Candidate[]; late?: boolean }[] = [
    { until: 25, list: () => claim },
    { until: 70, list: () => runOutcomes(state, spec.maxAttempts, spec.escalating, spec.planApproval) },
    { until: 85, list: () => operatorReleases(state) },
    { until: 88, list: () => operatorEnds(state) },
    { until: 95, list: () => invalidCommands(state) },
    { until: 100, list: () => lateOutcomes(state, spec.maxAttempts), late: true },
  ];
  const group = groups.find((g) => step.group < g.until) ?? groups[0];
  const list = group?.list() ?? [];
  if (list.length === 0) return { command: { kind: "claim" }, expect: "ok", late: false };
  const picked = list[step.pick % list.length] as Candidate;
  return { ...picked, late: group?.late ?? false };
}

// ---------------------------------------------------------------------------------------
// Checks

/** Freezes everything reachable except the Maps themselves (those are checked by `sameEntries`). */
function deepFreeze(value: unknown): void {
  if (typeof value !== "object" || value === null || Object.isFrozen(value)) return;
  if (value instanceof Map) {
    for (const v of value.values()) deepFreeze(v);
    return;
  }
  Object.freeze(value);
  for (const v of Object.values(value)) deepFreeze(v);
}

type Entries = { project: unknown; maps: [ReadonlyMap<string, unknown>, [string, unknown][]][] };

function entriesOf(state: ProjectState): Entries {
  return {
    project: state.project,
    maps: [state.tasks, state.runs, state.decisions].map((m) => [m, [...m.entries()]]),
  };
}

/**
 * (i) purity: every value reachable from the input is frozen (a write would throw in this
 * strict-mode module), so it is enough that no Map gained, lost or replaced an entry.
 */
function expectUnchanged(state: ProjectState, snapshot: Entries): void {
  ensure(state.project === snapshot.project, () => "the input project was replaced");
  for (const [map, entries] of snapshot.maps) {
    ensure(map.size === entries.length, () => "an input map gained or lost entries");
    for (const [key, value] of entries)
      ensure(map.get(key) === value, () => `input entry ${key} was replaced`);
  }
}

const OPERATOR_RELEASES = new Set<Command["kind"]>([
  "answer",
  "resolve-decision",
  "release-external",
  "cancel",
  "stop",
]);
const RUN_OUTCOMES = new Set<Command["kind"]>(RUN_OUTCOME_KINDS);

interface History {
  /** Every agent id ever minted in this sequence. */
  agentIds: Set<string>;
  stats: Stats;
}

interface Stats {
  steps: number;
  done: number;
  blockerLimit: number;
  depthLimit: number;
  remediationLimit: number;
  nested: number;
  stale: number;
  exhausted: number;
  rounds: number;
  imported: number;
  completed: number;
  awaitingPlan: number;
  operatorImported: number;
  landingFailed: number;
  landingLimit: number;
}

/** A resolve-decision choosing approve_plan on a card of a plan waiting for the operator. */
function byOperatorPlanApproval(prev: ProjectState, command: Command): boolean {
  if (command.kind !== "resolve-decision" || command.optionId !== APPROVE_PLAN_OPTION_ID) return false;
  const decision = prev.decisions.get(command.decisionId);
  return (
    decision?.status === "pending" && prev.tasks.get(decision.itemId)?.awaitingReason === "plan_approval"
  );
}

function statusOf(state: ProjectState, id: string | null): Task["status"] | undefined {
  return id === null ? undefined : state.tasks.get(id)?.status;
}

function isStop(command: Command, result: ApplyResult): boolean {
  return (
    command.kind === "stop" ||
    (command.kind === "resolve-decision" && result.resolution?.optionId === STOP_OPTION_ID)
  );
}

/**
 * A plain assertion: this runs thousands of times per test, and `expect` costs far more.
 * The message is built only on failure; fast-check then reports the shrunk sequence.
 */
function ensure(condition: boolean, message: () => string): void {
  if (!condition) throw new Error(message());
}

/**
 * (k) A plan is imported whole, its planning task then `done`, or not at all: `created` (sorted)
 * against the plan's ids. Answers whether it was imported; `importer` names the step in messages.
 */
function ensureWholeImport(
  plan: readonly PlanCard[],
  created: readonly string[],
  done: boolean,
  via: (what: string) => () => string,
  importer: string,
): boolean {
  const proposed = plan.map((c) => c.id).sort();
  const imported = created.join() === proposed.join();
  ensure(
    imported || created.length === 0,
    via(`plan imported partly: ${created.join()} of ${proposed.join()}`),
  );
  ensure(imported === done, via(`the planning task's end does not match ${importer}`));
  return imported;
}

function checkStep(prev: ProjectState, command: Command, result: ApplyResult, history: History): void {
  const next = result.state;
  const via = (what: string) => () => `${what} (after ${JSON.stringify(command)})`;

  // (j) a start: active, fresh session budget, recorded.
  if (command.kind === "start-project") {
    ensure(
      next.project.status === "active" && next.project.sessionsUsed === 0,
      via("start left the project inactive or kept its used sessions"),
    );
    ensure(
      result.events.some((e) => e.type === "project.started"),
      via("start recorded no project.started event"),
    );
  }

  // (l) operator settings: nothing but the project changes, recorded with the changed keys.
  if (command.kind === "update-project-config") {
    const { changes } = result;
    ensure(
      changes.tasks.length === 0 && changes.runs.length === 0 && changes.decisions.length === 0,
      via("a settings change touched tasks, runs or cards"),
    );
    ensure(
      command.patch.concurrency === undefined || next.project.concurrency === command.patch.concurrency,
      via("the concurrency was not the one set"),
    );
    ensure(changes.settings === command.patch, via("the settings change was not recorded for persistence"));
    const event = result.events.find((e) => e.type === "project.config_updated");
    ensure(
      event !== undefined &&
        JSON.stringify(event.data.changed) ===
          JSON.stringify(
            (["runnerConfig", "objective", "concurrency", "budgetUsd"] as const).filter(
              (k) => command.patch[k] !== undefined,
            ),
          ),
      via("project.config_updated missing or naming other keys"),
    );
  }

  for (const after of next.tasks.values()) {
    const before = prev.tasks.get(after.id);

    // (a) done only by a fresh reviewer's approve.
    if (after.status === "done" && before?.status !== "done" && byOperatorPlanApproval(prev, command)) {
      // (k) the operator's approve_plan of a plan a fresh reviewer approved before.
      ensure(
        before?.kind === "plan" &&
          before.status === "awaiting_input" &&
          before.awaitingReason === "plan_approval",
        via(`${after.id} done by an operator's approve_plan without a waiting plan`),
      );
    } else if (after.status === "done" && before?.status !== "done") {
      const run = command.kind === "approve" ? prev.runs.get(command.runId) : undefined;
      ensure(run !== undefined, via(`${after.id} became done without an approve`));
      ensure(
        run?.action === "review" && run.taskId === after.id,
        via(`${after.id} done by a non-review run`),
      );
      ensure(
        before?.executorAgentId != null && run?.agentId !== before.executorAgentId,
        via(`${after.id} approved by its executor ${before?.executorAgentId}`),
      );
      ensure(
        result.events.some((e) => e.type === "task.approved" && e.taskId === after.id),
        via(`${after.id} done without a task.approved event`),
      );
      history.stats.done++;
    }
    // (m) failed landings: back to todo with the landing recorded; never in review or done.
    if (
      command.kind === "land-failed" &&
      result.outcome === "applied" &&
      prev.runs.get(command.runId)?.taskId === after.id
    ) {
      const run = prev.runs.get(command.runId);
      ensure(
        run?.action === "review" && before?.status === "review" && run.agentId !== before.executorAgentId,
        via(`${after.id} land-failed from ${before?.status} by a ${run?.action} run`),
      );
      ensure(
        after.landing?.reason === command.reason &&
          ((before?.landingFailures ?? 0) + 1 < command.maxAttempts
            ? after.status === "todo" && after.landingFailures === (before?.landingFailures ?? 0) + 1
            : after.status === "awaiting_input" && after.landingFailures === 0),
        via(
          `${after.id} land-failed (${before?.landingFailures} before, max ${command.maxAttempts}) left it ${after.status} with landing ${JSON.stringify(after.landing)}`,
        ),
      );
      ensure(
        result.events.some((e) => e.type === "task.landing_failed" && e.taskId === after.id),
        via(`${after.id} land-failed without a task.landing_failed event`),
      );
      history.stats.landingFailed++;
      if (after.status === "awaiting_input") history.stats.landingLimit++;
    }
    if (after.status === "review" || after.status === "done") {
      ensure(after.landing === null, via(`${after.id} is ${after.status} with a landing failure recorded`));
    }
    if (before?.status === "done" || before?.status === "cancelled") {
      ensure(after.status === before.status, via(`${after.id} left ${before.status} for ${after.status}`));
    }

    // (b) blocked is left only through its own resolver's done, or operator cancel/stop.
    if (before?.status === "blocked" && after.status !== "blocked") {
      const viaResolver =
        command.kind === "approve" &&
        prev.runs.get(command.runId)?.taskId === before.blockedBy &&
        statusOf(next, before.blockedBy) === "done";
      // Cancelling a task also cancels its open resolver chain (no continuation), so a
      // blocked resolver may end `cancelled` when an ancestor is cancelled.
      const viaCancel =
        command.kind === "cancel" &&
        (command.taskId === after.id ||
          command.taskId === before.blockedBy ||
          (after.status === "cancelled" &&
            before.rootId === (prev.tasks.get(command.taskId)?.rootId ?? command.taskId)));
      ensure(
        viaResolver || viaCancel || isStop(command, result),
        via(`${after.id} left blocked for ${after.status}`),
      );
      if (viaResolver)
        ensure(after.status === (before.returnTo ?? "todo"), via(`${after.id} unblocked to ${after.status}`));
      else
        ensure(
          after.status === "cancelled" || after.status === "awaiting_input",
          via(`${after.id} → ${after.status}`),
        );
    }

    // (e) awaiting_input is left only through an operator command.
    if (before?.status === "awaiting_input" && after.status !== "awaiting_input") {
      // `start` is the one step after a configuration fix: it releases configuration cards only.
      const viaStart =
        command.kind === "start-project" &&
        (before.awaitingReason === "configuration_error" ||
          before.awaitingReason === "harness_not_configured");
      ensure(
        OPERATOR_RELEASES.has(command.kind) || viaStart,
        via(`${after.id} left awaiting_input for ${after.status}`),
      );
    }

    // (k) planning rounds: only from a start, a continuous claim with all finished, or a replan.
    if (result.changes.createdTaskIds.has(after.id) && after.kind === "plan") {
      history.stats.rounds++;
      const byStart = command.kind === "start-mission";
      const byClaim =
        command.kind === "claim" &&
        prev.project.continuous &&
        prev.project.mission !== null &&
        prev.project.mission.evidence === null &&
        [...prev.tasks.values()].every(isTerminal);
      const byReplan =
        command.kind === "escalate" && command.replan === true && prev.project.mission !== null;
      ensure(byStart || byClaim || byReplan, via(`planning task ${after.id} created`));
      ensure(
        after.status === "todo" || after.status === "in_progress",
        via(`planning task ${after.id} is ${after.status}`),
      );
    } else if (
      result.changes.createdTaskIds.has(after.id) &&
      (command.kind === "approve" || command.kind === "import-tasks" || byOperatorPlanApproval(prev, command))
    ) {
      // Only an import creates work tasks: new, todo, with every prerequisite known.
      // (k) imported by an approved plan: checked as a whole below.
      ensure(
        after.kind === "work" && after.status === "todo",
        via(`imported ${after.id} is not a todo work task`),
      );
      ensure(
        after.prerequisites.every((p) => next.tasks.has(p)),
        via(`imported ${after.id} has an unknown prerequisite`),
      );
    } else if (result.changes.createdTaskIds.has(after.id)) {
      // (c) limits: created resolvers past depth 3 or the 6th remediation wait for an operator.
      ensure(after.kind === "resolver", via(`created ${after.id} is not a resolver`));
      let remediation = 0;
      for (const t of next.tasks.values())
        if (t.kind === "resolver" && t.rootId === after.rootId) remediation++;
      const overLimit = after.depth > MAX_RESOLVER_DEPTH || remediation > MAX_REMEDIATIONS_PER_ROOT;
      if (after.depth > 1) history.stats.nested++;
      if (overLimit) {
        history.stats.blockerLimit++;
        if (after.depth > MAX_RESOLVER_DEPTH) history.stats.depthLimit++;
        if (remediation > MAX_REMEDIATIONS_PER_ROOT) history.stats.remediationLimit++;
        ensure(
          after.status === "awaiting_input" &&
            after.awaitingReason === "blocker_limit" &&
            next.decisions.get(`decision-${after.id}`)?.status === "pending",
          via(
            `over-limit resolver ${after.id} (depth ${after.depth}, remediation ${remediation}) is ${after.status}`,
          ),
        );
      } else if (
        command.kind === "timeout" ||
        command.kind === "no-transition" ||
        (command.kind === "escalate" && !command.needsUser)
      ) {
        ensure(after.status === "todo", via(`resolver ${after.id} within limits is ${after.status}`));
      }
      // Rule 4: the resolver carries the original's prerequisites and does not depend on it.
      const parent = next.tasks.get(after.parentId ?? "");
      ensure(
        parent?.status === "blocked" && parent.blockedBy === after.id,
        via(`parent of ${after.id} not blocked by it`),
      );
      ensure(
        parent !== undefined &&
          !after.prerequisites.includes(parent.id) &&
          after.prerequisites.join() === parent.prerequisites.join() &&
          after.depth === parent.depth + 1,
        via(`resolver ${after.id} prerequisites/depth do not match its parent`),
      );
    }
  }
  for (const id of prev.tasks.keys()) ensure(next.tasks.has(id), via(`task ${id} disappeared`));

  // (d) fresh agent ids, never a retired one.
  if (result.changes.createdRunIds.size > 0) {
    const retired = new Set([...next.tasks.values()].flatMap((t) => t.retiredAgentIds));
    for (const runId of result.changes.createdRunIds) {
      const run = next.runs.get(runId);
      ensure(run !== undefined, via(`created run ${runId} missing`));
      if (!run) continue;
      ensure(AGENT_ID_PATTERN.test(run.agentId), via(`malformed agent id ${run.agentId}`));
      ensure(!history.agentIds.has(run.agentId), via(`agent id ${run.agentId} reused`));
      ensure(!retired.has(run.agentId), via(`retired agent id ${run.agentId} minted`));
      history.agentIds.add(run.agentId);
    }
  }

  // (f) concurrency; (g) active runs belong to working tasks, one per task.
  const active = activeRuns(next);
  ensure(
    active.length <= next.project.concurrency,
    via(`${active.length} active runs > ${next.project.concurrency}`),
  );
  const perTask = new Map<string, number>();
  for (const run of active) {
    perTask.set(run.taskId, (perTask.get(run.taskId) ?? 0) + 1);
    const status = statusOf(next, run.taskId);
    const expected = run.action === "review" ? "review" : "in_progress";
    ensure(status === expected, via(`active ${run.action} run ${run.id} on a ${status} task`));
  }
  for (const [taskId, n] of perTask) ensure(n === 1, via(`${n} active runs on ${taskId}`));

  // Liveness: nothing is left in a state no command can move it out of.
  for (const t of next.tasks.values()) {
    if (t.status === "in_progress")
      ensure(perTask.get(t.id) === 1, via(`${t.id} in_progress without an active run`));
    const pending = next.decisions.get(`decision-${t.id}`)?.status === "pending";
    ensure(
      pending === (t.status === "awaiting_input"),
      via(`${t.id} is ${t.status}; pending card: ${pending}`),
    );
    ensure(
      (t.blockedBy !== null) === (t.status === "blocked") || t.status === "cancelled",
      via(`${t.id} is ${t.status} with blockedBy ${t.blockedBy}`),
    );
    if (t.status === "blocked") {
      const resolver = next.tasks.get(t.blockedBy ?? "");
      ensure(
        resolver?.parentId === t.id && resolver.status !== "done" && resolver.status !== "cancelled",
        via(`${t.id} blocked by ${t.blockedBy}, which is ${resolver?.status}`),
      );
    }
  }

  // (k) operator approval: a reviewer's approve of a plan imports nothing and leaves a card.
  if (command.kind === "approve" && command.planApproval === "operator" && result.outcome === "applied") {
    const run = prev.runs.get(command.runId);
    const planning = run ? prev.tasks.get(run.taskId) : undefined;
    if (planning?.kind === "plan" && planning.proposal?.kind === "plan") {
      const after = next.tasks.get(planning.id);
      ensure(result.changes.createdTaskIds.size === 0, via("a plan was imported without the operator"));
      ensure(
        (after?.status === "awaiting_input" &&
          after.awaitingReason === "plan_approval" &&
          next.decisions.get(`decision-${planning.id}`)?.status === "pending") ||
          after?.status === "todo",
        via(`plan ${planning.id} is ${after?.status} after the reviewer's approve`),
      );
      if (after?.status === "awaiting_input") history.stats.awaitingPlan++;
    }
  }
  // (k) the operator's approve_plan imports the waiting plan whole, or nothing.
  if (byOperatorPlanApproval(prev, command) && result.outcome === "applied") {
    const decision = command.kind === "resolve-decision" ? prev.decisions.get(command.decisionId) : undefined;
    const planning = decision ? prev.tasks.get(decision.itemId) : undefined;
    const proposal = planning?.proposal;
    const created = [...result.changes.createdTaskIds].sort();
    if (planning?.awaitingReason === "plan_approval" && proposal?.kind === "plan") {
      const done = statusOf(next, planning.id) === "done";
      if (ensureWholeImport(proposal.tasks, created, done, via, "the operator's import")) {
        history.stats.operatorImported++;
      }
    } else {
      ensure(created.length === 0, via("an approve_plan without a waiting plan created tasks"));
    }
  } else if (command.kind === "resolve-decision" || command.kind === "answer") {
    ensure(result.changes.createdTaskIds.size === 0, via("an operator answer created tasks"));
  }
  // (k) a plan is imported whole or not at all.
  if (command.kind === "approve") {
    const run = prev.runs.get(command.runId);
    const planning = run ? prev.tasks.get(run.taskId) : undefined;
    const proposal = planning?.kind === "plan" ? planning.proposal : null;
    const created = [...result.changes.createdTaskIds].sort();
    if (proposal?.kind === "plan" && result.outcome === "applied") {
      const done = statusOf(next, planning?.id ?? null) === "done";
      if (ensureWholeImport(proposal.tasks, created, done, via, "the import")) history.stats.imported++;
    } else {
      ensure(created.length === 0, via("an approve that was not a plan created tasks"));
    }
  }
  // (k) completion only through a fresh reviewer's approve of evidence, with nothing left open.
  if (next.project.status === "completed" && prev.project.status !== "completed") {
    history.stats.completed++;
    const run = command.kind === "approve" ? prev.runs.get(command.runId) : undefined;
    const planning = run ? prev.tasks.get(run.taskId) : undefined;
    ensure(
      run?.action === "review" && planning?.kind === "plan" && planning.proposal?.kind === "complete",
      via("completed without an approved completion"),
    );
    ensure(run?.agentId !== planning?.executorAgentId, via("completion approved by its planner"));
    ensure(
      ![...prev.decisions.values()].some((d) => d.status === "pending"),
      via("completed with a pending card"),
    );
    ensure([...next.tasks.values()].every(isTerminal), via("completed with an open task"));
    ensure(
      next.project.mission?.evidence != null && !next.project.continuous,
      via("completion kept no evidence"),
    );
  }
  // (k) the round limit holds.
  const mission = next.project.mission;
  if (mission)
    ensure(mission.round <= mission.maxRounds, via(`round ${mission.round} > ${mission.maxRounds}`));

  // Rule 12: exhaustion pauses, completes nothing.
  if (result.events.some((e) => e.type === "project.sessions_exhausted")) {
    history.stats.exhausted++;
    ensure(next.project.status === "paused", via("sessions exhausted but the project is not paused"));
    ensure(
      !result.changes.tasks.some((t) => t.status === "done"),
      via("sessions exhaustion completed a task"),
    );
  }
}

// ---------------------------------------------------------------------------------------
// The property

function runSequence(spec: ProjectSpec, steps: readonly StepSpec[], stats: Stats): void {
  // hexRepeat 3: the context offers each hex three times, so minting meets taken ids.
  const ctx = testContext({ hexRepeat: 3 });
  const history: History = { agentIds: new Set(), stats };
  let state = buildProject(spec);
  if (spec.mission !== null) {
    // A mission starts from an objective alone: its tasks come from its plans.
    state = applyCommand(
      { ...state, tasks: new Map() },
      {
        kind: "start-mission",
        objective: "Ship it",
        stage: null,
        sessionsLimit: null,
        maxRounds: spec.mission,
        by: "operator",
      },
      ctx,
    ).state;
  }
  for (const step of steps) {
    ctx.advance(step.advance);
    const { command, expect: expected, late } = chooseCommand(state, step, spec);
    deepFreeze(state);
    const before = entriesOf(state);
    let result: ApplyResult;
    try {
      result = applyCommand(state, command, ctx);
    } catch (error) {
      if (!isDomainError(error)) throw error;
      if (expected === "ok")
        throw new Error(`${JSON.stringify(command)} was refused: ${error.code} ${error.message}`);
      if (error.code === "stale") stats.stale++;
      // (i) a refusal changes nothing either.
      expectUnchanged(state, before);
      continue;
    }
    // (i) purity.
    expectUnchanged(state, before);
    if (expected === "error")
      throw new Error(`${JSON.stringify(command)} was accepted; expected a DomainError`);
    stats.steps++;

    if (late) {
      ensure(
        result.outcome === "already_applied" && result.state === state,
        () => `late ${JSON.stringify(command)} applied`,
      );
    }
    checkStep(state, command, result, history);

    // (h) redelivery of the same run outcome is a no-op.
    if (RUN_OUTCOMES.has(command.kind) && result.outcome === "applied") {
      const again = applyCommand(result.state, command, ctx);
      ensure(
        again.outcome === "already_applied" &&
          again.state === result.state &&
          again.events.length === 0 &&
          again.incidents.length === 0 &&
          again.changes.tasks.length === 0 &&
          again.changes.runs.length === 0 &&
          again.changes.decisions.length === 0 &&
          again.changes.project === null,
        () => `redelivered ${JSON.stringify(command)} was not a no-op`,
      );
    }
    state = result.state;
  }
}

describe("state machine invariants (property)", () => {
  it("hold for random projects and random command sequences", () => {
    const stats: Stats = {
      steps: 0,
      done: 0,
      blockerLimit: 0,
      depthLimit: 0,
      remediationLimit: 0,
      nested: 0,
      stale: 0,
      exhausted: 0,
      rounds: 0,
      imported: 0,
      completed: 0,
      awaitingPlan: 0,
      operatorImported: 0,
      landingFailed: 0,
      landingLimit: 0,
    };
    fc.assert(
      fc.property(
        projectArb,
        fc.array(stepArb, { minLength: 10, maxLength: 80, size: "max" }),
        (spec, steps) => {
          runSequence(spec, steps, stats);
        },
      ),
      { numRuns: 400 },
    );
    // The generator must actually reach the interesting corners, or the properties say little.
    expect(stats.done).toBeGreaterThan(0);
    expect(stats.nested).toBeGreaterThan(0);
    expect(stats.depthLimit).toBeGreaterThan(0);
    expect(stats.remediationLimit).toBeGreaterThan(0);
    expect(stats.stale).toBeGreaterThan(0);
    expect(stats.rounds).toBeGreaterThan(0);
    expect(stats.imported).toBeGreaterThan(0);
    expect(stats.completed).toBeGreaterThan(0);
    expect(stats.awaitingPlan).toBeGreaterThan(0);
    expect(stats.operatorImported).toBeGreaterThan(0);
    expect(stats.landingFailed).toBeGreaterThan(0);
    expect(stats.landingLimit).toBeGreaterThan(0);
  });
});
