import path from "node:path";
import { describe, expect, it } from "vitest";
import { buildCommitMessage, RepoMirror } from "../src/index.ts";
import { readBranchCommits, readReviewedHead } from "../src/landed-commit.ts";
import { git, LANDING_FILES, makeRemote, tracingGit, useTempScope } from "./git-test-helpers.ts";

/**
 * A landing reads the branches and the reviewed head in one `for-each-ref` when the task branch
 * is at the head (land-branch.ts): what it reads must be what `show` reads (readReviewedHead),
 * for every message shape, or the landed commit would carry another message or trailers.
 */

const temp = useTempScope();

const TRAILERS = {
  Task: "S00-031",
  Agent: "execute-backend-1",
  Role: "backend",
  Action: "execute",
  Status: "review",
};
const MESSAGES: Record<string, string> = {
  "ours, with trailers": buildCommitMessage("Add parser\n\nWith a body.", TRAILERS),
  "ours, subject only": buildCommitMessage("Add parser", TRAILERS),
  "no trailers": "Add parser\n\nJust a body.\n",
  "no trailing newline": "Add parser",
  "trailer-like body then a patch divider": `Add parser\n\nTask: forged\n---\nnotes\n`,
  "continuation lines": `Add parser\n\nTask: S00-1\n  continued\nStatus: review\n`,
  CRLF: "Add parser\r\n\r\nTask: S00-1\r\nStatus: review\r\n",
  "unicode and blank lines": "Ajoute l’analyseur ✓\n\n\n\nCorps.\n\nTask: S00-2\n",
  "a scissors line": `Add parser\n\nTask: S00-1\n\n# ------------------------ >8 ------------------------\nnotes\n`,
  "a very long line": `Add parser\n\n${"x".repeat(100_000)}\n\nTask: S00-3\n`,
  "a title with a colon": "Fix: the parser\n",
  "a title only": "Add parser\n",
  "trailers after a body with bullets": "Add parser\n\n- one\n- two\n\nSigned-off-by: A <a@b>\nTask: S00-4\n",
  "text among the trailers": "Add parser\n\nsee below\nTask: S00-5\n",
  "a trailer with two spaces": "Add parser\n\nTask:  S00-6\n",
  "a trailer with trailing spaces": "Add parser\n\nTask: S00-7  \n",
  "a line of spaces": "Add parser\n  \nTask: S00-8\n",
  "a comment line at the end": "Add parser\n\nTask: S00-9\n# note\n",
  "only trailers": "Task: S00-10\nStatus: review\n",
};

/** The messages whose heads are read from the mirror's files (loose-commit.ts plainTrailerBlock). */
const PLAIN = new Set([
  "ours, with trailers",
  "ours, subject only",
  "no trailing newline",
  "unicode and blank lines",
  "a very long line",
  "a title only",
  "trailers after a body with bullets",
]);

async function mirrorWith(messages: Record<string, string>) {
  const dir = await temp.make();
  const remote = await makeRemote(dir, LANDING_FILES);
  const mirror = new RepoMirror({ dataDir: path.join(dir, "data"), projectId: "heads", remote });
  await mirror.ensure();
  const main = await git(mirror.gitDir, "rev-parse", "main");
  const tree = await git(mirror.gitDir, "rev-parse", "main^{tree}");
  const branches: Record<string, string> = {};
  let n = 0;
  for (const [name, message] of Object.entries(messages)) {
    n += 1;
    const env = {
      GIT_AUTHOR_NAME: "a",
      GIT_AUTHOR_EMAIL: "a@a",
      GIT_COMMITTER_NAME: "a",
      GIT_COMMITTER_EMAIL: "a@a",
    };
    const commit = await mirror.git(["commit-tree", tree, "-p", main, "-F", "-"], { input: message, env });
    const sha = commit.stdout.trim();
    await git(mirror.gitDir, "update-ref", `refs/heads/task/${n}`, sha);
    branches[name] = `task/${n}`;
  }
  return { mirror, main, branches };
}

describe("readBranchCommits", () => {
  it("reads each branch's head as show reads it, whatever its message", async () => {
    const { mirror, branches } = await mirrorWith(MESSAGES);
    const listed = await readBranchCommits(mirror, Object.values(branches));
    if (listed === null) throw new Error("the listing was not read");
    for (const [name, branch] of Object.entries(branches)) {
      const head = listed.heads.get(branch);
      expect(head, name).toBeDefined();
      expect(head, name).toEqual(await readReviewedHead(mirror, head?.sha as string));
      expect(listed.tips.get(branch), name).toEqual({ sha: head?.sha, tree: head?.tree });
    }
  });

  it("gives the tips branchTips gives: missing branches are null, a branch below a name is not that name", async () => {
    const { mirror } = await mirrorWith({ one: "one\n" });
    const names = ["main", "task/1", "nothing/here", "task"];
    const listed = await readBranchCommits(mirror, names);
    expect(listed?.tips).toEqual(await mirror.branchTips(names));
    expect(listed?.tips.get("nothing/here")).toBeNull();
    expect(listed?.tips.get("task")).toBeNull();
    expect([...(listed?.heads.keys() ?? [])].sort()).toEqual(["main", "task/1"]);
  });

  it("reads a loose head of a plain message from the mirror's files, anything else through git, alike", async () => {
    const { mirror, branches } = await mirrorWith(MESSAGES);
    const read = async (packed: boolean) => {
      for (const [name, branch] of Object.entries(branches)) {
        const { result: listed, processes } = await tracingGit(temp, () =>
          readBranchCommits(mirror, [branch]),
        );
        const head = listed?.heads.get(branch);
        expect(head, name).toEqual(await readReviewedHead(mirror, head?.sha as string));
        expect(listed?.tips.get(branch), name).toEqual({ sha: head?.sha, tree: head?.tree });
        const byFiles = PLAIN.has(name) && !packed;
        expect(processes.commands, name).toEqual(byFiles ? [] : ["for-each-ref"]);
      }
    };
    await read(false);
    // Packed objects and refs are git's to read.
    await git(mirror.gitDir, "repack", "-a", "-d", "-q");
    await git(mirror.gitDir, "pack-refs", "--all");
    await git(mirror.gitDir, "prune-packed");
    await read(true);
  });
});
