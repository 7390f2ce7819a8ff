/**
 * loadProjectState reads a project's whole state in one statement, each part as JSON. It must
 * read exactly what the driver's own rows give through the row mappers: every column type
 * (timestamps to the millisecond, arrays, jsonb, nulls), named ended runs and resolved cards.
 */
import type { ProjectState } from "@overseer/domain";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  applyTransition,
  createProject,
  createScratchDatabase,
  type Db,
  loadProjectState,
  type ScratchDatabase,
  sql,
} from "../src/index.ts";
import { pullRequestFromRow } from "../src/pull-request-repository.ts";
import { decisionFromRow, projectControlFromRow, runFromRow, taskFromRow } from "../src/row-mappers.ts";

let scratch: ScratchDatabase;

beforeAll(async () => {
  scratch = await createScratchDatabase();
});
afterAll(async () => {
  await scratch?.drop();
});

/** The same state read row by row through the driver: the reading the one statement replaces. */
async function loadRowByRow(db: Db, projectId: string, runIds: string[], decisionIds: string[]) {
  const project = await db
    .selectFrom("projects")
    .selectAll()
    .where("id", "=", projectId)
    .executeTakeFirstOrThrow();
  const tasks = await db.selectFrom("tasks").selectAll().where("project_id", "=", projectId).execute();
  const deps = await db
    .selectFrom("task_dependencies")
    .selectAll()
    .where("project_id", "=", projectId)
    .execute();
  const prs = await db.selectFrom("pull_requests").selectAll().where("project_id", "=", projectId).execute();
  const runs = await db
    .selectFrom("runs")
    .selectAll()
    .where("project_id", "=", projectId)
    .where((eb) => eb.or([eb("status", "in", ["queued", "running"]), eb("id", "in", [...runIds, ""])]))
    .execute();
  const decisions = await db
    .selectFrom("decisions")
    .selectAll()
    .where("project_id", "=", projectId)
    .where((eb) => eb.or([eb("status", "=", "pending"), eb("id", "in", [...decisionIds, ""])]))
    .execute();
  const state: ProjectState = {
    project: projectControlFromRow(project),
    tasks: new Map(
      tasks.map((t) => {
        const pr = prs.find((p) => p.task_id === t.id);
        const prerequisites = deps.filter((d) => d.task_id === t.id).map((d) => d.depends_on);
        return [t.id, taskFromRow(t, prerequisites, pr ? pullRequestFromRow(pr) : null)];
      }),
    ),
    runs: new Map(runs.map((r) => [r.id, runFromRow(r)])),
    decisions: new Map(decisions.map((d) => [d.id, decisionFromRow(d)])),
  };
  return state;
}

const card = (id: string, prerequisites: string[] = []) => ({
  id,
  stage: "S01",
  title: `Task ${id}`,
  body: "",
  role: "backend",
  scope: ["src/**"],
  prerequisites,
  acceptance: ["tested"],
  priority: 0,
});

describe("loadProjectState", () => {
  it("reads in one statement what the row mappers read from the driver's rows", async () => {
    const id = "state-1";
    await createProject(scratch.db, { id, repo: "/tmp/none", runnerConfig: {} });
    await applyTransition(scratch.db, id, {
      kind: "start-mission",
      objective: "Compare two readings",
      stage: "S01",
      sessionsLimit: 10,
      maxRounds: 3,
      by: "operator",
    });
    const plan = (await applyTransition(scratch.db, id, { kind: "claim" })).changes.runs[0]!;
    await applyTransition(scratch.db, id, {
      kind: "propose",
      runId: plan.id,
      proposal: { kind: "plan", tasks: [card("S01-1"), card("S01-2", ["S01-1"])] },
      commitSha: null,
      branchHead: null,
      maxAttempts: 3,
    });
    const review = (await applyTransition(scratch.db, id, { kind: "claim" })).changes.runs[0]!;
    await applyTransition(scratch.db, id, {
      kind: "approve",
      runId: review.id,
      landedSha: null,
      landedBranch: null,
      planApproval: "operator",
    });
    await applyTransition(scratch.db, id, {
      kind: "resolve-decision",
      decisionId: "decision-MISSION-R1",
      optionId: "approve_plan",
      note: "go",
      by: "operator",
      resolutionId: "res-1",
    });
    const work = (await applyTransition(scratch.db, id, { kind: "claim" })).changes.runs[0]!;
    await applyTransition(scratch.db, id, { kind: "run-started", runId: work.id, workerId: "w1" });
    // A retry timer's not_before on the task, with sub-millisecond precision in Postgres.
    await sql`UPDATE tasks SET not_before = now() + interval '1.2345 s' WHERE project_id = ${id} AND id = 'S01-2'`.execute(
      scratch.db,
    );

    for (const [runIds, decisionIds] of [
      [[], []],
      [[plan.id, review.id], ["decision-MISSION-R1"]],
    ] as const) {
      const options = { runIds: [...runIds], decisionIds: [...decisionIds] };
      const reference = await loadRowByRow(scratch.db, id, options.runIds, options.decisionIds);
      const loaded = await loadProjectState(scratch.db, id, options);
      expect(loaded).toEqual(reference);
      expect(loaded.runs.size).toBe(1 + runIds.length);
    }
    const withRun = await loadProjectState(scratch.db, id, { runIds: [review.id] });
    // A named run brings its task's card, resolved or not.
    expect(withRun.decisions.get("decision-MISSION-R1")).toMatchObject({ status: "resolved", note: "go" });
    expect(withRun.tasks.get("S01-2")?.prerequisites).toEqual(["S01-1"]);
  });

  it("throws NotFoundError for a project that does not exist", async () => {
    await expect(loadProjectState(scratch.db, "nobody")).rejects.toThrow("Project nobody does not exist.");
  });
});
