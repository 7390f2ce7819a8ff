import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { countEventLoopTurns } from "@overseer/test-support";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { removeTree } from "../src/remove-tree.ts";

let dir = "";
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "overseer-remove-tree-"));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

describe("removeTree", () => {
  it("removes a nested tree of more entries than one slice, while the event loop keeps turning", async () => {
    const tree = path.join(dir, "tree");
    for (let d = 0; d < 20; d++) {
      await mkdir(path.join(tree, `d${d}`, "nested", "deeper"), { recursive: true });
      await Promise.all(
        Array.from({ length: 30 }, (_, f) => writeFile(path.join(tree, `d${d}`, "nested", `f${f}`), "x")),
      );
    }
    const { turns } = await countEventLoopTurns(() => removeTree(tree));
    expect(existsSync(tree)).toBe(false);
    expect(turns).toBeGreaterThan(1);
  });

  it("removes a symlink without following it, a single file, and accepts an absent target", async () => {
    const outside = path.join(dir, "outside");
    await mkdir(outside);
    await writeFile(path.join(outside, "keep"), "kept");
    const tree = path.join(dir, "tree");
    await mkdir(tree);
    await symlink(outside, path.join(tree, "to-outside"));
    await symlink(path.join(dir, "nowhere"), path.join(tree, "dangling"));
    await removeTree(tree);
    expect(existsSync(tree)).toBe(false);
    expect(await readdir(outside)).toEqual(["keep"]);

    await writeFile(path.join(dir, "file"), "x");
    await removeTree(path.join(dir, "file"));
    expect(existsSync(path.join(dir, "file"))).toBe(false);
    await expect(removeTree(path.join(dir, "absent"))).resolves.toBeUndefined();
  });

  it("removes names that are not UTF-8 (bytes a checkout may hold)", async () => {
    const tree = path.join(dir, "tree");
    await mkdir(path.join(tree, "sub"), { recursive: true });
    await writeFile(Buffer.from(path.join(tree, "sub", "latin-\xe9.txt"), "latin1"), "x");
    await mkdir(Buffer.from(path.join(tree, "dir-\xff"), "latin1"));
    await writeFile(Buffer.from(path.join(tree, "dir-\xff", "f"), "latin1"), "x");
    await removeTree(tree);
    expect(existsSync(tree)).toBe(false);
  });

  it("throws what is not an absent entry, as fs.rm does (a path through a file)", async () => {
    await writeFile(path.join(dir, "file"), "x");
    await expect(removeTree(path.join(dir, "file", "below"))).rejects.toMatchObject({ code: "ENOTDIR" });
    expect(existsSync(path.join(dir, "file"))).toBe(true);
  });
});
