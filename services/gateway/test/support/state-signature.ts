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
