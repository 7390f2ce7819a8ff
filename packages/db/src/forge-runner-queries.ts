/**
 * What the coordinator's forge runner reads besides the pull request record: the runs of a task
 * (its pull request body names them, with the approved submit's summary and the reviewer's
 * verdict) and one stored webhook delivery.
 */
import type { Db } from "./connection.ts";
import type { ForgeDeliveryRow } from "./database-schema.ts";

export interface TaskRunLine {
  readonly id: string;
  readonly action: string;
  readonly agentId: string;
  readonly status: string;
  /** The run's transition kind as recorded (submit, approve, reject…), or null. */
  readonly transition: string | null;
  /**
   * What the run said with it, from its event: a submit's `message` and `summary`
   * (`task.submitted`), an approve's `feedback` in pull_request mode (`task.pr_requested`);
   * null for other runs.
   */
  readonly said: Record<string, unknown> | null;
  readonly createdAt: Date;
}

/** The events that carry a run's words with its transition (one per run at most). */
const SAID_EVENTS = ["task.submitted", "task.pr_requested"] as const;

/** The task's runs, oldest first (at most `limit`, the newest kept). */
export async function taskRunLines(
  db: Db,
  projectId: string,
  taskId: string,
  limit = 50,
): Promise<TaskRunLine[]> {
  const rows = await db
    .selectFrom("runs")
    .leftJoin("events", (join) =>
      join
        .onRef("events.run_id", "=", "runs.id")
        .on("events.project_id", "=", projectId)
        .on("events.type", "in", [...SAID_EVENTS]),
    )
    .select([
      "runs.id",
      "runs.action",
      "runs.agent_id",
      "runs.status",
      "runs.transition",
      "runs.created_at",
      "events.data",
    ])
    .where("runs.project_id", "=", projectId)
    .where("runs.task_id", "=", taskId)
    .orderBy("runs.created_at", "desc")
    .limit(limit)
    .execute();
  return rows.reverse().map((r) => ({
    id: r.id,
    action: r.action,
    agentId: r.agent_id,
    status: r.status,
    transition: r.transition,
    said: asRecord(r.data),
    createdAt: r.created_at,
  }));
}

function asRecord(value: unknown): Record<string, unknown> | null {
  if (value === null || value === undefined) return null;
  if (typeof value === "object") return value as Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(String(value));
    return typeof parsed === "object" && parsed !== null ? (parsed as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** One stored webhook delivery, if it exists. */
export function getForgeDelivery(
  db: Db,
  forge: ForgeDeliveryRow["forge"],
  deliveryId: string,
): Promise<ForgeDeliveryRow | undefined> {
  return db
    .selectFrom("forge_webhook_deliveries")
    .selectAll()
    .where("forge", "=", forge)
    .where("delivery_id", "=", deliveryId)
    .executeTakeFirst();
}
