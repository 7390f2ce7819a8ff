import type { Db } from "./connection.ts";

/** What a mission's planner reads besides the task list: the evidence so far and the open incidents. */
export interface MissionEvidence {
  /** Done work tasks, in the order they finished, with the executor's last submit summary. */
  doneTasks: { id: string; title: string; summary: string | null }[];
  cancelledTasks: { id: string; title: string; reason: string | null }[];
  /** Incidents recorded against a task that is not done or cancelled yet. */
  openIncidents: { taskId: string | null; kind: string; message: string }[];
}

/** Bounds on what one planner prompt lists (the prompt is bounded by max_prompt_chars too). */
export const MISSION_EVIDENCE_LIMITS = Object.freeze({ tasks: 200, incidents: 50 });

export async function loadMissionEvidence(db: Db, projectId: string): Promise<MissionEvidence> {
  const [done, cancelled, incidents] = await Promise.all([
    db
      .selectFrom("tasks")
      .select(["id", "title", "updated_at"])
      .select((eb) =>
        eb
          .selectFrom("events")
          .select((e) => e.ref("data", "->>").key("summary").as("summary"))
          .whereRef("events.project_id", "=", "tasks.project_id")
          .whereRef("events.task_id", "=", "tasks.id")
          .where("events.type", "=", "task.submitted")
          .orderBy("events.id", "desc")
          .limit(1)
          .as("summary"),
      )
      .where("project_id", "=", projectId)
      .where("status", "=", "done")
      .where("kind", "!=", "plan")
      .orderBy("updated_at", "desc")
      .limit(MISSION_EVIDENCE_LIMITS.tasks)
      .execute(),
    db
      .selectFrom("tasks")
      .select(["id", "title", "status_reason"])
      .where("project_id", "=", projectId)
      .where("status", "=", "cancelled")
      .where("kind", "=", "work")
      .orderBy("updated_at", "desc")
      .limit(MISSION_EVIDENCE_LIMITS.tasks)
      .execute(),
    db
      .selectFrom("incidents")
      .leftJoin("tasks", (join) =>
        join
          .onRef("tasks.project_id", "=", "incidents.project_id")
          .onRef("tasks.id", "=", "incidents.task_id"),
      )
      .select(["incidents.task_id", "incidents.kind", "incidents.message"])
      .where("incidents.project_id", "=", projectId)
      .where((eb) =>
        eb.or([eb("tasks.status", "is", null), eb("tasks.status", "not in", ["done", "cancelled"])]),
      )
      .orderBy("incidents.id", "desc")
      .limit(MISSION_EVIDENCE_LIMITS.incidents)
      .execute(),
  ]);
  return {
    doneTasks: done
      .reverse()
      .map((t) => ({ id: t.id, title: t.title, summary: (t.summary as string | null) ?? null })),
    cancelledTasks: cancelled.reverse().map((t) => ({ id: t.id, title: t.title, reason: t.status_reason })),
    openIncidents: incidents.reverse().map((i) => ({ taskId: i.task_id, kind: i.kind, message: i.message })),
  };
}
