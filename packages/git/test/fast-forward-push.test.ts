import { promises as fs } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { fastForwardPush, pushBranch, RepoMirror } from "../src/index.ts";
import { commitOnRemote, headOf, makeRemote, TEST_AUTHOR, useTempScope } from "./git-test-helpers.ts";

const temp = useTempScope();

async function setup() {
  const dir = await temp.make();
  const remote = await makeRemote(dir, { "a.txt": "a\n" });
  const mirror = new RepoMirror({ dataDir: path.join(dir, "data"), projectId: "p", remote });
  await mirror.ensure();
  const wt = await mirror.addWorktree({ base: "main", path: path.join(dir, "job") });
  const commit = async (content: string) => {
    await fs.writeFile(path.join(wt.path, "b.txt"), content);
    return (await wt.commit({ message: content, trailers: { Task: "T1" }, author: TEST_AUTHOR })) as string;
  };
  return { remote, mirror, commit };
}

describe("fastForwardPush", () => {
  it("creates the branch, moves it forward, and leaves it alone when it already holds the sha", async () => {
    const { remote, mirror, commit } = await setup();
    const first = await commit("one\n");
    const second = await commit("two\n");
    const branch = "overseer/pr/T1";
    expect(await fastForwardPush(mirror, { branch, sha: first })).toEqual({
      kind: "pushed",
      previousSha: null,
    });
    expect(await headOf(remote, branch)).toBe(first);
    expect(await fastForwardPush(mirror, { branch, sha: second })).toEqual({
      kind: "pushed",
      previousSha: first,
    });
    expect(await headOf(remote, branch)).toBe(second);
    expect(await fastForwardPush(mirror, { branch, sha: second })).toEqual({ kind: "unchanged" });
  });

  it("refuses to move a branch sideways or backwards, and pushes nothing", async () => {
    const { remote, mirror, commit } = await setup();
    const first = await commit("one\n");
    const branch = "overseer/pr/T1";
    await fastForwardPush(mirror, { branch, sha: first });
    const theirs = await commitOnRemote(remote, branch, { "c.txt": "someone else\n" }, "by hand");
    const second = await commit("two\n");
    expect(await fastForwardPush(mirror, { branch, sha: second })).toEqual({
      kind: "diverged",
      actualSha: theirs,
    });
    expect(await headOf(remote, branch)).toBe(theirs);
    // Backwards: the branch is ahead of the sha.
    expect(await fastForwardPush(mirror, { branch, sha: first })).toEqual({
      kind: "diverged",
      actualSha: theirs,
    });
  });

  it("reads the branch again after a concurrent move and fast-forwards over it when it can", async () => {
    const { remote, mirror, commit } = await setup();
    const first = await commit("one\n");
    const second = await commit("two\n");
    const branch = "overseer/pr/T1";
    let raced = false;
    const result = await fastForwardPush(mirror, {
      branch,
      sha: second,
      // Between the read and the push, another delivery of the same job pushed the first head.
      guard: async (push) => {
        if (!raced) {
          raced = true;
          await pushBranch(mirror, { branch, sha: first, expectedOldSha: null });
        }
        return push();
      },
    });
    expect(result).toEqual({ kind: "pushed", previousSha: first });
    expect(await headOf(remote, branch)).toBe(second);
  });
});
