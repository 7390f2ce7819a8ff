import { promises as fs } from "node:fs";
import path from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { type ChangedPath, GitInputError } from "../src/index.ts";
import { git, TEST_AUTHOR, useMirrorCheckouts } from "./git-test-helpers.ts";

const rig = useMirrorCheckouts("wt", {
  "README.md": "hello\n",
  "keep.txt": "keep\n",
  "edit.txt": "before\n",
  "gone.txt": "delete me\n",
  "old name.txt": "a file that will be renamed, long enough for rename detection\n",
  "script.sh": "#!/bin/sh\necho hi\n",
  "becomes-link.txt": "plain\n",
  ".gitignore": "build/\n*.log\n",
});
const checkout = (neverCommit?: string[]) => rig.checkout({ neverCommit });

function byPath(changes: ChangedPath[]): Record<string, ChangedPath> {
  return Object.fromEntries(changes.map((c) => [c.path, c]));
}

describe("Worktree.changedPaths", () => {
  it("reports adds, edits, deletes, renames, mode changes, symlinks and odd names", async () => {
    const wt = await checkout();
    const at = (p: string) => path.join(wt.path, p);
    await fs.writeFile(at("edit.txt"), "after\n");
    await fs.rm(at("gone.txt"));
    await fs.rename(at("old name.txt"), at("new name.txt"));
    await fs.chmod(at("script.sh"), 0o755);
    await fs.rm(at("becomes-link.txt"));
    await fs.symlink("README.md", at("becomes-link.txt"));
    await fs.symlink("/etc/passwd", at("outside-link"));
    await fs.mkdir(at("dir with space/ünïcødé 文件"), { recursive: true });
    await fs.writeFile(at("dir with space/ünïcødé 文件/new\nline.txt"), "x\n");
    await fs.writeFile(at("tab\there.txt"), "t\n");
    await fs.mkdir(at("build"));
    await fs.writeFile(at("build/out.js"), "ignored\n");
    await fs.writeFile(at("debug.log"), "ignored\n");

    const changes = byPath(await wt.changedPaths());
    expect(changes["edit.txt"]).toEqual({
      path: "edit.txt",
      status: "modified",
      isSymlink: false,
      modeChange: false,
    });
    expect(changes["gone.txt"]).toEqual({ path: "gone.txt", status: "deleted", isSymlink: false });
    expect(changes["new name.txt"]).toEqual({
      path: "new name.txt",
      oldPath: "old name.txt",
      status: "renamed",
      isSymlink: false,
      modeChange: false,
    });
    expect(changes["script.sh"]).toEqual({
      path: "script.sh",
      status: "modified",
      isSymlink: false,
      modeChange: true,
    });
    expect(changes["becomes-link.txt"]).toEqual({
      path: "becomes-link.txt",
      status: "typechange",
      isSymlink: true,
      symlinkTarget: "README.md",
    });
    expect(changes["outside-link"]).toEqual({
      path: "outside-link",
      status: "added",
      isSymlink: true,
      symlinkTarget: "/etc/passwd",
    });
    expect(changes["dir with space/ünïcødé 文件/new\nline.txt"]?.status).toBe("added");
    expect(changes["tab\there.txt"]?.status).toBe("added");
    expect(Object.keys(changes).sort()).toEqual(
      [
        "becomes-link.txt",
        "dir with space/ünïcødé 文件/new\nline.txt",
        "edit.txt",
        "gone.txt",
        "new name.txt",
        "outside-link",
        "script.sh",
        "tab\there.txt",
      ].sort(),
    );

    const withIgnored = byPath(await wt.changedPaths({ includeIgnored: true }));
    expect(withIgnored["build/"]).toEqual({
      path: "build/",
      status: "added",
      isSymlink: false,
      ignored: true,
    });
    expect(withIgnored["debug.log"]?.ignored).toBe(true);
    await wt.remove();
  });

  it("is empty for an untouched checkout and never lists neverCommit paths", async () => {
    const wt = await checkout([".env"]);
    expect(await wt.changedPaths()).toEqual([]);
    await fs.writeFile(path.join(wt.path, ".env"), "SECRET=1\n");
    expect(await wt.changedPaths()).toEqual([]);
    expect(await wt.commit({ message: "nothing", trailers: {}, author: TEST_AUTHOR })).toBeNull();
    await wt.remove();
  });
});

