import { promises as fs } from "node:fs";
import path from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pushBranch, RepoMirror } from "../src/index.ts";
import {
  expectWhole,
  git,
  headOf,
  makeRemote,
  TEST_AUTHOR,
  tempScope,
  tracingGit,
} from "./git-test-helpers.ts";
import { applyEdit, editsArb, embeddedRepository, plantTree, treeArb } from "./index-tree-edits.ts";

/**
 * The push to a local remote without git's transport (local-push.ts) on random trees and random
 * edits (names that sort against `/`, bytes that are not UTF-8, symlinks, executable bits,
 * gitlinks, files turned into directories and back): the remote ends whole by git's own fsck,
 * with the branch at the pushed commit and the history a `git push` would leave, whether its
 * objects are loose or packed.
 */

const temp = tempScope();
let dir = "";
/** A repository with one commit: what the gitlinks' `.git` files point to. */
let embedded = "";
let runs = 0;

beforeAll(async () => {
  dir = await temp.make();
  embedded = await embeddedRepository(dir);
});
afterAll(() => temp.cleanup());

/** Each run is ~12 git processes (remote, mirror, checkout, the first push, gc, fsck). */
const RUNS = 15;

describe("a push to a local remote without git's transport, on random trees and edits", () => {
  it("leaves the remote whole, at the pushed commit, loose or packed", async () => {
    await fc.assert(
      fc.asyncProperty(treeArb, editsArb(6), fc.boolean(), async (tree, edits, packed) => {
        runs++;
        const at = path.join(dir, `run-${runs}`);
        const remote = await makeRemote(at, { "README.md": "hello\n" });
        const options = { dataDir: path.join(at, "data"), projectId: "p", remote };
        // The same mirror directory: the first push through git, the second without it.
        const viaGit = new RepoMirror({ ...options, localPushMaxObjects: 0 });
        const direct = new RepoMirror(options);
        await viaGit.ensure();
        const wt = await viaGit.addWorktree({ base: "main", path: path.join(at, "job") });
        const commit = async () =>
          (await wt.commit({ message: "work", trailers: { Task: "T" }, author: TEST_AUTHOR })) as string;
        await plantTree(wt.path, tree, embedded);
        const first = await commit();
        expect(await pushBranch(viaGit, { branch: "t", sha: first, expectedOldSha: null })).toEqual({
          ok: true,
        });
        if (packed) await git(remote, "gc", "--quiet", "--prune=now");
        for (const edit of edits) await applyEdit(wt.path, edit, embedded);
        const second = (await commit()) ?? first;
        const { result, processes } = await tracingGit(temp, () =>
          pushBranch(direct, { branch: "t", sha: second, expectedOldSha: first }),
        );
        expect(result).toEqual({ ok: true });
        expect(processes.commands).not.toContain("push");
        expect(await headOf(remote, "t")).toBe(second);
        await expectWhole(remote);
        // Every object of the pushed history, as the mirror has it.
        const list = (repo: string) => git(repo, "rev-list", "--objects", "--no-object-names", second);
        expect(await list(remote)).toBe(await list(direct.gitDir));
        await wt.remove();
        await fs.rm(at, { recursive: true, force: true });
      }),
      { numRuns: RUNS },
    );
  });
});
