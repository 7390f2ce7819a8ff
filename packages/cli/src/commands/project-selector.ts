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
  const projects = await listProjects(db);
  const [only] = projects;
  if (projects.length === 1 && only) return only.id;
  if (projects.length === 0)
    throw new UsageError("No project exists yet; create one with `overseer init --project ID --repo PATH`.");
  throw new UsageError(
    `Several projects exist (${projects.map((p) => p.id).join(", ")}); choose one with --project.`,
  );
}
