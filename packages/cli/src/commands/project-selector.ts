import { type Db, getProject, listProjects } from "@overseer/db";
import { UsageError } from "../cli-errors.ts";

/** `--project P`, or the only project when there is exactly one. */
export async function selectProject(db: Db, requested: string | undefined): Promise<string> {
  if (requested) {
    if (!(await getProject(db, requested))) {
      throw new UsageError(
        `Project "${requested}" does not exist; list projects with \`overseer status\` or create it with \`overseer init\`.`,
      );
    }
    return requested;
  }
  return onlyProject(await listProjects(db));
}

/**
 * The id of the only project when no `--project` was given (the database's or the gateway's
 * list): none or several is a usage error that says what to type.
 */
export function onlyProject(projects: readonly { id: string }[]): string {
  const [only] = projects;
  if (projects.length === 1 && only) return only.id;
  if (projects.length === 0)
    throw new UsageError("No project exists yet; create one with `overseer init --project ID --repo PATH`.");
  throw new UsageError(
    `Several projects exist (${projects.map((p) => p.id).join(", ")}); choose one with --project.`,
  );
}
