import { describe, expect, it } from "vitest";
import type { BwrapHostLayout } from "../src/bwrap-argv-builder.ts";
import {
  buildGvisorConfig,
  buildGvisorLauncher,
  buildRunscArgs,
  type GvisorBundleInput,
  skeletonEntries,
} from "../src/gvisor-bundle.ts";
import { parseSandboxSpec } from "../src/sandbox-spec-schema.ts";

/** The OCI bundle of a gVisor run, read as policy (no runsc needed). */

const hostLayout: BwrapHostLayout = {
  topLevel: [
    { path: "/bin", kind: "symlink", target: "usr/bin" },
    { path: "/lib", kind: "symlink", target: "usr/lib" },
    { path: "/lib64", kind: "dir" },
  ],
  etcEntries: ["hosts"],
  procReadOnly: ["sys"],
  procMasked: ["kcore"],
};

function input(overrides: Partial<GvisorBundleInput> = {}): GvisorBundleInput {
  const spec = parseSandboxSpec({
    runId: "r1",
    checkoutDir: "/data/work/p1/checkout",
    controlDir: "/data/work/p1/control",
    env: { PATH: "/usr/bin:/bin" },
    limits: {
      pidsMax: 64,
      memoryBytes: 256 * 1024 ** 2,
      cpuSeconds: 600,
      tmpfsBytes: 64 * 1024 ** 2,
      fileSizeBytes: 4096,
    },
  });
  return {
    spec,
    argv: ["/bin/sh", "-c", "echo hi"],
    layout: hostLayout,
    userMounts: [
      { kind: "bind", source: "/data/work/p1/checkout", dest: "/data/work/p1/checkout", writable: true },
      { kind: "bind", source: "/data/work/p1/control", dest: "/data/work/p1/control", writable: true },
      { kind: "bind", source: "/data/mirror/git", dest: "/data/mirror/git", writable: false },
      { kind: "mask", dest: "/usr/share/secret", isDirectory: true },
    ],
    files: {
      rootDir: "/rt/run-1/bundle/root",
      etcDir: "/rt/etc-1",
      etcBinds: [{ source: "/etc/alternatives", dest: "/etc/alternatives" }],
      runtimeDir: null,
      controlDir: "/data/work/p1/control",
      binDir: null,
      commands: [],
    },
    env: { PATH: "/usr/bin:/bin", HOME: "/home/agent" },
    memoryCgroup: true,
    ...overrides,
  };
}

describe("buildGvisorConfig", () => {
  it("runs the argv as gVisor's uid 0 without capabilities, in the checkout, with exactly the given env", () => {
    const config = buildGvisorConfig(input());
    expect(config.process).toMatchObject({
      user: { uid: 0, gid: 0 },
      args: ["/bin/sh", "-c", "echo hi"],
      env: ["HOME=/home/agent", "PATH=/usr/bin:/bin"],
      cwd: "/data/work/p1/checkout",
      noNewPrivileges: true,
      capabilities: { bounding: [], effective: [], permitted: [], inheritable: [], ambient: [] },
    });
    expect(config.root).toEqual({ path: "/rt/run-1/bundle/root", readonly: true });
    expect(config.linux.namespaces.map((n) => n.type)).toEqual(["pid", "ipc", "uts", "mount", "network"]);
  });

  it("sets the run's limits as rlimits gVisor's kernel enforces (RLIMIT_AS only without a memory cgroup)", () => {
    const withCgroup = buildGvisorConfig(input()).process.rlimits.map((r) => `${r.type}=${r.hard}`);
    expect(withCgroup).toEqual(["RLIMIT_NPROC=64", "RLIMIT_CPU=600", "RLIMIT_CORE=0", "RLIMIT_FSIZE=4096"]);
    const without = buildGvisorConfig(input({ memoryCgroup: false })).process.rlimits.map((r) => r.type);
    expect(without).toContain("RLIMIT_AS");
  });

  it("binds the system read-only, only the checkout and control dir writable, masks over binds", () => {
    const mode = (options?: string[]) =>
      options?.includes("rw") ? "rw" : options?.includes("ro") ? "ro" : "";
    const mounts = buildGvisorConfig(input()).mounts.map((m) =>
      [m.destination, m.type, m.type === "bind" ? m.source : "", mode(m.options)].filter(Boolean).join(" "),
    );
    expect(mounts).toEqual([
      "/proc proc",
      "/dev tmpfs",
      "/dev/shm tmpfs",
      "/usr bind /usr ro",
      "/lib64 bind /lib64 ro",
      "/etc bind /rt/etc-1 ro",
      "/etc/alternatives bind /etc/alternatives ro",
      "/tmp tmpfs",
      "/home/agent tmpfs",
      "/overseer/control bind /data/work/p1/control rw",
      "/data/mirror/git bind /data/mirror/git ro",
      "/usr/share/secret tmpfs ro",
      "/data/work/p1/checkout bind /data/work/p1/checkout rw",
      "/data/work/p1/control bind /data/work/p1/control rw",
    ]);
    const tmp = buildGvisorConfig(input()).mounts.find((m) => m.destination === "/tmp");
    expect(tmp?.options).toContain(`size=${64 * 1024 ** 2}`);
  });

  it("takes the system from an image's rootfs and adds the egress socket mount in proxy mode", () => {
    const config = buildGvisorConfig(
      input({
        layout: { ...hostLayout, systemRoot: "/cache/sha256-abc/rootfs" },
        files: { ...input().files, runtimeDir: "/rt/run-1/mount" },
      }),
    );
    expect(config.mounts.find((m) => m.destination === "/usr")?.source).toBe("/cache/sha256-abc/rootfs/usr");
    expect(config.mounts.find((m) => m.destination === "/overseer")).toMatchObject({
      source: "/rt/run-1/mount",
      options: expect.arrayContaining(["ro"]),
    });
  });
});

