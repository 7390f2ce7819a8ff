import { link, mkdir, mkdtemp, open, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { diskUsage, startDiskGuard } from "../src/disk-guard.ts";

let dir = "";
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "overseer-disk-guard-"));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

const MIB = 1024 * 1024;

describe("diskUsage", () => {
  it("counts allocated blocks: a sparse file costs what it holds, a hard link counts once, a symlink is not followed", async () => {
    await mkdir(path.join(dir, "tree"));
    await writeFile(path.join(dir, "tree", "data"), Buffer.alloc(4 * MIB, 1));
    const before = await diskUsage([path.join(dir, "tree")]);
    expect(before).toBeGreaterThanOrEqual(4 * MIB);
    const sparse = await open(path.join(dir, "tree", "sparse"), "w");
    await sparse.truncate(1024 * MIB);
    await sparse.close();
    await link(path.join(dir, "tree", "data"), path.join(dir, "tree", "data-again"));
    await writeFile(path.join(dir, "outside"), Buffer.alloc(8 * MIB, 1));
    await symlink(path.join(dir, "outside"), path.join(dir, "tree", "to-outside"));
    const after = await diskUsage([path.join(dir, "tree")]);
    expect(after - before).toBeLessThan(MIB);
  });
});

describe("startDiskGuard", () => {
  it("reports growth beyond the limit once, measured against what was there at the start", async () => {
    await writeFile(path.join(dir, "existing"), Buffer.alloc(8 * MIB, 1));
    const breaches: { addedBytes: number; limitBytes: number }[] = [];
    const guard = await startDiskGuard({
      paths: [dir],
      limitBytes: 2 * MIB,
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
      intervalMs: 10,
      onExceeded: () => {},
    });
    await writeFile(path.join(dir, "fits"), Buffer.alloc(MIB, 1));
    await guard.stop();
    expect(guard.exceeded).toBeNull();
  });
});
