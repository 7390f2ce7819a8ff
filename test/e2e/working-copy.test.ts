/**
 * A local working copy behaves like a bare remote (docs/architecture.md, Git): when the
 * project's branch is checked out in the user's own non-bare repository, approved work lands on
 * `overseer/main`, and every checkout, merge of the main branch and review builds on that
 * branch too — so dependent tasks and tasks that edit the same file land one after the other,
 * in a straight line, with no landing conflict. The user's working tree, index, HEAD and `main`
 * are never touched, even with uncommitted and untracked changes in them.
 *
 * End to end: coordinator, workers, bwrap, real git, Postgres and Redis; the agent is the fake
 * harness, each run scripted by its task body.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { listEvents } from "@overseer/db";
import { runGit } from "@overseer/git";
import { startProject, TransitionApplier } from "@overseer/transitions";
import { describe, expect, it } from "vitest";
import { scriptedTask, useRunningCluster } from "../support/cluster-fixture.ts";
import { allTasks } from "../support/wait-for.ts";
import { workingCopyState } from "../support/working-copy-state.ts";

const CALC = "export const add = (a, b) => a + b;\n";
const SUB = "export const sub = (a, b) => a - b;\n";
const MUL = "export const mul = (a, b) => a * b;\n";
const FORMAT = "export const format = (n) => String(n);\n";

/**
 * A edits src/calc.js and adds src/format.js; B (requires A) appends to src/calc.js as an
 * agent does that reads the file first, so it conflicts unless its checkout holds A's work;
 * C (requires B) needs A's new file and B's line, and adds its own file.
 */
const TASKS = [
  scriptedTask(
    "S00-001",
    [
      `execute: expect src/calc.js "a + b"; append src/calc.js "${SUB.replace("\n", "\\n")}"; write src/format.js "${FORMAT.replace("\n", "\\n")}"; submit "Add sub and format"`,
      "review: approve",
    ].join("\n"),
  ),
  scriptedTask(
    "S00-002",
    [
      `execute: expect src/calc.js "a - b"; append src/calc.js "${MUL.replace("\n", "\\n")}"; submit "Add mul"`,
      "review: approve",
    ].join("\n"),
    { prerequisites: ["S00-001"] },
  ),
  scriptedTask(
    "S00-003",
    [
      `execute: expect src/format.js "String(n)"; expect src/calc.js "a * b"; write src/report.js "import { format } from './format.js';\\n"; submit "Add report"`,
      "review: approve",
    ].join("\n"),
    { prerequisites: ["S00-002"] },
  ),
];

