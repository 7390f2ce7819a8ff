import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildHostRootfs } from "@overseer/test-support";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { SandboxSpecError } from "../src/index.ts";
import {
  createWorkspace,
  disposeDrivers,
  fingerprintTree,
  newDriver,
  runShell,
  type SandboxWorkspace,
} from "./helpers/sandbox-fixture.ts";

/**
 * A run on an image: the sandbox's system is the unpacked image (spec.rootfs), not the host's.
 * The rootfs here is a small one made from host binaries (dash, coreutils, python3); the image
 * cache and the registry are covered by test/images.
 */

let rootfs: string;
let ws: SandboxWorkspace;
const driver = newDriver();

beforeAll(async () => {
  rootfs = join(await mkdtemp(join(tmpdir(), "overseer-rootfs-test-")), "rootfs");
  await buildHostRootfs({
    dir: rootfs,
    programs: ["/usr/bin/sh", "/usr/bin/cat", "/usr/bin/ls", "/usr/bin/id", "/usr/bin/touch", "/usr/bin/env"],
    files: {
      "/etc/image-marker": "from-the-image\n",
      "/etc/passwd": "root:x:0:0:root:/root:/bin/sh\nimageuser:x:1000:1000::/home/imageuser:/bin/sh\n",
      "/etc/shadow": "root:secret-of-the-image:::::::\n",
      "/opt/tool/bin/hello": "#!/bin/sh\necho hello from /opt\n",
    },
  });
}, 60_000);

afterAll(async () => {
  await disposeDrivers();
  await rm(join(rootfs, ".."), { recursive: true, force: true });
});

beforeEach(async () => {
  ws = await createWorkspace();
});

afterEach(async () => {
  await ws.dispose();
});

describe("BwrapDriver on an image rootfs", () => {
  it("runs with the image's /usr, /opt and /etc instead of the host's, the checkout writable", async () => {
    const before = await fingerprintTree([rootfs]);
    const script = [
      "cat /etc/image-marker",
      "test -e /usr/bin/git && echo host-git-visible || echo no-git",
      "sh /opt/tool/bin/hello",
      "id -u",
      "touch /usr/bin/planted 2>/dev/null && echo usr-writable || echo usr-read-only",
      "touch /opt/planted 2>/dev/null && echo opt-writable || echo opt-read-only",
      "echo made-inside > result.txt",
    ].join("; ");
    const result = await runShell(driver, script, ws.spec({ rootfs }));
    expect(result.stderr).toBe("");
    expect(result.stdout.split("\n")).toEqual([
      "from-the-image",
      "no-git",
      "hello from /opt",
      "1000",
      "usr-read-only",
      "opt-read-only",
      "",
    ]);
    expect(await readFile(join(ws.checkout, "result.txt"), "utf8")).toBe("made-inside\n");
    expect(await fingerprintTree([rootfs])).toEqual(before);
  });

  it("binds a host directory under /opt next to the image's /opt (a worker installed in /opt/overseer)", async () => {
    const hostOpt = await mkdtemp("/opt/overseer-rootfs-test-");
    try {
      await writeFile(join(hostOpt, "tool.txt"), "from the worker's /opt\n");
      const script = `cat ${hostOpt}/tool.txt; sh /opt/tool/bin/hello; touch ${hostOpt}/x 2>/dev/null || echo read-only`;
      const result = await runShell(
        driver,
        script,
        ws.spec({ rootfs, readOnlyBinds: [...(ws.spec().readOnlyBinds ?? []), hostOpt] }),
      );
      expect(result.stderr).toBe("");
      expect(result.stdout.split("\n")).toEqual([
        "from the worker's /opt",
        "hello from /opt",
        "read-only",
        "",
      ]);
    } finally {
      await rm(hostOpt, { recursive: true, force: true });
    }
  });

  it("keeps the accounts synthetic and places the spec's commands in the image's /bin", async () => {
    const tool = join(ws.root, "overseer-tool");
    await writeFile(tool, "#!/bin/sh\necho placed command\n", { mode: 0o755 });
    const result = await runShell(
      driver,
      "cat /etc/passwd; test -e /etc/shadow && echo shadow-visible || echo no-shadow; env -i overseer-tool",
      ws.spec({ rootfs, commands: { "overseer-tool": tool } }),
    );
    expect(result.stdout).toContain("agent:x:1000:1000:Overseer agent:/home/agent:/bin/sh");
    expect(result.stdout).not.toContain("imageuser");
    expect(result.stdout).toContain("no-shadow");
    expect(result.stdout).toContain("placed command");
  });

  it("refuses a rootfs without /usr, and proxy mode on an image without node", async () => {
    const empty = await mkdtemp(join(ws.root, "empty-rootfs-"));
    await expect(runShell(driver, "true", ws.spec({ rootfs: empty }))).rejects.toThrow(SandboxSpecError);
    await expect(
      runShell(driver, "true", ws.spec({ rootfs, network: { mode: "proxy", allowHosts: ["example.com"] } })),
    ).rejects.toThrow(/needs node at \/usr\/bin\/node in the image/);
  });
});
