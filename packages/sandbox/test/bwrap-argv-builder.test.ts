import { describe, expect, it } from "vitest";
import {
  type BwrapBuildInput,
  buildBwrapArgs,
  orderUserMounts,
  type UserMount,
  withoutCoveredBinds,
} from "../src/bwrap-argv-builder.ts";
import { parseSandboxSpec } from "../src/index.ts";

function input(overrides: Partial<BwrapBuildInput> = {}): BwrapBuildInput {
  return {
    spec: parseSandboxSpec({
      checkoutDir: "/data/wt/run1",
      controlDir: "/data/control/run1",
      env: { PATH: "/usr/bin" },
      limits: { tmpfsBytes: 1048576 },
    }),
    uid: 1000,
    gid: 1000,
    layout: {
      topLevel: [
        { path: "/bin", kind: "symlink", target: "usr/bin" },
        { path: "/lib64", kind: "dir" },
      ],
      etcEntries: ["hosts"],
      procReadOnly: ["sys", "sysrq-trigger"],
      procMasked: ["kcore"],
    },
    userMounts: [
      { kind: "bind", source: "/data/wt/run1", dest: "/data/wt/run1", writable: true },
      { kind: "bind", source: "/data/control/run1", dest: "/data/control/run1", writable: true },
    ],
    files: {
      etcDir: "/rt/etc-1",
      etcBinds: [{ source: "/etc/alternatives", dest: "/etc/alternatives" }],
      runtimeDir: null,
      controlDir: "/data/control/run1",
      binDir: null,
      commands: [],
      seccompFd: 4,
    },
    env: { PATH: "/usr/bin", HOME: "/home/agent" },
    ...overrides,
  };
}

/** Index of the option `flag` followed by exactly `values`. */
function indexOf(args: readonly string[], ...tokens: string[]): number {
  for (let i = 0; i <= args.length - tokens.length; i++) {
    if (tokens.every((token, j) => args[i + j] === token)) return i;
  }
  return -1;
}

describe("buildBwrapArgs", () => {
  const args = buildBwrapArgs(input());

  it.each([
    ["--unshare-all"],
    ["--unshare-user", "--uid", "1000", "--gid", "1000"],
    ["--disable-userns"],
    ["--cap-drop", "ALL"],
    ["--die-with-parent"],
    ["--new-session"],
    ["--clearenv"],
    ["--setenv", "HOME", "/home/agent"],
    ["--setenv", "PATH", "/usr/bin"],
    ["--ro-bind", "/usr", "/usr"],
    ["--symlink", "usr/bin", "/bin"],
    ["--ro-bind", "/lib64", "/lib64"],
    ["--ro-bind", "/rt/etc-1", "/etc", "--ro-bind", "/etc/alternatives", "/etc/alternatives"],
    ["--proc", "/proc"],
    ["--ro-bind", "/proc/sys", "/proc/sys"],
    ["--ro-bind", "/proc/sysrq-trigger", "/proc/sysrq-trigger"],
    ["--ro-bind", "/dev/null", "/proc/kcore"],
    ["--dev", "/dev"],
    ["--size", "1048576", "--tmpfs", "/tmp"],
    ["--size", "1048576", "--tmpfs", "/home/agent"],
    ["--size", "1048576", "--tmpfs", "/dev/shm"],
    ["--bind", "/data/wt/run1", "/data/wt/run1"],
    ["--bind", "/data/control/run1", "/data/control/run1"],
    ["--bind", "/data/control/run1", "/overseer/control"],
    ["--remount-ro", "/"],
    ["--chdir", "/data/wt/run1"],
    ["--seccomp", "4"],
  ])("contains %j", (...tokens) => {
    expect(indexOf(args, ...tokens)).toBeGreaterThanOrEqual(0);
  });

  it("never shares the network, never binds host /, /root, /run or /tmp", () => {
    expect(args).not.toContain("--share-net");
    expect(indexOf(args, "--ro-bind", "/", "/")).toBe(-1);
    expect(indexOf(args, "--bind", "/", "/")).toBe(-1);
    for (const hidden of ["/root", "/run", "/var/run", "/tmp", "/var/lib"]) {
      expect(indexOf(args, "--ro-bind", hidden, hidden)).toBe(-1);
      expect(indexOf(args, "--bind", hidden, hidden)).toBe(-1);
    }
  });

  it("mounts procfs before re-binding its knobs, tmpfs /tmp before binds under /tmp, remounts / last", () => {
    const withTmpCheckout = buildBwrapArgs(
      input({ userMounts: [{ kind: "bind", source: "/tmp/x/co", dest: "/tmp/x/co", writable: true }] }),
    );
    expect(indexOf(withTmpCheckout, "--proc", "/proc")).toBeLessThan(
      indexOf(withTmpCheckout, "--ro-bind", "/proc/sys", "/proc/sys"),
    );
    expect(indexOf(withTmpCheckout, "--tmpfs", "/tmp")).toBeLessThan(
      indexOf(withTmpCheckout, "--bind", "/tmp/x/co", "/tmp/x/co"),
    );
    expect(indexOf(withTmpCheckout, "--remount-ro", "/")).toBeGreaterThan(
      indexOf(withTmpCheckout, "--bind", "/tmp/x/co", "/tmp/x/co"),
    );
  });

  it("binds the egress runtime dir at /overseer in proxy mode", () => {
    const proxied = buildBwrapArgs(
      input({ files: { ...input().files, runtimeDir: "/rt/run/mount", seccompFd: null } }),
    );
    expect(indexOf(proxied, "--ro-bind", "/rt/run/mount", "/overseer")).toBeGreaterThan(0);
    // The control dir's fixed bind lands on the mount point inside that read-only bind, after it.
    expect(indexOf(proxied, "--bind", "/data/control/run1", "/overseer/control")).toBeGreaterThan(
      indexOf(proxied, "--ro-bind", "/rt/run/mount", "/overseer"),
    );
    expect(proxied).not.toContain("--seccomp");
    expect(proxied).not.toContain("--share-net");
  });
});

