/**
 * Landing that resolves what it can (docs/runner-config.md, Landing), end to end with the fake
 * harness, bwrap and real git: parallel tasks on disjoint files land without any agent run
 * (squash and merge), and a real textual conflict costs exactly one extra executor run whose
 * checkout has main merged in and whose prompt lists the file, then a review, then it lands.
 *
 * Both task branches are created at the initial commit before the project starts, so the two
 * tasks diverge from the same main whatever order the workers pick their jobs in (the outcome
 * is deterministic; which of the two lands first is not, and does not matter).
 */
import { listEvents } from "@overseer/db";
import { runGit } from "@overseer/git";
import { startProject, TransitionApplier } from "@overseer/transitions";
import { describe, expect, it } from "vitest";
import { ClusterFixture, useRunningCluster } from "../support/cluster-fixture.ts";
import { allTasks } from "../support/wait-for.ts";

const SHARED = "line 1\nline 2\nline 3\n";
const RESOLVED = "line 1\nA and B\nline 3\n";

/** A task that rewrites line 2 of shared.txt; a second executor must find the markers and resolve. */
function conflictingTask(id: string, line: string) {
  return {
    id,
    title: `Rewrite line 2 as ${line}`,
    role: "backend",
    scope: ["shared.txt"],
    body: [
      "```overseer-fake",
      `execute: write shared.txt "line 1\\n${line}\\nline 3\\n"; submit "Line 2 is ${line}"`,
      `execute#2: expect shared.txt "<<<<<<< "; expect shared.txt "\\n${line}\\n"; write shared.txt "${RESOLVED.replaceAll("\n", "\\n")}"; submit "Resolve the conflict on line 2"`,
      "review: approve",
      "```",
    ].join("\n"),
  };
}

function disjointTask(id: string, file: string) {
  return {
    id,
    title: `Add ${file}`,
    role: "backend",
    scope: [file],
    body: [
      "```overseer-fake",
      `execute: write ${file} "${id}\\n"; submit "Add ${file}"`,
      "review: approve",
      "```",
    ].join("\n"),
  };
}

