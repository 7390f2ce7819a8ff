/**
 * Container detection (sandbox-host.ts) on prepared roots for each runtime's signs, and the
 * real host: its cgroup verdict agrees with the driver's own cgroup plan.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { detectCgroupPlan } from "../src/cgroup-limits.ts";
import { CONTAINER_DETECTION_DEFAULTS, detectContainer, detectSandboxHost } from "../src/sandbox-host.ts";

const roots: string[] = [];
afterEach(async () => {
  for (const root of roots.splice(0)) await rm(root, { recursive: true, force: true });
});

async function fakeRoot(files: Record<string, string>): Promise<string> {
  const root = await mkdtemp(path.join(tmpdir(), "overseer-sandbox-host-"));
  roots.push(root);
  for (const [name, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(root, name)), { recursive: true });
    await writeFile(path.join(root, name), content);
  }
  return root;
}

describe("detectContainer", () => {
  it("finds no container on a root without any sign", async () => {
    const root = await fakeRoot({ "proc/1/cgroup": "0::/init.scope\n" });
    expect(await detectContainer({ root, env: {} })).toEqual({
      container: false,
      runtime: null,
      evidence: [],
    });
  });

  it("recognises Docker by /.dockerenv and its cgroup path", async () => {
    const root = await fakeRoot({ ".dockerenv": "", "proc/1/cgroup": "12:pids:/docker/4f2a9c\n0::/\n" });
    expect(await detectContainer({ root, env: {} })).toEqual({
      container: true,
      runtime: "docker",
      evidence: ["/.dockerenv", "/proc/1/cgroup: 12:pids:/docker/4f2a9c"],
    });
  });

  it("recognises Podman, Kubernetes and a runtime named only by the container variable", async () => {
    const podman = await fakeRoot({ "run/.containerenv": "engine=podman\n" });
    expect(await detectContainer({ root: podman, env: {} })).toMatchObject({
      container: true,
      runtime: "podman",
    });
    const k8s = await fakeRoot({ "proc/1/cgroup": "0::/kubepods/besteffort/pod1/abc\n", ".dockerenv": "" });
    expect(await detectContainer({ root: k8s, env: {} })).toMatchObject({
      container: true,
      runtime: "kubernetes",
    });
    const lxc = await fakeRoot({});
    expect(await detectContainer({ root: lxc, env: { container: "lxc" } })).toEqual({
      container: true,
      runtime: "lxc",
      evidence: ["container=lxc"],
    });
  });
});

describe("detectSandboxHost on this machine", () => {
  it("says whether per-run cgroup limits are delegated, as the driver's cgroup plan finds them", async () => {
    // One after the other: each look creates and removes the per-worker parent cgroup.
    const host = await detectSandboxHost();
    const plan = await detectCgroupPlan();
    const controllers = (["pids", "memory", "cpu"] as const).filter((c) => plan[c] !== null);
    expect(host.cgroups.controllers).toEqual(controllers);
    expect(host.cgroups.delegated).toBe(controllers.length > 0);
    expect(host.summary).toContain(host.container.container ? "inside a container" : "on the host");
    expect(host.summary).toContain(
      host.cgroups.delegated ? "per-run cgroup limits enforced here" : "NOT enforced",
    );
  });
});

describe("CONTAINER_DETECTION_DEFAULTS", () => {
  it("looks at the host's own root unless told otherwise", async () => {
    expect(CONTAINER_DETECTION_DEFAULTS).toEqual({ root: "/" });
    expect(Object.isFrozen(CONTAINER_DETECTION_DEFAULTS)).toBe(true);
    expect(await detectContainer({ env: {} })).toEqual(await detectContainer({ root: "/", env: {} }));
  });
});
