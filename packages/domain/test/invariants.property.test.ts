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
 *   (h) applying a run outcome or a forge report (pr-*) again is a no-op (`already_applied`,
 *       same state, no events)
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
 *   (n)–(s) pull requests (projects in landing.mode pull_request): pr_open only with an open
 *       pull request, entered by a fresh reviewer's approve; a merged pull request's task is
 *       done and its record final; stale heads change nothing; red checks and reviews with work
 *       send every failing check and thread back; stacked claims build on at most one open
 *       pull request; a pull request stacked on a cancelled task's closed one waits on a card
 *       (support/property/pull-request-invariants.ts; that corner is rare in random
 *       sequences, so rule 20's paths are pinned by its rule tests)
 * plus consistency checks that keep the machine live: an in_progress task has an active run,
 * awaiting_input ⇔ a pending card, blockedBy is set exactly while blocked and names an open
 * resolver. Anything thrown other than a DomainError fails the property.
 *
 * The generators are in support/property/ (project-arbitrary.ts, *-candidates.ts), the
 * checks in support/property/*-invariants.ts: one module per family of commands, as the
 * handlers in src/transitions/.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type ApplyResult,
  applyCommand,
  type Command,
  isDomainError,
  type ProjectState,
  PULL_REQUEST_COMMAND_KINDS,
  RUN_OUTCOME_KINDS,
} from "../src/index.ts";
import { checkStep } from "./support/property/check-step.ts";
import { ensure, type History, type Stats } from "./support/property/invariant-support.ts";
import {
  buildProject,
  chooseCommand,
  type ProjectSpec,
  projectArb,
  type StepSpec,
  stepArb,
} from "./support/property/project-arbitrary.ts";
import { testContext } from "./support/state-builder.ts";

// ---------------------------------------------------------------------------------------
// Purity

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

/** Commands whose redelivery must be a no-op: run outcomes and the forge runner's reports. */
const REDELIVERABLE = new Set<Command["kind"]>([...RUN_OUTCOME_KINDS, ...PULL_REQUEST_COMMAND_KINDS]);

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

    // (h) redelivery of the same run outcome or forge report is a no-op.
    if (REDELIVERABLE.has(command.kind) && result.outcome === "applied") {
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
      prOpened: 0,
      prMerged: 0,
      prCiLimit: 0,
      prReviewWork: 0,
      prStale: 0,
      prOrphaned: 0,
    };
    fc.assert(
      fc.property(
        projectArb,
        fc.array(stepArb, { minLength: 10, maxLength: 80, size: "max" }),
        (spec, steps) => {
          runSequence(spec, steps, stats);
        },
      ),
      // A fixed seed: the corner counts below are then a fact of this suite, not a draw. Other
      // seeds reach every corner too (the rarest, a plan imported by the operator, the CI limit
      // and a merge, at least twice in 400 sequences for seeds 1–11 and 20261203), so
      // OVERSEER_PROPERTY_SEED explores other sequences; a failure prints its seed and path for
      // fast-check to replay.
      { numRuns: 400, seed: Number(process.env.OVERSEER_PROPERTY_SEED ?? 3) },
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
    expect(stats.prOpened).toBeGreaterThan(0);
    expect(stats.prMerged).toBeGreaterThan(0);
    expect(stats.prCiLimit).toBeGreaterThan(0);
    expect(stats.prReviewWork).toBeGreaterThan(0);
    expect(stats.prStale).toBeGreaterThan(0);
  });
});
