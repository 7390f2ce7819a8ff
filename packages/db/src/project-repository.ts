import { sql } from "kysely";
import { type Db, json } from "./connection.ts";
import type { ProjectRow } from "./database-schema.ts";
import { NotFoundError } from "./db-errors.ts";

export interface CreateProjectInput {
  id: string;
  name?: string;
  repo: string;
  branch?: string;
  objective?: string;
  runnerConfig: Record<string, unknown>;
  concurrency?: number;
  continuous?: boolean;
  budgetUsd?: number | null;
  status?: "active" | "paused" | "stopped";
}

export async function createProject(db: Db, input: CreateProjectInput): Promise<ProjectRow> {
  return db
    .insertInto("projects")
    .values({
      id: input.id,
      name: input.name ?? input.id,
      repo: input.repo,
      branch: input.branch ?? "main",
      objective: input.objective ?? "",
      runner_config: json(input.runnerConfig),
      concurrency: input.concurrency ?? 1,
      continuous: input.continuous ?? false,
      budget_usd: input.budgetUsd ?? null,
      status: input.status ?? "paused",
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function getProject(db: Db, id: string): Promise<ProjectRow | undefined> {
  return db.selectFrom("projects").selectAll().where("id", "=", id).executeTakeFirst();
}

export async function requireProject(db: Db, id: string): Promise<ProjectRow> {
  const row = await getProject(db, id);
  if (!row)
    throw new NotFoundError(
      `Project ${id} does not exist; create it with \`overseer init\` or POST /api/projects.`,
    );
  return row;
}

export async function listProjects(
  db: Db,
  filter: { status?: ProjectRow["status"] } = {},
): Promise<ProjectRow[]> {
  let q = db.selectFrom("projects").selectAll().orderBy("id");
  if (filter.status) q = q.where("status", "=", filter.status);
  return q.execute();
}

export async function updateProjectConfig(
  db: Db,
  id: string,
  patch: {
    runnerConfig?: Record<string, unknown>;
    objective?: string;
    concurrency?: number;
    budgetUsd?: number | null;
  },
): Promise<ProjectRow> {
  return db
    .updateTable("projects")
    .set({
      ...(patch.runnerConfig ? { runner_config: json(patch.runnerConfig) } : {}),
      ...(patch.objective !== undefined ? { objective: patch.objective } : {}),
      ...(patch.concurrency !== undefined ? { concurrency: patch.concurrency } : {}),
      ...(patch.budgetUsd !== undefined ? { budget_usd: patch.budgetUsd } : {}),
      version: sql`version + 1`,
      updated_at: new Date(),
    })
    .where("id", "=", id)
    .returningAll()
    .executeTakeFirstOrThrow();
}
