import type { MissionBound, MissionSummaryInput } from "@overseer/domain";
import { sql } from "kysely";
import type { Db } from "./connection.ts";
import type { ProjectRow } from "./database-schema.ts";

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

/** Newest submits with a summary searched for one of a done (approved) task. */
const RECENT_SUMMARIES = 50;
/** Events read back from the newest when looking for the bound that paused a mission. */
const RECENT_EVENTS_FOR_BOUND = 200;

interface MissionSummaryRow {
  counts: Record<string, number>;
  last_approved: { task_id: string; title: string; summary: string; at: string } | null;
  last_bound: { bound: MissionBound; reason: string; at: string } | null;
}

/**
 * What `summarizeMission` (packages/domain) needs beyond the project row, in one statement:
 * task counts (unless the caller has them), the last approved task with a summary (the newest
 * of the last 50 summarised submits whose task is done), and the
 * latest `mission.bound_reached` among the project's recent events (a bound pause is the last
 * thing a paused mission records; only a paused project is looked at). Null without a mission.
 */
export async function loadMissionSummaryInput(
  db: Db,
  project: ProjectRow,
  counts?: Record<string, number>,
): Promise<MissionSummaryInput | null> {
  const mission = project.mission;
  if (!mission) return null;
  const result = await sql<MissionSummaryRow>`
    SELECT
      ${
        counts
          ? sql`NULL::jsonb`
          : sql`COALESCE((
        SELECT jsonb_object_agg(s.status, s.n)
        FROM (SELECT status, count(*)::int AS n FROM tasks WHERE project_id = ${project.id} GROUP BY status) s
      ), '{}'::jsonb)`
      } AS counts,
      ${
        mission.evidence !== null
          ? sql`NULL::jsonb`
          : sql`(
        SELECT jsonb_build_object('task_id', t.id, 'title', t.title, 'summary', e.data->>'summary', 'at', e.created_at)
        FROM (
          SELECT id, task_id, data, created_at FROM events
          WHERE project_id = ${project.id} AND type = 'task.submitted'
            AND COALESCE(btrim(data->>'summary'), '') <> ''
          ORDER BY id DESC LIMIT ${RECENT_SUMMARIES}
        ) e
        JOIN tasks t ON t.project_id = ${project.id} AND t.id = e.task_id AND t.status = 'done'
        ORDER BY e.id DESC LIMIT 1
      )`
      } AS last_approved,
      ${
        project.status !== "paused"
          ? sql`NULL::jsonb`
          : sql`(
        SELECT jsonb_build_object('bound', r.data->>'bound', 'reason', r.data->>'reason', 'at', r.created_at)
        FROM (
          SELECT type, data, created_at, id FROM events WHERE project_id = ${project.id}
          ORDER BY id DESC LIMIT ${RECENT_EVENTS_FOR_BOUND}
        ) r
        WHERE r.type = 'mission.bound_reached'
        ORDER BY r.id DESC LIMIT 1
      )`
      } AS last_bound`.execute(db);
  const row = result.rows[0] as MissionSummaryRow;
  return {
    mission,
    projectStatus: project.status,
    statusReason: project.status_reason,
    counts: counts ?? row.counts,
    spend: {
      costUsd: Number(project.cost_usd),
      tokensUnpriced: Number(project.tokens_unpriced),
      budgetUsd: project.budget_usd === null ? null : Number(project.budget_usd),
      tokensIn: Number(project.tokens_in),
      tokensCached: Number(project.tokens_cached),
      tokensOut: Number(project.tokens_out),
      sessionsUsed: project.sessions_used,
      sessionsLimit: project.sessions_limit,
    },
    lastApproved: row.last_approved
      ? {
          taskId: row.last_approved.task_id,
          title: row.last_approved.title,
          summary: row.last_approved.summary,
          at: Date.parse(row.last_approved.at),
        }
      : null,
    lastBound: row.last_bound
      ? { bound: row.last_bound.bound, reason: row.last_bound.reason, at: Date.parse(row.last_bound.at) }
      : null,
  };
}
