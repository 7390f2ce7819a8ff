/**
 * A transition's task and run updates ride on its events' statement (riding-writes.ts): what
 * they write lands with the events, and a guarded update that changed no row (a task no longer
 * at the version read, a run no longer active) throws its conflict after the statement, and
 * the transaction leaves nothing of it: no event, no other update. A transition that updates the
 * project row (a claim counts a session) carries them on that update instead.
 */
import { taskCard } from "@overseer/test-support";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  applyTransition,
  ConflictError,
  createProject,
  createScratchDatabase,
  getTask,
  listEvents,
  loadProjectState,
  type ScratchDatabase,
} from "../src/index.ts";
import { RidingWrites } from "../src/riding-writes.ts";
import { insertEvents } from "../src/transition-events.ts";
import { updateProjectRow } from "../src/transition-row-writes.ts";

let scratch: ScratchDatabase;
beforeAll(async () => {
  scratch = await createScratchDatabase();
  await createProject(scratch.db, { id: "ride", repo: "/tmp/none", runnerConfig: {} });
  await applyTransition(scratch.db, "ride", {
    kind: "import-tasks",
    tasks: [taskCard("S00-001"), taskCard("S00-002")],
    by: "test",
  });
});
afterAll(async () => {
  await scratch?.drop();
});

const event = (taskId: string) => ({
  type: "task.answered" as const,
  taskId,
  runId: null,
  data: { by: "test" },
});

/** A guarded title change of a task at `version`. */
function retitle(writes: RidingWrites, taskId: string, version: number, title: string): void {
  const update = scratch.db
    .updateTable("tasks")
    .set({ title, version: version + 1 })
    .where("project_id", "=", "ride")
    .where("id", "=", taskId)
    .where("version", "=", version)
    .returning("id");
  writes.guard(`task_${writes.size}`, update, () => new ConflictError(`Task ${taskId} moved on`));
}

describe("writes riding on the events' statement", () => {
  it("land with the events, in that one statement", async () => {
    const [one, two] = [
      await getTask(scratch.db, "ride", "S00-001"),
      await getTask(scratch.db, "ride", "S00-002"),
    ];
    const rows = await scratch.db.transaction().execute(async (trx) => {
      const writes = new RidingWrites();
      retitle(writes, "S00-001", one!.version, "first, renamed");
      retitle(writes, "S00-002", two!.version, "second, renamed");
      return insertEvents(trx, "ride", [event("S00-001"), event("S00-002")], "ride", new Map(), writes);
    });
    expect(rows.map((r) => [r.task_id, r.type])).toEqual([
      ["S00-001", "task.answered"],
      ["S00-002", "task.answered"],
    ]);
    for (const row of rows) expect(Object.keys(row)).not.toContain("guard_counts");
    expect(await getTask(scratch.db, "ride", "S00-001")).toMatchObject({ title: "first, renamed" });
    expect(await getTask(scratch.db, "ride", "S00-002")).toMatchObject({ title: "second, renamed" });
  });

  it("a guard that changed no row throws its conflict, and nothing of the statement is kept", async () => {
    const one = (await getTask(scratch.db, "ride", "S00-001"))!;
    const events = (await listEvents(scratch.db, { projectId: "ride" })).length;
    const attempt = scratch.db.transaction().execute(async (trx) => {
      const writes = new RidingWrites();
      retitle(writes, "S00-001", one.version, "kept only if both apply");
      retitle(writes, "S00-002", 999, "a stale version");
      return insertEvents(trx, "ride", [event("S00-001")], "ride", new Map(), writes);
    });
    await expect(attempt).rejects.toThrow(new ConflictError("Task S00-002 moved on"));
    expect(await getTask(scratch.db, "ride", "S00-001")).toMatchObject({
      title: one.title,
      version: one.version,
    });
    expect(await listEvents(scratch.db, { projectId: "ride" })).toHaveLength(events);
  });

  it("with no event to insert, the writes are a statement of their own, guarded the same", async () => {
    const two = (await getTask(scratch.db, "ride", "S00-002"))!;
    const stale = scratch.db.transaction().execute(async (trx) => {
      const writes = new RidingWrites();
      retitle(writes, "S00-002", two.version - 1, "a stale version");
      return insertEvents(trx, "ride", [], "ride", new Map(), writes);
    });
    await expect(stale).rejects.toBeInstanceOf(ConflictError);
    await scratch.db.transaction().execute(async (trx) => {
      const writes = new RidingWrites();
      retitle(writes, "S00-002", two.version, "no event");
      expect(await insertEvents(trx, "ride", [], "ride", new Map(), writes)).toEqual([]);
    });
    expect(await getTask(scratch.db, "ride", "S00-002")).toMatchObject({ title: "no event" });
  });

  it("ride on the project row's update when there is one, guarded the same, and are settled by it", async () => {
    const one = (await getTask(scratch.db, "ride", "S00-001"))!;
    const project = async () =>
      scratch.db.selectFrom("projects").selectAll().where("id", "=", "ride").executeTakeFirstOrThrow();
    const before = await project();
    const read = (await loadProjectState(scratch.db, "ride")).project;
    const control = { ...read, sessionsUsed: read.sessionsUsed + 1 };
    const stale = scratch.db.transaction().execute(async (trx) => {
      const writes = new RidingWrites();
      retitle(writes, "S00-001", one.version - 1, "a stale version");
      return updateProjectRow(trx, "ride", control, null, new Date(), writes);
    });
    await expect(stale).rejects.toBeInstanceOf(ConflictError);
    expect((await project()).version).toBe(before.version);
    const row = await scratch.db.transaction().execute(async (trx) => {
      const writes = new RidingWrites();
      retitle(writes, "S00-001", one.version, "with the project row");
      const updated = await updateProjectRow(trx, "ride", control, null, new Date(), writes);
      // Settled: nothing is left to ride on (or be written again by) the events' statement.
      expect(writes.size).toBe(0);
      return updated;
    });
    expect(row).toMatchObject({ version: before.version + 1, sessions_used: before.sessions_used + 1 });
    expect(Object.keys(row)).not.toContain("guard_counts");
    expect(await getTask(scratch.db, "ride", "S00-001")).toMatchObject({ title: "with the project row" });
  });
});