describe("buildBwrapArgs: commands for a process without environment", () => {
  it("replaces the merged-/usr /bin symlink with the read-only bin dir and binds each command over its placeholder", () => {
    const commands = [{ name: "overseer-agent", source: "/opt/overseer/bin/overseer-agent" }];
    const args = buildBwrapArgs(input({ files: { ...input().files, binDir: "/rt/bin-1", commands } }));
    expect(indexOf(args, "--symlink", "usr/bin", "/bin")).toBe(-1);
    const bin = indexOf(args, "--ro-bind", "/rt/bin-1", "/bin");
    const command = indexOf(args, "--ro-bind", "/opt/overseer/bin/overseer-agent", "/bin/overseer-agent");
    expect(bin).toBeGreaterThan(indexOf(args, "--ro-bind", "/usr", "/usr"));
    expect(command).toBeGreaterThan(bin);
    expect(indexOf(args, "--bind", "/opt/overseer/bin/overseer-agent", "/bin/overseer-agent")).toBe(-1);
  });

  it("keeps /bin as it is when there is no bin dir (no commands, or /bin is not a merged-/usr symlink)", () => {
    const commands = [{ name: "overseer-agent", source: "/opt/overseer/bin/overseer-agent" }];
    const args = buildBwrapArgs(input({ files: { ...input().files, commands } }));
    expect(indexOf(args, "--symlink", "usr/bin", "/bin")).toBeGreaterThan(0);
    expect(args).not.toContain("/bin/overseer-agent");
  });
});

describe("orderUserMounts", () => {
  it("puts parents before children, read-only before writable, masks last at equal depth", () => {
    const mounts: UserMount[] = [
      { kind: "mask", dest: "/a/b/secret", isDirectory: true },
      { kind: "bind", source: "/a/b", dest: "/a/b", writable: true },
      { kind: "bind", source: "/a/b/vendor", dest: "/a/b/vendor", writable: false },
      { kind: "bind", source: "/a", dest: "/a", writable: false },
    ];
    expect(orderUserMounts(mounts).map((m) => m.dest)).toEqual(["/a", "/a/b", "/a/b/vendor", "/a/b/secret"]);
  });
});

describe("withoutCoveredBinds", () => {
  const ro = (source: string, dest = source): Extract<UserMount, { kind: "bind" }> => ({
    kind: "bind",
    source,
    dest,
    writable: false,
  });
  const mirror = ro("/data/mirrors/p.git");
  const admin = ro("/data/mirrors/p.git/worktrees/run1");

  it("drops a read-only bind that an outer read-only bind shows at the same place (a worktree's admin dir in its mirror)", () => {
    const mounts = [mirror, admin, ro("/opt/overseer/bin")];
    expect(withoutCoveredBinds(mounts)).toEqual([mirror, ro("/opt/overseer/bin")]);
    expect(withoutCoveredBinds([admin, mirror])).toEqual([mirror]);
    // bwrap is asked for one bind fewer; the agent's view of the admin dir is the mirror's.
    const args = buildBwrapArgs(input({ userMounts: [...input().userMounts, mirror, admin] }));
    expect(indexOf(args, "--ro-bind", mirror.source, mirror.dest)).toBeGreaterThan(-1);
    expect(args).not.toContain(admin.dest);
  });

  it("keeps one of two identical binds", () => {
    expect(withoutCoveredBinds([mirror, ro("/data/mirrors/p.git")])).toHaveLength(1);
  });

  it.each<[string, UserMount[]]>([
    [
      "a mask lies between them",
      [{ kind: "mask", dest: "/data/mirrors/p.git/worktrees", isDirectory: true }],
    ],
    [
      "a mask hides the outer bind's own place",
      [{ kind: "mask", dest: "/data/mirrors/p.git", isDirectory: true }],
    ],
    [
      "a writable bind lies between them",
      [{ ...ro("/srv/other", "/data/mirrors/p.git/worktrees"), writable: true }],
    ],
    ["another read-only bind lies between them", [ro("/srv/other", "/data/mirrors/p.git/worktrees")]],
  ])("keeps the inner bind when %s", (_, others) => {
    const mounts = [mirror, ...others, admin];
    expect(withoutCoveredBinds(mounts)).toEqual(mounts);
  });

  it.each<[string, UserMount, UserMount]>([
    ["the inner bind is writable", mirror, { ...admin, writable: true }],
    ["the outer bind is writable", { ...mirror, writable: true }, admin],
    ["the inner source is elsewhere (a symlinked path)", mirror, ro("/srv/admin", admin.dest)],
    ["the outer bind shows another source there", ro("/srv/mirror", mirror.dest), admin],
    ["the paths only share a prefix", ro("/data/mirrors/p"), ro("/data/mirrors/p.git")],
  ])("keeps both when %s", (_, outer, inner) => {
    expect(withoutCoveredBinds([outer, inner])).toEqual([outer, inner]);
  });
});
