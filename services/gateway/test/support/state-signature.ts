import { sql } from "@overseer/db";
import type { GatewayFixture } from "./gateway-fixture.ts";

/** Row counts of every table and the last event id: equal before and after means nothing changed. */
export async function stateSignature(
  fixture: Pick<GatewayFixture, "scratch">,
): Promise<Record<string, unknown>> {
  const db = fixture.scratch.db;
  const count = async (
    table: "projects" | "tasks" | "runs" | "events" | "decisions" | "incidents" | "api_tokens",
  ) =>
    Number(
      (
        await db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<string>().as("n"))
          .executeTakeFirstOrThrow()
      ).n,
    );
  const tables = ["projects", "tasks", "runs", "events", "decisions", "incidents", "api_tokens"] as const;
  const out: Record<string, unknown> = {};
  for (const t of tables) out[t] = await count(t);
  out.task_versions = (
    await db
      .selectFrom("tasks")
      .select(["project_id", "id", "version", "status"])
      .orderBy("project_id")
      .orderBy("id")
      .execute()
  ).map((r) => `${r.project_id}/${r.id}@${r.version}:${r.status}`);
  out.decision_states = (
    await db.selectFrom("decisions").select(["id", "status", "selected_option"]).orderBy("id").execute()
  ).map((r) => `${r.id}:${r.status}:${r.selected_option}`);
  out.project_states = (
    await db.selectFrom("projects").select(["id", "status", "version"]).orderBy("id").execute()
  ).map((r) => `${r.id}:${r.status}@${r.version}`);
  out.revoked = (
    await db.selectFrom("api_tokens").select("id").where("revoked_at", "is not", null).execute()
  ).length;
  return out;
}

/**
 * What `stateSignature` compares (row counts of every table, task, decision, project and run
 * versions and states, revoked tokens), read in one query so that hundreds of requests stay
 * fast: equal digests before and after mean nothing changed.
 */
export async function stateDigest(fixture: Pick<GatewayFixture, "scratch">): Promise<unknown> {
  const { rows } = await sql<Record<string, unknown>>`
    SELECT
      (SELECT count(*) FROM projects) AS projects,
      (SELECT count(*) FROM tasks) AS tasks,
      (SELECT count(*) FROM task_dependencies) AS task_dependencies,
      (SELECT count(*) FROM runs) AS runs,
      (SELECT count(*) FROM events) AS events,
      (SELECT max(id) FROM events) AS last_event,
      (SELECT count(*) FROM decisions) AS decisions,
      (SELECT count(*) FROM incidents) AS incidents,
      (SELECT count(*) FROM api_tokens) AS api_tokens,
      (SELECT count(*) FROM api_tokens WHERE revoked_at IS NOT NULL) AS revoked,
      (SELECT md5(string_agg(project_id || '/' || id || '@' || version || ':' || status, ',' ORDER BY project_id, id)) FROM tasks) AS task_versions,
      (SELECT md5(string_agg(id || ':' || status || ':' || coalesce(selected_option, ''), ',' ORDER BY id)) FROM decisions) AS decision_states,
      (SELECT md5(string_agg(id || ':' || status || '@' || version, ',' ORDER BY id)) FROM projects) AS project_states,
      (SELECT md5(string_agg(id || ':' || status, ',' ORDER BY id)) FROM runs) AS run_states`.execute(
    fixture.scratch.db,
  );
  return { ...rows[0] };
}
