/**
 * Random projects (a DAG of tasks with random priorities and stages) and random steps for the
 * property test, and the command each step picks in the current state.
 */
import fc from "fast-check";
import {
  MAX_REMEDIATIONS_PER_ROOT,
  type PlanApproval,
  type ProjectState,
  type Task,
} from "../../../src/index.ts";
import { buildState, task } from "../state-builder.ts";
import { invalidCommands, operatorEnds, operatorReleases } from "./operator-candidates.ts";
import { pullRequestReports, pullRequestSpecArb } from "./pull-request-candidates.ts";
import { type Candidate, lateOutcomes, runOutcomes } from "./run-outcome-candidates.ts";

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

export const projectArb = fc
  .record({
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
    /** `landing.mode: pull_request` with its settings, or null (push mode). */
    pullRequests: pullRequestSpecArb,
    /**
     * A pull-request project is mostly one without a mission: a mission's planning tasks never
     * open pull requests and its work arrives late, so the loop's corners would be rare.
     */
    prWithMission: fc.integer({ min: 0, max: 3 }).map((n) => n === 0),
  })
  .map((spec) => (spec.pullRequests !== null && !spec.prWithMission ? { ...spec, mission: null } : spec));
export type ProjectSpec = typeof projectArb extends fc.Arbitrary<infer T> ? T : never;

/** Each step: which group of commands, which one inside it, and how far the clock moves. */
export const stepArb = fc.record({
  group: fc.integer({ min: 0, max: 99 }),
  pick: fc.nat(),
  advance: fc.constantFrom(0, 0, 50, 400),
});
export type StepSpec = typeof stepArb extends fc.Arbitrary<infer T> ? T : never;

/** Ids sort naturally (S00-2 < S00-10); prerequisites only point to earlier tasks: a DAG. */
export function buildProject(spec: ProjectSpec): ProjectState {
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

export function chooseCommand(
  state: ProjectState,
  step: StepSpec,
  spec: ProjectSpec,
): Candidate & { late: boolean } {
  const pr = spec.pullRequests;
  const claim: Candidate[] = [
    { command: pr ? { kind: "claim", prerequisites: pr.prerequisites } : { kind: "claim" }, expect: "ok" },
  ];
  // A pull-request project's forge reports take a band from the claims (an empty list falls
  // back to a claim anyway), never from the operator's releases, so mission corners keep theirs.
  const claimsUntil = pr ? 22 : 25;
  const outcomesUntil = pr ? 62 : 65;
  const groups: { until: number; list: () => Candidate[]; late?: boolean }[] = [
    { until: claimsUntil, list: () => claim },
    {
      until: outcomesUntil,
      list: () => runOutcomes(state, spec.maxAttempts, spec.escalating, spec.planApproval, pr?.prerequisites),
    },
    { until: 73, list: () => (pr ? pullRequestReports(state, pr, spec.maxAttempts) : claim) },
    { until: 85, list: () => operatorReleases(state) },
    { until: 88, list: () => operatorEnds(state) },
    { until: 95, list: () => invalidCommands(state) },
    { until: 100, list: () => lateOutcomes(state, spec.maxAttempts), late: true },
  ];
  const group = groups.find((g) => step.group < g.until) ?? groups[0];
  const list = group?.list() ?? [];
  if (list.length === 0) return { ...(claim[0] as Candidate), late: false };
  const picked = list[step.pick % list.length] as Candidate;
  return { ...picked, late: group?.late ?? false };
}
