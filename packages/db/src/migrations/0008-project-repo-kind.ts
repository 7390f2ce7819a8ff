import { type Kysely, sql } from "kysely";

/**
 * What a project's repository is (`remote`, `bare` or `working_copy`), recorded at
 * registration: a working copy's work lands on `overseer/<branch>`, and every checkout,
 * review and merge of the main branch builds on that branch (domain `landingBranch`).
 * Projects registered before this column are `remote`; a landing on a branch that is checked
 * out in a working copy is refused with the command that re-registers it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE projects ADD COLUMN repo_kind text NOT NULL DEFAULT 'remote'
    CHECK (repo_kind IN ('remote', 'bare', 'working_copy'))`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE projects DROP COLUMN repo_kind`.execute(db);
}
