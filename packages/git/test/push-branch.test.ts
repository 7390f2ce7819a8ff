import { promises as fs } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { checkpointRef, GitError, GitInputError, pushBranch, RepoMirror } from "../src/index.ts";
import { commitOnRemote, git, headOf, makeRemote, TEST_AUTHOR, useTempScope } from "./git-test-helpers.ts";

const temp = useTempScope();

/** A local remote pushed to directly (local-push.ts), or through `git push` (`localPushMaxObjects: 0`). */
async function setupMirror(localPushMaxObjects?: number) {
  const dir = await temp.make();
  const remote = await makeRemote(dir, { "a.txt": "a\n" });
  const mirror = new RepoMirror({
    dataDir: path.join(dir, "data"),
    projectId: "p",
    remote,
    localPushMaxObjects,
  });
  await mirror.ensure();
  const wt = await mirror.addWorktree({ base: "main", path: path.join(dir, "job") });
  await fs.writeFile(path.join(wt.path, "b.txt"), "b\n");
  const first = (await wt.commit({
    message: "one",
    trailers: { Task: "T1" },
    author: TEST_AUTHOR,
  })) as string;
  await fs.writeFile(path.join(wt.path, "b.txt"), "b2\n");
  const second = (await wt.commit({
    message: "two",
    trailers: { Task: "T1" },
    author: TEST_AUTHOR,
  })) as string;
  return { dir, remote, mirror, wt, first, second };
}

describe.each([
  { how: "directly", maxObjects: undefined },
  { how: "with git push", maxObjects: 0 },
])("pushBranch to a local remote $how", ({ maxObjects }) => {
  const setup = () => setupMirror(maxObjects);

  it("creates a branch only when it must not exist, then moves it with a matching lease", async () => {
    const { remote, mirror, first, second } = await setup();
    const branch = "overseer/task/T1";
    expect(await pushBranch(mirror, { branch, sha: first, expectedOldSha: null })).toEqual({ ok: true });
    expect(await headOf(remote, branch)).toBe(first);
    expect(await mirror.resolveRef(branch)).toBe(first);

    // null expectation on an existing branch (at another commit) is refused.
    expect(await pushBranch(mirror, { branch, sha: second, expectedOldSha: null })).toEqual({
      ok: false,
      reason: "stale",
      actualSha: first,
    });
    expect(await headOf(remote, branch)).toBe(first);

    expect(await pushBranch(mirror, { branch, sha: second, expectedOldSha: first })).toEqual({ ok: true });
    expect(await headOf(remote, branch)).toBe(second);
    expect(await mirror.resolveRef(branch)).toBe(second);
    // Redelivery: the branch already holds the commit.
    expect(await pushBranch(mirror, { branch, sha: second, expectedOldSha: first })).toEqual({ ok: true });
  });

  it("reports stale with the actual value after a concurrent change, and never forces", async () => {
    const { remote, mirror, first, second } = await setup();
    const branch = "overseer/task/T1";
    await pushBranch(mirror, { branch, sha: first, expectedOldSha: null });
    const theirs = await commitOnRemote(remote, branch, { "c.txt": "c\n" }, "concurrent");
    const result = await pushBranch(mirror, { branch, sha: second, expectedOldSha: first });
    expect(result).toEqual({ ok: false, reason: "stale", actualSha: theirs });
    expect(await headOf(remote, branch)).toBe(theirs);
    expect(await mirror.resolveRef(branch)).toBe(theirs);

    // The branch was deleted remotely: expecting any value is stale with actualSha null.
    await git(remote, "update-ref", "-d", `refs/heads/${branch}`);
    expect(await pushBranch(mirror, { branch, sha: second, expectedOldSha: theirs })).toEqual({
      ok: false,
      reason: "stale",
      actualSha: null,
    });
    expect(await mirror.resolveRef(branch)).toBeNull();
  });

  it("pushes checkpoint branches and validates input", async () => {
    const { remote, mirror, first } = await setup();
    const branch = checkpointRef("S00-028", "execute-ci-cd-0123456789ab");
    expect(branch).toBe("overseer/checkpoint/S00-028/execute-ci-cd-0123456789ab");
    expect(await pushBranch(mirror, { branch, sha: first, expectedOldSha: null })).toEqual({ ok: true });
    expect(await headOf(remote, branch)).toBe(first);
    await expect(
      pushBranch(mirror, { branch: "bad..name", sha: first, expectedOldSha: null }),
    ).rejects.toThrow(GitInputError);
    await expect(pushBranch(mirror, { branch: "x", sha: "HEAD", expectedOldSha: null })).rejects.toThrow(
      /sha/,
    );
  });

  it("surfaces a refusal that is not a race as a GitError", async () => {
    const { remote, mirror, first } = await setup();
    await pushBranch(mirror, { branch: "nf", sha: first, expectedOldSha: null });
    await git(remote, "config", "receive.denyNonFastForwards", "true"); // a policy, not a race
    const base = (await headOf(remote, "main")) as string;
    const error = await pushBranch(mirror, { branch: "nf", sha: base, expectedOldSha: first }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(GitError);
    expect(await headOf(remote, "nf")).toBe(first);
  });
});

describe("pushBranch with git push", () => {
  it("a push to a local remote: no shell kept alive, no self-listing of refs unless the remote has alternates", async () => {
    const { dir, remote, mirror, first, second } = await setupMirror(0);
    const events = async (call: () => Promise<unknown>) => {
      const file = path.join(await temp.make("overseer-push-trace-"), "trace.json");
      process.env.GIT_TRACE2_EVENT = file;
      try {
        await call();
      } finally {
        delete process.env.GIT_TRACE2_EVENT;
      }
      return (await fs.readFile(file, "utf8"))
        .split("\n")
        .filter((line) => line !== "")
        .map((line) => JSON.parse(line) as { event: string; argv?: string[]; ancestry?: string[] });
    };
    const plain = await events(() => pushBranch(mirror, { branch: "x", sha: first, expectedOldSha: null }));
    const starts = plain
      .filter((e) => e.event === "start")
      .map((e) => (e.argv ?? []).filter((a) => !a.startsWith("-")));
    expect(starts.some((argv) => argv.includes("for-each-ref"))).toBe(false);
    expect(starts.some((argv) => argv.includes("rev-list"))).toBe(true);
    // receive-pack's parent is the push itself (the shell replaced itself with it).
    const ancestry = plain.filter((e) => e.event === "cmd_ancestry").map((e) => e.ancestry?.[0]);
    expect(ancestry).not.toContain("sh");
    expect(await headOf(remote, "x")).toBe(first);

    // A remote that borrows objects keeps git's own listing of the alternates' refs.
    const lender = await makeRemote(path.join(dir, "lender"), { "l.txt": "l\n" });
    await fs.writeFile(
      path.join(remote, "objects", "info", "alternates"),
      `${path.join(lender, "objects")}\n`,
    );
    const borrowed = await events(() =>
      pushBranch(mirror, { branch: "x", sha: second, expectedOldSha: first }),
    );
    const listings = borrowed.filter((e) => e.event === "start" && e.argv?.includes("for-each-ref"));
    expect(listings.length).toBeGreaterThan(0);
    expect(await headOf(remote, "x")).toBe(second);
  });
});
