import { link, mkdir, mkdtemp, open, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { countEventLoopTurns } from "@overseer/test-support";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type DiskBreach, diskUsage, startDiskGuard } from "../src/disk-guard.ts";

let dir = "";
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "overseer-disk-guard-"));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

const MIB = 1024 * 1024;

describe("diskUsage", () => {
  it("counts apparent sizes (a sparse file in full, a hard link once) and every entry; a symlink is not followed", async () => {
    await mkdir(path.join(dir, "tree"));
    await writeFile(path.join(dir, "tree", "data"), Buffer.alloc(4 * MIB, 1));
    const before = await diskUsage([path.join(dir, "tree")]);
    expect(before).toEqual({ bytes: 4 * MIB, files: 2 });
    const sparse = await open(path.join(dir, "tree", "sparse"), "w");
    await sparse.truncate(1024 * MIB);
    await sparse.close();
    for (let i = 0; i < 8; i++)
      await link(path.join(dir, "tree", "sparse"), path.join(dir, "tree", `sparse-${i}`));
    await link(path.join(dir, "tree", "data"), path.join(dir, "tree", "data-again"));
    await writeFile(path.join(dir, "outside"), Buffer.alloc(8 * MIB, 1));
    await symlink(path.join(dir, "outside"), path.join(dir, "tree", "to-outside"));
    const after = await diskUsage([path.join(dir, "tree")]);
    const linkBytes = path.join(dir, "outside").length;
    expect(after).toEqual({ bytes: 4 * MIB + 1024 * MIB + linkBytes, files: 2 + 1 + 8 + 1 + 1 });
  });
  it("counts a tree of thousands of entries exactly while the event loop keeps turning", async () => {
    const tree = path.join(dir, "wide");
    await mkdir(tree);
    for (let d = 0; d < 30; d++) {
      await mkdir(path.join(tree, `d${d}`, "nested"), { recursive: true });
      await Promise.all(
        Array.from({ length: 40 }, (_, f) => writeFile(path.join(tree, `d${d}`, "nested", `f${f}`), "abc")),
      );
    }
    const { value: usage, turns } = await countEventLoopTurns(() => diskUsage([tree]));
    expect(usage).toEqual({ bytes: 30 * 40 * 3, files: 1 + 30 * 2 + 30 * 40 });
    // Other work ran between the walk's slices: it never held the loop for the whole tree.
    expect(turns).toBeGreaterThan(1);
  });
});

describe("startDiskGuard", () => {
  it("reports growth beyond the limit once, measured against what was there at the start", async () => {
    await writeFile(path.join(dir, "existing"), Buffer.alloc(8 * MIB, 1));
    const breaches: DiskBreach[] = [];
    const guard = await startDiskGuard({
      paths: [dir],
      limitBytes: 2 * MIB,
      maxFiles: null,
      intervalMs: 10,
      onExceeded: (usage) => breaches.push(usage),
    });
    await writeFile(path.join(dir, "small"), Buffer.alloc(MIB, 1));
    await writeFile(path.join(dir, "big"), Buffer.alloc(3 * MIB, 1));
    await guard.stop();
    expect(guard.exceeded?.addedBytes).toBeGreaterThan(2 * MIB);
    expect(breaches).toHaveLength(1);
    expect(breaches[0]?.limitBytes).toBe(2 * MIB);
  });

  it("stays quiet for a run under its limit", async () => {
    const guard = await startDiskGuard({
      paths: [dir],
      limitBytes: 4 * MIB,
      maxFiles: 10,
      intervalMs: 10,
      onExceeded: () => {},
    });
    await writeFile(path.join(dir, "fits"), Buffer.alloc(MIB, 1));
    await guard.stop();
    expect(guard.exceeded).toBeNull();
  });

  it("reports more new entries than the file cap, empty files included", async () => {
    await mkdir(path.join(dir, "existing"));
    const guard = await startDiskGuard({
      paths: [dir],
      limitBytes: null,
      maxFiles: 50,
      intervalMs: 10,
      onExceeded: () => {},
    });
    await mkdir(path.join(dir, "many"));
    for (let i = 0; i < 60; i++) await writeFile(path.join(dir, "many", `f${i}`), "");
    await guard.stop();
    // The first measurement over the cap (the writes may still be going on then).
    expect(guard.exceeded).toMatchObject({ over: "files", addedBytes: 0, limitBytes: null, maxFiles: 50 });
    expect(guard.exceeded?.addedFiles).toBeGreaterThan(50);
  });
});
