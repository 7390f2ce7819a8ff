import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { disposeRunDirs, makeRunDir, releaseRunDir } from "../src/run-dirs.ts";

let runs = "";
beforeEach(async () => {
  runs = path.join(await mkdtemp(path.join(tmpdir(), "overseer-run-dirs-")), "runs");
});
afterEach(async () => {
  await disposeRunDirs();
  await rm(path.dirname(runs), { recursive: true, force: true });
});

describe("run dirs kept across runs", () => {
  it("a finished run's dir is emptied and becomes the next run's (the same directory renamed, 0700, empty)", async () => {
    const first = path.join(runs, "run-1");
    makeRunDir(first);
    expect((await stat(first)).mode & 0o777).toBe(0o700);
    await mkdir(path.join(first, "checkout", "src"), { recursive: true });
    await writeFile(path.join(first, "checkout", "src", "a.txt"), "a");
    await mkdir(path.join(first, "control"));
    await writeFile(path.join(first, "prompt.md"), "p");
    const inode = (await stat(first)).ino;
    await releaseRunDir(first);
    // Kept under its old name until a run takes it: nothing of the run is left in it.
    expect(await readdir(runs)).toEqual(["run-1"]);
    expect(await readdir(first)).toEqual([]);

    const second = path.join(runs, "run-2");
    makeRunDir(second);
    expect(await readdir(runs)).toEqual(["run-2"]);
    expect((await stat(second)).ino).toBe(inode);
    expect((await stat(second)).mode & 0o777).toBe(0o700);
    expect(await readdir(second)).toEqual([]);
  });

  it("makes a new dir when none is kept, or the kept one is gone; an absent run dir releases as nothing", async () => {
    const first = path.join(runs, "run-1");
    makeRunDir(first);
    await releaseRunDir(first);
    await rm(first, { recursive: true });
    const second = path.join(runs, "run-2");
    makeRunDir(second);
    expect(await readdir(runs)).toEqual(["run-2"]);
    await releaseRunDir(path.join(runs, "never-made"));
    expect(await readdir(runs)).toEqual(["run-2"]);
  });

  it("never hands out a kept dir that was written to since it was kept: a new one instead", async () => {
    const first = path.join(runs, "run-1");
    makeRunDir(first);
    await releaseRunDir(first);
    await writeFile(path.join(first, "late"), "written after the release");
    const second = path.join(runs, "run-2");
    makeRunDir(second);
    expect(await readdir(runs)).toEqual(["run-2"]);
    expect(await readdir(second)).toEqual([]);
    expect((await stat(second)).mode & 0o777).toBe(0o700);
  });

  it("keeps at most eight, removes the rest, and disposeRunDirs removes the kept ones", async () => {
    const dirs = Array.from({ length: 10 }, (_, i) => path.join(runs, `run-${i}`));
    for (const dir of dirs) makeRunDir(dir);
    for (const dir of dirs) await releaseRunDir(dir);
    expect((await readdir(runs)).length).toBe(8);
    await disposeRunDirs();
    expect(await readdir(runs)).toEqual([]);
  });
});