describe("working copy: dependent and same-file tasks land on overseer/main (coordinator + workers + bwrap + git)", () => {
  const cluster = useRunningCluster({ sandbox: "bwrap" }, 2);

  it("lands A, B (same file, requires A) and C (needs A's file) in a straight line and leaves the user's tree alone", async () => {
    const id = "wc-chain";
    const repo = await cluster.addProject({
      id,
      tasks: TASKS,
      concurrency: 2,
      files: { "README.md": "# mine\n", "src/calc.js": CALC },
      workingCopy: true,
      start: false,
    });
    // The user is in the middle of their own work: a staged change, an unstaged change to the
    // very file the tasks edit, and an untracked file.
    await writeFile(path.join(repo, "README.md"), "# mine, edited and staged\n");
    await runGit(["add", "README.md"], { cwd: repo });
    await writeFile(path.join(repo, "src/calc.js"), `${CALC}// my own unsaved idea\n`);
    await writeFile(path.join(repo, "notes.txt"), "untracked notes\n");
    const before = await workingCopyState(repo);

    await startProject(new TransitionApplier({ db: cluster.scratch.db }), id);
    const state = await cluster.waitForProject(
      id,
      // Stop at the first sign of the old loop: a failed run or landing, or a resolver task.
      (s) =>
        allTasks(s, ["done"]) ||
        s.tasks.size > TASKS.length ||
        [...s.tasks.values()].some((t) => t.failures > 0 || t.landingFailures > 0),
      100_000,
    );

    expect(await listEvents(cluster.scratch.db, { projectId: id, types: ["task.landing_failed"] })).toEqual(
      [],
    );
    expect([...state.tasks.values()].map((t) => `${t.id}=${t.status}`).sort()).toEqual([
      "S00-001=done",
      "S00-002=done",
      "S00-003=done",
    ]);
    const runs = await cluster.scratch.db
      .selectFrom("runs")
      .select(["action", "status"])
      .where("project_id", "=", id)
      .execute();
    expect(runs.filter((r) => r.action === "execute")).toHaveLength(3);
    expect(runs.filter((r) => r.action === "review")).toHaveLength(3);
    expect(runs.every((r) => r.status === "finished")).toBe(true);

    const git = async (...args: string[]) => (await runGit(args, { cwd: repo })).stdout.trim();
    // A straight line: three fast-forwards on overseer/main, no merge commit, main untouched.
    expect(await git("rev-list", "--merges", "refs/heads/overseer/main")).toBe("");
    expect(await git("log", "--format=%s", "refs/heads/main..refs/heads/overseer/main")).toBe(
      "Add report\nAdd mul\nAdd sub and format",
    );
    expect(await git("show", "refs/heads/overseer/main:src/calc.js")).toBe(`${CALC}${SUB}${MUL}`.trim());
    expect(await git("show", "refs/heads/overseer/main:src/format.js")).toBe(FORMAT.trim());

    // Byte for byte: HEAD, main, index, status and the files of the user's working copy.
    expect(await workingCopyState(repo)).toEqual(before);
  }, 120_000);

  it("a real conflict merges overseer/main (not main) into the loser's checkout, costs one extra executor run, then lands", async () => {
    const id = "wc-conflict";
    const line = (text: string) => `line 1\\n${text}\\nline 3\\n`;
    const task = (taskId: string, text: string) =>
      scriptedTask(
        taskId,
        [
          `execute: write src/shared.txt "${line(text)}"; submit "Line 2 is ${text}"`,
          `execute#2: expect src/shared.txt "<<<<<<< "; write src/shared.txt "${line("A and B")}"; submit "Resolve line 2"`,
          "review: approve",
        ].join("\n"),
      );
    const repo = await cluster.addProject({
      id,
      tasks: [task("S00-001", "A"), task("S00-002", "B")],
      concurrency: 2,
      files: { "README.md": "# mine\n", "src/shared.txt": "line 1\nline 2\nline 3\n" },
      workingCopy: true,
      start: false,
    });
    // Both task branches start at the same commit, so exactly one of them conflicts.
    for (const taskId of ["S00-001", "S00-002"])
      await runGit(["branch", `overseer/task/${taskId}`, "main"], { cwd: repo });
    const before = await workingCopyState(repo, ["README.md", "src/shared.txt"]);
    await startProject(new TransitionApplier({ db: cluster.scratch.db }), id);
    await cluster.waitForProject(
      id,
      (s) => allTasks(s, ["done"]) || s.tasks.size > 2 || [...s.tasks.values()].some((t) => t.failures > 0),
      100_000,
    );

    const failed = await listEvents(cluster.scratch.db, { projectId: id, types: ["task.landing_failed"] });
    expect(failed).toHaveLength(1);
    expect(failed[0]?.data).toMatchObject({
      reason: "conflict",
      files: ["src/shared.txt"],
      branch: "overseer/main",
    });
    const prompts = await cluster.scratch.db
      .selectFrom("runs")
      .select(["action", "prompt"])
      .where("project_id", "=", id)
      .where("task_id", "=", failed[0]?.task_id as string)
      .orderBy("created_at")
      .execute();
    expect(prompts.map((r) => r.action)).toEqual(["execute", "review", "execute", "review"]);
    expect(prompts[1]?.prompt).toContain("git diff overseer/main...HEAD");
    expect(prompts[2]?.prompt).toContain("Your checkout is the task branch with `overseer/main` merged in");

    const show = async (ref: string) => (await runGit(["show", ref], { cwd: repo })).stdout;
    expect(await show("refs/heads/overseer/main:src/shared.txt")).toBe(
      line("A and B").replaceAll("\\n", "\n"),
    );
    expect(await workingCopyState(repo, ["README.md", "src/shared.txt"])).toEqual(before);
  }, 120_000);
});
