/**
 * Test helpers for the pure state machine: build a ProjectState from a few fields, a
 * deterministic DomainContext (counter-based ids, a clock the test moves), and a tiny driver
 * that chains commands (`apply(state, command)` → next state).
 */
import {
  type ApplyResult,
  applyCommand,
  type Command,
  type Decision,
  type DomainContext,
  isActiveRun,
  newTask,
  type ProjectControl,
  type ProjectState,
  type Run,
  type Task,
} from "../../src/index.ts";

export const PROJECT_ID = "demo";
export const START_MS = Date.UTC(2025, 0, 1);

/** Project defaults used by the tests: active, concurrency 1, unbounded sessions, every stage. */
export function project(fields: Partial<ProjectControl> = {}): ProjectControl {
  return {
    id: PROJECT_ID,
    status: "active",
    statusReason: null,
    continuous: false,
    concurrency: 1,
    sessionsLimit: null,
    sessionsUsed: 0,
    stage: null,
    mission: null,
    version: 0,
    ...fields,
  };
}

/** A work task with `newTask` defaults; the title is the id unless given. */
export function task(id: string, fields: Partial<Omit<Task, "projectId" | "id">> = {}): Task {
  return newTask({ projectId: PROJECT_ID, id, title: fields.title ?? `Task ${id}`, ...fields });
}

export interface StateInput {
  project?: Partial<ProjectControl>;
  tasks?: readonly Task[];
  runs?: readonly Run[];
  decisions?: readonly Decision[];
}

export function buildState(input: StateInput = {}): ProjectState {
  return {
    project: project(input.project),
    tasks: new Map((input.tasks ?? []).map((t) => [t.id, t])),
    runs: new Map((input.runs ?? []).map((r) => [r.id, r])),
    decisions: new Map((input.decisions ?? []).map((d) => [d.id, d])),
  };
}

export interface TestContext extends DomainContext {
  /** Moves the clock forward. */
  advance(ms: number): void;
  /** Sets the clock. */
  setNow(ms: number): void;
  /** How many hex strings / run ids were handed out. */
  readonly minted: { hex: number; runIds: number };
}

export interface ContextOptions {
  now?: number;
  /**
   * Hand out each hex value this many times in a row (default 1). Values > 1 make the state
   * machine meet already-taken agent ids, so the "fresh agent id" loop is exercised.
   */
  hexRepeat?: number;
}

/** Counter-based, replayable context: hex `000000000001`, `000000000002`…; run ids `run-1`, `run-2`… */
export function testContext(options: ContextOptions = {}): TestContext {
  let now = options.now ?? START_MS;
  const repeat = Math.max(1, options.hexRepeat ?? 1);
  const minted = { hex: 0, runIds: 0 };
  return {
    get now() {
      return now;
    },
    randomHex: () => {
      const value = Math.floor(minted.hex / repeat) + 1;
      minted.hex++;
      return value.toString(16).padStart(12, "0");
    },
    newRunId: () => `run-${++minted.runIds}`,
    advance: (ms) => {
      now += ms;
    },
    setNow: (ms) => {
      now = ms;
    },
    minted,
  };
}

/** One command against `state`; returns the next state so steps chain. */
export function apply(state: ProjectState, command: Command, ctx: DomainContext): ProjectState {
  return applyCommand(state, command, ctx).state;
}

export interface Driver {
  readonly ctx: TestContext;
  /** Next state after `command`. */
  apply(state: ProjectState, command: Command): ProjectState;
  /** Full result of `command`. */
  step(state: ProjectState, command: Command): ApplyResult;
}

/** `apply`/`step` bound to one deterministic context. */
export function createDriver(options: ContextOptions = {}): Driver {
  const ctx = testContext(options);
  return {
    ctx,
    apply: (state, command) => applyCommand(state, command, ctx).state,
    step: (state, command) => applyCommand(state, command, ctx),
  };
}

// ---------------------------------------------------------------------------------------
// Queries

export function getTask(state: ProjectState, id: string): Task {
  const t = state.tasks.get(id);
  if (!t) throw new Error(`test: no task ${id} in state (have ${[...state.tasks.keys()].join(", ")})`);
  return t;
}

export function activeRuns(state: ProjectState): Run[] {
  return [...state.runs.values()].filter(isActiveRun);
}

/** The single active run of a task; throws if there is none or several. */
export function activeRunOf(state: ProjectState, taskId: string): Run {
  const runs = activeRuns(state).filter((r) => r.taskId === taskId);
  if (runs.length !== 1) throw new Error(`test: expected one active run for ${taskId}, found ${runs.length}`);
  return runs[0] as Run;
}

export function runsOf(state: ProjectState, taskId: string): Run[] {
  return [...state.runs.values()].filter((r) => r.taskId === taskId);
}

export function resolversOf(state: ProjectState, parentId: string): Task[] {
  return [...state.tasks.values()].filter((t) => t.kind === "resolver" && t.parentId === parentId);
}

export function decisionOf(state: ProjectState, taskId: string): Decision | undefined {
  return state.decisions.get(`decision-${taskId}`);
}

// ---------------------------------------------------------------------------------------
// Common flows (each asserts the task it drives is the one that got the run)

/** Claims and returns the run queued for `taskId` by that claim. */
export function claimFor(d: Driver, state: ProjectState, taskId: string): { state: ProjectState; run: Run } {
  const next = d.apply(state, { kind: "claim" });
  return { state: next, run: activeRunOf(next, taskId) };
}

/** claim → submit: `taskId` ends in review. Returns the executor run. */
export function toReview(d: Driver, state: ProjectState, taskId: string): { state: ProjectState; run: Run } {
  const claimed = claimFor(d, state, taskId);
  const next = d.apply(claimed.state, {
    kind: "submit",
    runId: claimed.run.id,
    message: `work on ${taskId}`,
    commitSha: "c0ffee",
    branchHead: "c0ffee",
  });
  return { state: next, run: claimed.run };
}

/** claim → submit → claim → approve: `taskId` ends done. */
export function toDone(d: Driver, state: ProjectState, taskId: string): ProjectState {
  const reviewed = toReview(d, state, taskId);
  const review = claimFor(d, reviewed.state, taskId);
  return d.apply(review.state, {
    kind: "approve",
    runId: review.run.id,
    landedSha: "abc",
    landedBranch: "main",
  });
}

/** claim → escalate: `taskId` ends blocked; returns the resolver id and the escalating run. */
export function toBlocked(
  d: Driver,
  state: ProjectState,
  taskId: string,
  escalate: Partial<Extract<Command, { kind: "escalate" }>> = {},
): { state: ProjectState; run: Run; resolverId: string } {
  const claimed = claimFor(d, state, taskId);
  const next = d.apply(claimed.state, {
    kind: "escalate",
    runId: claimed.run.id,
    reason: "blocked by X",
    ...escalate,
  });
  const blocked = getTask(next, taskId);
  if (blocked.status !== "blocked" || blocked.blockedBy === null) {
    throw new Error(`test: expected ${taskId} blocked, it is ${blocked.status}`);
  }
  return { state: next, run: claimed.run, resolverId: blocked.blockedBy };
}
