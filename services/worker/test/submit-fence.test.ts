/**
 * A hand-in's push goes through the run fence (git-phase.ts recordWork), against real Postgres
 * and real git: the fence opens once the commit is asked for, the push goes through while the
 * run is live and leaves no transaction open, and a run cancelled before its push moves no ref.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import {
  applyTransition,
  createProject,
  createScratchDatabase,
  RunNotLiveError,
  type ScratchDatabase,
  sql,
} from "@overseer/db";
import { initBareRepo, RepoMirror, runGit } from "@overseer/git";
import { createLogger } from "@overseer/runtime";
import { cancelTask, runJobFixture, taskCard } from "@overseer/test-support";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordWork } from "../src/git-phase.ts";
import { postgresRunFence } from "../src/run-fence.ts";

let scratch: ScratchDatabase;
let dir: string;
beforeAll(async () => {
  scratch = await createScratchDatabase();
  dir = await mkdtemp(path.join(tmpdir(), "overseer-submit-fence-"));
});
afterAll(async () => {
  await scratch?.drop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const logger = createLogger({ name: "submit-fence-test", level: "silent" });
const submit = {
  kind: "transition" as const,
  transition: { version: 1 as const, kind: "submit" as const, message: "Add the file" },
};

/** A project whose task S00-001 has a claimed execute run; its id. */
async function executeRun(projectId: string): Promise<string> {
  await createProject(scratch.db, { id: projectId, repo: "/tmp/none", runnerConfig: {}, concurrency: 1 });
  await applyTransition(scratch.db, projectId, {
    kind: "import-tasks",
    tasks: [taskCard("S00-001")],
    by: "t",
  });
  await applyTransition(scratch.db, projectId, {
    kind: "start-project",
    by: "t",
    stage: null,
    sessionsLimit: null,
  });
  const [run] = (await applyTransition(scratch.db, projectId, { kind: "claim" })).changes.runs;
  if (!run) throw new Error("no execute run was claimed");
  return run.id;
}

/** A remote, its mirror and a checkout of main with one new file; the remote's path. */
async function checkoutWithWork(name: string) {
  const remote = path.join(dir, `${name}.git`);
  await initBareRepo(remote, { initialFiles: { "README.md": "hi\n" }, branch: "main" });
  const mirror = new RepoMirror({ dataDir: path.join(dir, name), projectId: name, remote });
  await mirror.ensure();
  const base = (await mirror.resolveRef("main")) as string;
  const worktree = await mirror.addWorktree({
    base,
    path: path.join(dir, name, "checkout"),
    branch: "overseer/task/S00-001",
  });
  await writeFile(path.join(worktree.path, "work.txt"), "done\n");
  return { remote, mirror, base, worktree };
}

const remoteHead = async (remote: string, branch: string) =>
  (
    await runGit(["--git-dir", remote, "for-each-ref", "--format=%(objectname)", `refs/heads/${branch}`], {
      cwd: remote,
    })
  ).stdout.trim();

const openTransactions = async () => {
  const { rows } = await sql<{ n: number }>`
    SELECT count(*)::int AS n FROM pg_stat_activity
    WHERE datname = current_database() AND state LIKE 'idle in transaction%'`.execute(scratch.db);
  return rows[0]?.n ?? -1;
};

/** Hands the checkout's work in as the run's submit, through the Postgres run fence. */
function handIn(
  runId: string,
  projectId: string,
  {
    mirror,
    base,
    worktree,
  }: Pick<Awaited<ReturnType<typeof checkoutWithWork>>, "mirror" | "base" | "worktree">,
) {
  return recordWork(
    runJobFixture({ runId, projectId }),
    { logger, mirrorFreshness: { lastSync: new Map(), freshMs: 0 }, fence: postgresRunFence(scratch.db) },
    mirror,
    worktree,
    submit,
    {
      taskHead: null,
      base,
      runDir: dir,
      scope: { staged: worktree.stage(), checked: Promise.resolve([]) },
    },
  );
}

describe("a hand-in's push through the run fence", () => {
  it("pushes the commit while the run is live and leaves no transaction open", async () => {
    const runId = await executeRun("sfence-live");
    const { remote, mirror, base, worktree } = await checkoutWithWork("live");
    const work = await handIn(runId, "sfence-live", { mirror, base, worktree });
    expect(work.kind).toBe("ok");
    const sha = work.kind === "ok" ? work.commits.commitSha : null;
    expect(sha).toMatch(/^[0-9a-f]{40}$/);
    expect(await remoteHead(remote, "overseer/task/S00-001")).toBe(sha);
    expect(await openTransactions()).toBe(0);
    await worktree.remove();
  });

  it("moves no ref for a run cancelled before its push", async () => {
    const runId = await executeRun("sfence-cancelled");
    const { remote, mirror, base, worktree } = await checkoutWithWork("cancelled");
    await cancelTask(scratch.db, "sfence-cancelled");
    const work = handIn(runId, "sfence-cancelled", { mirror, base, worktree });
    await expect(work).rejects.toBeInstanceOf(RunNotLiveError);
    expect(await remoteHead(remote, "overseer/task/S00-001")).toBe("");
    expect(await openTransactions()).toBe(0);
    await worktree.remove();
  });
});
