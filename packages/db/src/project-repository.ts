import { type NewProject, PROJECT_DEFAULTS, type RepoKind } from "@overseer/domain";
import type { Db } from "./connection.ts";
import type { ProjectRow } from "./database-schema.ts";
import { NotFoundError } from "./db-errors.ts";
import { applyTransition } from "./transition-repository.ts";

export interface CreateProjectInput {
  id: string;
  name?: string;
  repo: string;
  branch?: string;
  /** What the repository is (`repoKindOf` of @overseer/git); default `remote`. */
  repoKind?: RepoKind;
  objective?: string;
  runnerConfig: Record<string, unknown>;
  concurrency?: number;
  continuous?: boolean;
  budgetUsd?: number | null;
  status?: "active" | "paused" | "stopped";
}

/** The `create-project` command of an input, with PROJECT_DEFAULTS for what it leaves out. */
export function newProjectOf(input: CreateProjectInput): NewProject {
  return {
    id: input.id,
    name: input.name ?? input.id,
    repo: input.repo,
    branch: input.branch ?? PROJECT_DEFAULTS.branch,
    repoKind: input.repoKind ?? PROJECT_DEFAULTS.repoKind,
    objective: input.objective ?? PROJECT_DEFAULTS.objective,
    runnerConfig: input.runnerConfig,
    concurrency: input.concurrency ?? PROJECT_DEFAULTS.concurrency,
    continuous: input.continuous ?? PROJECT_DEFAULTS.continuous,
    budgetUsd: input.budgetUsd ?? null,
    status: input.status ?? PROJECT_DEFAULTS.status,
  };
}

/**
 * Creates a project through the `create-project` command (one transaction with its
 * `project.created` event and a NOTIFY), for fixtures and tools without Redis; services and
 * the CLI use `createProject` of `@overseer/transitions`, which also publishes live.
 */
export async function createProject(db: Db, input: CreateProjectInput, by = "operator"): Promise<ProjectRow> {
  await applyTransition(db, input.id, { kind: "create-project", project: newProjectOf(input), by });
  return requireProject(db, input.id);
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
