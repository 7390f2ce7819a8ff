import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { KeptDirs } from "../src/index.ts";

let parent = "";
afterEach(() => rmSync(parent, { recursive: true, force: true }));

function used(name: string, files: Record<string, string>): string {
  const dir = path.join(parent, name);
  mkdirSync(dir);
  for (const [file, text] of Object.entries(files)) writeFileSync(path.join(dir, file), text);
  mkdirSync(path.join(dir, "sub"));
  writeFileSync(path.join(dir, "sub", "f"), "x");
  return dir;
}

describe("KeptDirs", () => {
  it("keeps a released dir emptied and renames it to the next use; none kept, none taken", async () => {
    parent = mkdtempSync(path.join(tmpdir(), "overseer-kept-"));
    const kept = new KeptDirs(8);
    expect(kept.take(parent, path.join(parent, "first"))).toBeNull();
    await kept.release(used("a", { lock: "1" }));
    expect(readdirSync(parent)).toEqual(["a"]);
    expect(kept.take(parent, path.join(parent, "b"))).toEqual([]);
    expect(readdirSync(parent)).toEqual(["b"]);
    expect(readdirSync(path.join(parent, "b"))).toEqual([]);
    expect(kept.take(parent, path.join(parent, "c"))).toBeNull();
  });

  it("keeps spared entries of the right content only, and hands their names to the taker", async () => {
    parent = mkdtempSync(path.join(tmpdir(), "overseer-kept-"));
    const kept = new KeptDirs(
      8,
      (dir, name) => name === "same" && readFileSync(path.join(dir, name), "utf8") === "ok",
    );
    await kept.release(used("good", { same: "ok", other: "1" }));
    await kept.release(used("bad", { same: "changed" }));
    expect(readdirSync(path.join(parent, "good"))).toEqual(["same"]);
    expect(readdirSync(path.join(parent, "bad"))).toEqual([]);
    expect(kept.take(parent, path.join(parent, "x"))).toEqual([]);
    expect(kept.take(parent, path.join(parent, "y"))).toEqual(["same"]);
  });

  it("never hands out a dir written to since it was kept, removes what is past its bound, and disposes the rest", async () => {
    parent = mkdtempSync(path.join(tmpdir(), "overseer-kept-"));
    const kept = new KeptDirs(2);
    for (const name of ["a", "b", "c"]) await kept.release(used(name, {}));
    expect(readdirSync(parent).sort()).toEqual(["a", "b"]);
    writeFileSync(path.join(parent, "b", "stray.lock"), "");
    expect(kept.take(parent, path.join(parent, "next"))).toEqual([]);
    expect(existsSync(path.join(parent, "b"))).toBe(false);
    expect(readdirSync(parent)).toEqual(["next"]);
    await kept.release(path.join(parent, "gone"));
    await kept.release(used("d", {}));
    await kept.dispose();
    expect(readdirSync(parent)).toEqual(["next"]);
  });
});