describe("skeletonEntries", () => {
  it("creates mount points for top-level mounts only, the merged-usr symlinks and /var/tmp", () => {
    const config = buildGvisorConfig(input({ files: { ...input().files, runtimeDir: "/rt/run-1/mount" } }));
    const entries = skeletonEntries(config, hostLayout, new Set()).map((e) =>
      e.kind === "symlink" ? `${e.path} -> ${e.target}` : `${e.path}/`,
    );
    expect(entries).toContain("/bin -> usr/bin");
    expect(entries).toContain("/var/tmp -> /tmp");
    expect(entries).toContain("/data/work/p1/checkout/");
    // Inside the /overseer bind: the runtime dir holds its own mount point.
    expect(entries).not.toContain("/overseer/control/");
    // Inside the /usr bind: nothing is created in the skeleton.
    expect(entries).not.toContain("/usr/share/secret/");
    expect(entries.indexOf("/data/")).toBeLessThan(entries.indexOf("/data/work/"));
  });
});

describe("runsc command", () => {
  it("runs one container with its own state dir, no network, and the unix socket only in proxy mode", () => {
    const args = buildRunscArgs({
      stateDir: "/rt/run-1/state",
      bundleDir: "/rt/run-1/bundle",
      containerId: "overseer-r1-abcd",
      platform: "ptrace",
      rootless: false,
      egressSocket: false,
    });
    expect(args).toEqual([
      "--root",
      "/rt/run-1/state",
      "--network=none",
      "--ignore-cgroups",
      "--platform=ptrace",
      "run",
      "--bundle",
      "/rt/run-1/bundle",
      "overseer-r1-abcd",
    ]);
    const proxied = buildRunscArgs({
      stateDir: "/s",
      bundleDir: "/b",
      containerId: "c",
      platform: "systrap",
      rootless: true,
      egressSocket: true,
    });
    expect(proxied).toContain("--rootless");
    expect(proxied).toContain("--host-uds=open");
  });

  it("joins every run cgroup before exec'ing runsc, and aborts with 125 when a join fails", () => {
    const script = buildGvisorLauncher({
      runscPath: "/usr/bin/runsc",
      procsFiles: ["/sys/fs/cgroup/memory/overseer/run-1/cgroup.procs"],
    });
    expect(script.split("\n")).toEqual([
      "exec 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&-",
      "echo $$ > '/sys/fs/cgroup/memory/overseer/run-1/cgroup.procs' || { echo 'overseer-gvisor: cannot join cgroup /sys/fs/cgroup/memory/overseer/run-1/cgroup.procs' >&2; exit 125; }",
      "ulimit -c 0",
      `exec '/usr/bin/runsc' "$@"`,
    ]);
  });
});