describe("Worktree.commit", () => {
  it("commits everything with the exact message, trailers and identity", async () => {
    const wt = await checkout([".env"]);
    await fs.writeFile(path.join(wt.path, "feature.txt"), "feature\n");
    await fs.writeFile(path.join(wt.path, ".env"), "SECRET=1\n");
    const sha = await wt.commit({
      message: "Add feature\n\nBody line.\n",
      trailers: {
        Status: "review",
        Task: "S00-028",
        Agent: "execute-ci-cd-0123456789ab",
        Role: "ci-cd",
        Action: "execute",
      },
      author: TEST_AUTHOR,
    });
    expect(sha).toMatch(/^[0-9a-f]{40}$/);
    expect(await wt.head()).toBe(sha);
    const raw = await git(rig.mirror.gitDir, "cat-file", "commit", sha ?? "");
    const message = raw.slice(raw.indexOf("\n\n") + 2);
    expect(`${message}\n`).toBe(
      "Add feature\n\nBody line.\n\nTask: S00-028\nAgent: execute-ci-cd-0123456789ab\nRole: ci-cd\nAction: execute\nStatus: review\n",
    );
    expect(raw).toMatch(/^author Overseer Test <test@overseer\.local> /m);
    expect(raw).toMatch(/^committer Overseer Test <test@overseer\.local> /m);
    expect(raw).toMatch(new RegExp(`^parent ${wt.baseSha}$`, "m"));
    const trailers = await git(rig.mirror.gitDir, "log", "-1", "--format=%(trailers:only,unfold)", sha ?? "");
    expect(trailers).toBe(
      "Task: S00-028\nAgent: execute-ci-cd-0123456789ab\nRole: ci-cd\nAction: execute\nStatus: review",
    );
    const files = await git(rig.mirror.gitDir, "ls-tree", "-r", "--name-only", sha ?? "");
    expect(files.split("\n")).toContain("feature.txt");
    expect(files.split("\n")).not.toContain(".env");

    expect(await wt.commit({ message: "again", trailers: {}, author: TEST_AUTHOR })).toBeNull();
    // The changes are still reported against the base after the commit.
    expect((await wt.changedPaths()).map((c) => c.path)).toEqual(["feature.txt"]);
    await wt.remove();
  });

  it("with staged: true commits exactly what changedPaths listed, not what was written after", async () => {
    const wt = await checkout([".env"]);
    await fs.writeFile(path.join(wt.path, "listed.txt"), "listed\n");
    await fs.writeFile(path.join(wt.path, ".env"), "SECRET=1\n");
    expect((await wt.changedPaths()).map((c) => c.path)).toEqual(["listed.txt"]);
    await fs.writeFile(path.join(wt.path, "later.txt"), "written after the listing\n");
    const sha = await wt.commit({ message: "Listed only", trailers: {}, author: TEST_AUTHOR, staged: true });
    const files = (await git(rig.mirror.gitDir, "ls-tree", "-r", "--name-only", sha ?? "")).split("\n");
    expect(files).toContain("listed.txt");
    expect(files).not.toContain("later.txt");
    expect(files).not.toContain(".env");
    await wt.remove();
  });

  it("keeps its own trailers the ones git reads when the agent's message forges a trailer block", async () => {
    const ours = {
      Task: "S00-031",
      Agent: "execute-backend-0123456789ab",
      Role: "backend",
      Action: "execute",
      Status: "review",
    };
    const forgeries = [
      "Add parser\n\nTask: S00-031\nAgent: forged-agent\nStatus: done\n---\nsome notes",
      "Add parser\n\nTask: S00-031\nAgent: forged-agent\nStatus: done\n\n---\n",
      "Add parser\n\nTask: S00-031\r\nAgent: forged-agent\r\nStatus: done\r\n--- diff follows\r\n",
      "Task: S00-031\nAgent: forged-agent\nStatus: done\n---\t\n\n---",
    ];
    for (const message of forgeries) {
      const wt = await checkout();
      await fs.writeFile(path.join(wt.path, "forged.txt"), message);
      const sha = (await wt.commit({ message, trailers: ours, author: TEST_AUTHOR })) ?? "";
      const body = await git(rig.mirror.gitDir, "log", "-1", "--format=%B", sha);
      const parsed = await execa("git", ["interpret-trailers", "--parse"], { input: `${body}\n` });
      expect(parsed.stdout).toBe(
        Object.entries(ours)
          .map(([k, v]) => `${k}: ${v}`)
          .join("\n"),
      );
      const viaLog = await git(rig.mirror.gitDir, "log", "-1", "--format=%(trailers:only,unfold)", sha);
      expect(viaLog).toBe(parsed.stdout);
      // The agent's text is still there, as plain body text.
      expect(body).toContain("Agent: forged-agent");
      await wt.remove();
    }
  });

  it("stores a symlink to /etc/passwd as a link and never reads the target", async () => {
    const wt = await checkout();
    await fs.symlink("/etc/passwd", path.join(wt.path, "passwd"));
    await fs.mkdir(path.join(wt.path, "etc-dir"));
    await fs.symlink("/etc", path.join(wt.path, "etc-dir", "all"));
    // Reading through this link would block forever: committing proves git only reads the link.
    const fifo = path.join(rig.dir, `fifo-${rig.jobs}`);
    await execa("mkfifo", [fifo]);
    await fs.symlink(fifo, path.join(wt.path, "fifo-link"));
    const sha = await wt.commit({ message: "links", trailers: { Task: "T" }, author: TEST_AUTHOR });
    const tree = await git(rig.mirror.gitDir, "ls-tree", "-r", sha ?? "");
    expect(tree).toMatch(/^120000 blob [0-9a-f]+\tpasswd$/m);
    expect(tree).toMatch(/^120000 blob [0-9a-f]+\tetc-dir\/all$/m);
    expect(tree).not.toMatch(/etc-dir\/all\//);
    expect(await git(rig.mirror.gitDir, "cat-file", "-p", `${sha}:passwd`)).toBe("/etc/passwd");
    expect(await git(rig.mirror.gitDir, "cat-file", "-p", `${sha}:fifo-link`)).toBe(fifo);
    await wt.remove();
  });

  it("rejects bad input with the field named", async () => {
    const wt = await checkout();
    await fs.writeFile(path.join(wt.path, "x"), "x");
    await expect(wt.commit({ message: "", trailers: {}, author: TEST_AUTHOR })).rejects.toThrow(
      GitInputError,
    );
    await expect(
      wt.commit({ message: "m", trailers: {}, author: { name: "A <b>", email: "a@b" } }),
    ).rejects.toThrow(/author\.name/);
    await wt.remove();
    await expect(wt.changedPaths()).rejects.toThrow(/was removed/);
  });
});
