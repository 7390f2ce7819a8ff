/**
 * A hand-in is committed while the scope check lists the paths (git-phase.ts); a path out of
 * scope drops that commit: nothing reaches the task branch, and the work is kept as a checkpoint
 * on the checkout's base with the checkpoint's message and trailers, as if no hand-in commit was
 * ever made. Real worker, git and bwrap.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WorkerRig } from "./support/worker-rig.ts";

const rig = new WorkerRig();
beforeAll(() => rig.setup());
afterAll(() => rig.teardown());

const parentsOf = async (sha: string) =>
  (await rig.git("rev-list", "--parents", "-n", "1", sha)).split(" ").slice(1);

describe("a submit with a path out of scope", () => {
  it("pushes nothing to the task branch and keeps the work as a checkpoint on the base", async () => {
    const main = (await rig.head("main")) as string;
    const job = rig.job(
      "echo ok > src/ok.txt; echo outside > README.md; echo 'My work' | overseer-agent submit --message-file -",
      { taskId: "S30-001" },
    );
    const result = await rig.run(job);
    expect(result.scopeViolations).toEqual(["README.md"]);
    expect(await rig.head("overseer/task/S30-001")).toBeNull();
    expect(result.checkpointRef).toMatch(/^overseer\/checkpoint\//);
    const sha = result.commitSha as string;
    expect(await rig.head(result.checkpointRef as string)).toBe(sha);
    expect(await parentsOf(sha)).toEqual([main]);
    expect(await rig.git("log", "-1", "--format=%s", sha)).toMatch(/^Checkpoint of S30-001/);
    expect(await rig.git("log", "-1", "--format=%(trailers:key=Status,valueonly)", sha)).toBe("blocked");
    expect(await rig.git("show", `${sha}:src/ok.txt`)).toBe("ok");
    expect(await rig.git("show", `${sha}:README.md`)).toBe("outside");
  });

  it("after a start on main merged in: the checkpoint builds on that merge, the task branch stays", async () => {
    const submit = await rig.run(
      rig.job(
        "printf 'a\\nTASK\\nc\\n' > src/m.txt; echo 'Task side' | overseer-agent submit --message-file -",
        {
          taskId: "S30-002",
        },
      ),
    );
    const taskHead = submit.branchHead as string;
    const main = await rig.commitOnRemote("main", { "src/m.txt": "a\nMAIN\nc\n" }, "Main side");
    const resolved = await rig.run(
      rig.job(
        "printf 'a\\nBOTH\\nc\\n' > src/m.txt; echo outside > README.md; echo Resolve | overseer-agent submit --message-file -",
        {
          taskId: "S30-002",
          expectedTaskHead: taskHead,
          mergeMain: { reason: "conflict", files: ["src/m.txt"] },
        },
      ),
    );
    expect(resolved.scopeViolations).toEqual(["README.md"]);
    expect(await rig.head("overseer/task/S30-002")).toBe(taskHead);
    const sha = resolved.commitSha as string;
    const [merge, ...more] = await parentsOf(sha);
    expect(more).toEqual([]);
    // The prepared merge (task head, main), not an amended one: the checkpoint is a commit on it.
    expect(await parentsOf(merge as string)).toEqual([taskHead, main]);
    expect(await rig.git("log", "-1", "--format=%s", merge as string)).toMatch(/^Merge /);
    expect(await rig.git("show", `${sha}:src/m.txt`)).toBe("a\nBOTH\nc");
  });
});
