/**
 * Test helpers for missions on the pure state machine: plan cards, the `start-mission` command,
 * and the planner's and reviewer's steps of a planning round.
 */
import type { ApplyResult, Command, PlanCard, ProjectState } from "../../src/index.ts";
import { buildState, claimFor, type Driver, type StateInput } from "./state-builder.ts";

type StartMission = Extract<Command, { kind: "start-mission" }>;
type Proposal = Extract<Command, { kind: "propose" }>["proposal"];

/** A planned card in stage S01 with `src/**` scope; `fields` override any of it. */
export function planCard(
  id: string,
  prerequisites: readonly string[] = [],
  fields: Partial<PlanCard> = {},
): PlanCard {
  return {
    id,
    stage: "S01",
    title: `Planned ${id}`,
    body: `Do ${id}`,
    role: "backend",
    scope: ["src/**"],
    prerequisites,
    acceptance: [],
    priority: 0,
    ...fields,
  };
}

/** `start-mission` by the operator: objective "Ship the parser", stage S01, three rounds, no session limit. */
export function startMission(fields: Partial<StartMission> = {}): Command {
  return {
    kind: "start-mission",
    objective: "Ship the parser",
    stage: "S01",
    sessionsLimit: null,
    maxRounds: 3,
    by: "operator",
    ...fields,
  };
}

/** A paused project (with `input`) on which the operator started a mission (`fields`). */
export function startedMission(
  d: Driver,
  fields: Partial<StartMission> = {},
  input: StateInput = {},
): ProjectState {
  return d.apply(buildState({ project: { status: "paused" }, ...input }), startMission(fields));
}

/** Claims `taskId` (a planning task) and proposes `proposal` from that run. */
export function propose(d: Driver, s: ProjectState, taskId: string, proposal: Proposal): ApplyResult {
  const claimed = claimFor(d, s, taskId);
  return d.step(claimed.state, {
    kind: "propose",
    runId: claimed.run.id,
    proposal,
    commitSha: null,
    branchHead: null,
    maxAttempts: 3,
  });
}

/** A fresh reviewer claims `taskId` and approves (landing nothing) or rejects it as too vague. */
export function review(
  d: Driver,
  s: ProjectState,
  taskId: string,
  verdict: "approve" | "reject" = "approve",
): ApplyResult {
  const claimed = claimFor(d, s, taskId);
  const command: Command =
    verdict === "approve"
      ? { kind: "approve", runId: claimed.run.id, landedSha: null, landedBranch: null }
      : { kind: "reject", runId: claimed.run.id, feedback: "too vague" };
  return d.step(claimed.state, command);
}
