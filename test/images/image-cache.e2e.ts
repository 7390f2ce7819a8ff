import { existsSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { ImageCache, ImagePullError } from "@overseer/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { baseImage, imagesSuiteSkipReason, pythonImage, TestRegistry } from "./test-registry.ts";

/**
 * The worker's image cache against a real registry (docker-registry on loopback): skopeo pulls,
 * umoci unpacks, one rootfs per digest, concurrent pulls, LRU eviction that spares live runs.
 */

const skip = await imagesSuiteSkipReason();
if (skip) console.warn(`images suite skipped: ${skip}`);

describe.skipIf(skip !== null)("image cache", () => {
  const registry = new TestRegistry();
  let dir: string;
  let base: { reference: string; digest: string };
  let python: { reference: string; digest: string };
  const cache = (options: { maxBytes?: number; insecure?: boolean } = {}) =>
    new ImageCache({
      dir,
      ...(options.maxBytes === undefined ? {} : { maxBytes: options.maxBytes }),
      insecureRegistries: options.insecure === false ? [] : [registry.host],
    });

  beforeAll(async () => {
    await registry.start();
    base = await registry.push(baseImage());
    python = await registry.push(pythonImage());
    dir = await mkdtemp(path.join(tmpdir(), "overseer-image-cache-"));
  }, 300_000);

  afterAll(async () => {
    await registry.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("resolves a tag to the pushed digest, unpacks it once and serves the same rootfs afterwards", async () => {
    const first = await cache().acquire(python.reference);
    expect(first.digest).toBe(python.digest);
    expect(first.pulled).toBe(true);
    expect(first.rootfs).toBe(path.join(dir, "images", python.digest.slice(7), "rootfs"));
    expect(await readFile(path.join(first.rootfs, "etc/overseer-test-image"), "utf8")).toBe("python\n");
    expect(existsSync(path.join(first.rootfs, "usr/lib/python3.11/json/__init__.py"))).toBe(true);
    expect(first.config.env).toMatchObject({ LANG: "C.UTF-8", PYTHONDONTWRITEBYTECODE: "1" });
    expect(first.config.uid).toBe(1000);
    expect(first.sizeBytes).toBeGreaterThan(10 * 1024 * 1024);
    // Another worker process (a new cache object) and a digest reference: a hit, no registry call.
    const again = await cache().acquire(`${registry.host}/overseer-test/python@${python.digest}`);
    expect(again.pulled).toBe(false);
    expect(again.rootfs).toBe(first.rootfs);
    await first.release();
    await again.release();
    expect(await readdir(path.join(dir, "leases"))).toEqual([]);
    expect(await readdir(path.join(dir, "tmp"))).toEqual([]);
  });

  it("pulls an image once when runs of several workers ask for it at the same time", async () => {
    const held = await Promise.all(
      [cache(), cache(), cache(), cache()].map((c) => c.acquire(base.reference)),
    );
    expect(held.filter((h) => h.pulled)).toHaveLength(1);
    expect(new Set(held.map((h) => h.rootfs)).size).toBe(1);
    expect(await readdir(path.join(dir, "leases"))).toHaveLength(4);
    for (const h of held) await h.release();
    expect(await readdir(path.join(dir, "locks"))).toEqual([]);
  });

  it("evicts the least recently used image no run holds once the cache outgrows its bound", async () => {
    const small = cache({ maxBytes: 1 });
    const held = await small.acquire(python.reference);
    // Over the bound, but the one image a run holds stays.
    const before = await small.evict();
    expect(before).toContain(base.digest);
    expect(before).not.toContain(python.digest);
    expect(existsSync(held.rootfs)).toBe(true);
    await held.release();
    expect(await small.evict()).toEqual([python.digest]);
    expect(await readdir(path.join(dir, "images"))).toEqual([]);
    // A lease of a dead process holds nothing.
    const again = await small.acquire(base.reference);
    expect(again.pulled).toBe(true);
    await again.release();
    await writeFile(path.join(dir, "leases", `${base.digest.slice(7)}.999999999.1`), "");
    expect(await small.evict()).toEqual([base.digest]);
  });

  it("says what failed for an unknown tag and for a plain-HTTP registry not allowed", async () => {
    const missing = cache().acquire(`${registry.host}/overseer-test/python:no-such-tag`);
    await expect(missing).rejects.toThrow(ImagePullError);
    await expect(missing).rejects.toThrow(/cannot resolve image .*no-such-tag/);
    await expect(cache({ insecure: false }).acquire(base.reference)).rejects.toThrow(/https|http response/i);
  });
});
