import { mkdir, mkdtemp, readdir, readFile, readlink, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createEtcSnapshot, ETC_COPY_LIMIT } from "../src/etc-snapshot.ts";

let work: string;

beforeEach(async () => {
  work = await mkdtemp(join(tmpdir(), "overseer-etc-snapshot-"));
});

afterEach(async () => {
  await rm(work, { recursive: true, force: true });
});

/** A source /etc: a large directory of symlinks, a small one, a symlink to a directory, a file. */
async function sourceEtc(): Promise<string> {
  const etc = join(work, "etc");
  await mkdir(join(etc, "alternatives"), { recursive: true });
  for (let i = 0; i <= ETC_COPY_LIMIT; i++)
    await symlink(`/usr/bin/tool-${i}`, join(etc, "alternatives", `t${i}`));
  await mkdir(join(etc, "ld.so.conf.d"));
  await writeFile(join(etc, "ld.so.conf.d", "x86_64.conf"), "/usr/lib/x86_64\n");
  await mkdir(join(etc, "pki", "tls", "certs"), { recursive: true });
  await writeFile(join(etc, "pki", "tls", "certs", "bundle.crt"), "PEM\n");
  await mkdir(join(etc, "ssl"));
  await symlink("../pki/tls/certs", join(etc, "ssl", "certs"));
  await writeFile(join(etc, "hosts"), "127.0.0.1 localhost\n");
  return etc;
}

describe("createEtcSnapshot", () => {
  it("copies small entries, keeps symlinks verbatim, and binds a directory over ETC_COPY_LIMIT entries", async () => {
    const source = await sourceEtc();
    const root = join(work, "runtime");
    await mkdir(root);
    const snapshot = await createEtcSnapshot({
      root,
      entries: ["alternatives", "ld.so.conf.d", "ssl/certs", "hosts"],
      source,
      uid: 1000,
      gid: 1000,
      home: "/home/agent",
    });
    expect(snapshot.binds).toEqual([{ source: join(source, "alternatives"), dest: "/etc/alternatives" }]);
    // The large directory is an empty mount point; nothing of it was copied.
    expect(await readdir(join(snapshot.dir, "alternatives"))).toEqual([]);
    expect(await readFile(join(snapshot.dir, "ld.so.conf.d", "x86_64.conf"), "utf8")).toBe(
      "/usr/lib/x86_64\n",
    );
    expect(await readlink(join(snapshot.dir, "ssl", "certs"))).toBe("../pki/tls/certs");
    expect(await readFile(join(snapshot.dir, "hosts"), "utf8")).toBe("127.0.0.1 localhost\n");
    expect(await readFile(join(snapshot.dir, "passwd"), "utf8")).toContain(":1000:1000:");
  });

  it("copies a directory of exactly ETC_COPY_LIMIT entries", async () => {
    const source = await sourceEtc();
    await rm(join(source, "alternatives", "t0"));
    const root = join(work, "runtime");
    await mkdir(root);
    const snapshot = await createEtcSnapshot({
      root,
      entries: ["alternatives"],
      source,
      uid: 0,
      gid: 0,
      home: "/root",
    });
    expect(snapshot.binds).toEqual([]);
    expect(await readdir(join(snapshot.dir, "alternatives"))).toHaveLength(ETC_COPY_LIMIT);
    expect(await readlink(join(snapshot.dir, "alternatives", "t1"))).toBe("/usr/bin/tool-1");
  });
});