describe("landing: squash, merge and conflict resolution (coordinator + workers + bwrap + git)", () => {
  const cluster = useRunningCluster({ sandbox: "bwrap" }, 2);

  /** A project of two parallel tasks whose branches both start at the initial commit. */
  async function parallelProject(id: string, tasks: { id: string }[], extra: Record<string, unknown> = {}) {
    const repo = await cluster.addProject({
      id,
      tasks,
      concurrency: 2,
      files: { "README.md": `# ${id}\n`, "shared.txt": SHARED },
      runnerConfig: ClusterFixture.fakeRunnerConfig({ concurrency: 2, ...extra }),
      start: false,
    });
    for (const task of tasks) {
      await runGit(["update-ref", `refs/heads/overseer/task/${task.id}`, "refs/heads/main"], { cwd: repo });
    }
    await startProject(new TransitionApplier({ db: cluster.scratch.db }), id);
    return repo;
  }

  const runsOf = (projectId: string) =>
    cluster.scratch.db
      .selectFrom("runs")
      .select(["task_id", "action", "status", "transition", "prompt"])
      .where("project_id", "=", projectId)
      .orderBy("created_at")
      .execute();

  const count = (runs: { action: string }[], action: string) =>
    runs.filter((r) => r.action === action).length;

  for (const strategy of ["squash", "merge"] as const) {
    it(`${strategy}: two parallel tasks on disjoint files both land with no extra agent run`, async () => {
      const id = `disjoint-${strategy}`;
      const repo = await parallelProject(
        id,
        [disjointTask("S00-001", "c.txt"), disjointTask("S00-002", "d.txt")],
        {
          landing: { strategy },
        },
      );
      await cluster.waitForProject(id, (s) => allTasks(s, ["done"]), 90_000);
      const runs = await runsOf(id);
      expect(count(runs, "execute")).toBe(2);
      expect(count(runs, "review")).toBe(2);
      expect(runs.length).toBe(4);
      expect(await listEvents(cluster.scratch.db, { projectId: id, types: ["task.landing_failed"] })).toEqual(
        [],
      );
      const show = async (file: string) => (await runGit(["show", `main:${file}`], { cwd: repo })).stdout;
      expect(await show("c.txt")).toBe("S00-001\n");
      expect(await show("d.txt")).toBe("S00-002\n");
      expect(await show("shared.txt")).toBe(SHARED);
      // The second landing could not fast-forward: a merge commit, or one squashed (linear) commit.
      const merges = (await runGit(["rev-list", "--merges", "main"], { cwd: repo })).stdout.trim();
      if (strategy === "merge") expect(merges.split("\n")).toHaveLength(1);
      else expect(merges).toBe("");
    });
  }

  it("a real conflict costs exactly one extra executor run, with main merged in, then lands", async () => {
    const id = "conflict";
    const repo = await parallelProject(id, [
      conflictingTask("S00-001", "A"),
      conflictingTask("S00-002", "B"),
    ]);
    const state = await cluster.waitForProject(id, (s) => allTasks(s, ["done"]), 120_000);
    for (const task of state.tasks.values()) expect(task.landing).toBeNull();

    const failed = await listEvents(cluster.scratch.db, { projectId: id, types: ["task.landing_failed"] });
    expect(failed).toHaveLength(1);
    const loser = failed[0]?.task_id as string;
    expect(failed[0]?.data).toMatchObject({ reason: "conflict", files: ["shared.txt"], branch: "main" });

    const runs = await runsOf(id);
    expect(count(runs, "execute")).toBe(3);
    expect(count(runs, "review")).toBe(3);
    expect(runs.every((r) => r.status === "finished")).toBe(true);
    const loserExecutes = runs.filter((r) => r.task_id === loser && r.action === "execute");
    expect(loserExecutes).toHaveLength(2);
    const prompt = loserExecutes[1]?.prompt ?? "";
    expect(prompt).toContain("## Resolve the merge conflict");
    expect(prompt).toContain("\n- shared.txt\n");
    expect(prompt).toContain("- Attempt: 2");

    // The resolution lands squashed (the default): one linear commit with the resolved tree, and
    // no commit with conflict markers (nor the loser's first attempt) reached main.
    expect((await runGit(["show", "main:shared.txt"], { cwd: repo })).stdout).toBe(RESOLVED);
    expect((await runGit(["log", "--format=%H", "--merges", "main"], { cwd: repo })).stdout.trim()).toBe("");
    const subjects = (await runGit(["log", "--format=%s", "main"], { cwd: repo })).stdout.split("\n");
    expect(subjects.filter((s) => s === "Resolve the conflict on line 2")).toHaveLength(1);
    const everyVersion = await runGit(["log", "-p", "--format=%H", "main", "--", "shared.txt"], {
      cwd: repo,
    });
    expect(everyVersion.stdout).not.toContain("<<<<<<<");
    const approved = await listEvents(cluster.scratch.db, { projectId: id, types: ["task.approved"] });
    expect(approved.map((e) => e.task_id).sort()).toEqual(["S00-001", "S00-002"]);
  });

  it("a resolution that keeps the conflict markers is refused before any push; the next one lands", async () => {
    const id = "markers";
    /** Like conflictingTask, but its first resolution keeps the markers and adds an unrelated file. */
    const keeping = (taskId: string, line: string) => ({
      ...conflictingTask(taskId, line),
      scope: ["shared.txt", "unrelated.txt"],
      body: [
        "```overseer-fake",
        `execute: write shared.txt "line 1\\n${line}\\nline 3\\n"; submit "Line 2 is ${line}"`,
        'execute#2: expect shared.txt "<<<<<<< "; write unrelated.txt "x\\n"; submit "Resolved (not really)"',
        `execute#3: expect shared.txt "<<<<<<< "; write shared.txt "${RESOLVED.replaceAll("\n", "\\n")}"; submit "Resolve the conflict on line 2"`,
        "review: approve",
        "```",
      ].join("\n"),
    });
    const repo = await parallelProject(id, [keeping("S00-001", "A"), keeping("S00-002", "B")]);
    await cluster.waitForProject(id, (s) => allTasks(s, ["done"]), 180_000);
    // No branch of the repository ever received a commit with markers, nor the unrelated file.
    const everyVersion = await runGit(["log", "-p", "--all", "--format=%H", "--", "shared.txt"], {
      cwd: repo,
    });
    expect(everyVersion.stdout).not.toMatch(/^\+(<{7}|>{7}|\|{7}) /m);
    expect((await runGit(["log", "--all", "--format=%H", "--", "unrelated.txt"], { cwd: repo })).stdout).toBe(
      "",
    );
    expect((await runGit(["show", "main:shared.txt"], { cwd: repo })).stdout).toBe(RESOLVED);
    const runs = await cluster.scratch.db
      .selectFrom("runs")
      .select(["task_id", "action", "status", "failure"])
      .where("project_id", "=", id)
      .orderBy("created_at")
      .execute();
    // The loser's keeping run failed with the files named; its retry resolved and landed.
    const refused = runs.filter((r) => r.failure?.includes("conflict markers remain in shared.txt"));
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({ action: "execute", status: "failed" });
    expect(runs.filter((r) => r.action === "execute")).toHaveLength(4);
  });
});
