import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { buildHostLauncher } from "../src/launcher-script.ts";

const base = {
  bwrapPath: "/usr/bin/bwrap",
  argsFile: "/nonexistent",
  procsFiles: [],
  cpuSeconds: 60,
  addressSpaceKb: null,
  seccompFile: null,
};

describe("buildHostLauncher: RLIMIT_FSIZE", () => {
  it("sets the file size cap in the unit each shell counts (bash 1024 bytes, POSIX sh 512)", () => {
    expect(buildHostLauncher({ ...base, bash: true, fileSizeBytes: 64 * 1024 * 1024 })).toContain(
      "ulimit -f 65536 ||",
    );
    expect(buildHostLauncher({ ...base, bash: false, fileSizeBytes: 64 * 1024 * 1024 })).toContain(
      "ulimit -f 131072 ||",
    );
    expect(buildHostLauncher({ ...base, bash: true })).not.toContain("ulimit -f");
  });

  it("the cap it sets is the one the kernel enforces on a write", async () => {
    for (const [shell, bash] of [
      ["/bin/bash", true],
      ["/bin/sh", false],
    ] as const) {
      const script = buildHostLauncher({ ...base, bash, fileSizeBytes: 1024 * 1024 });
      // Everything before the fd setup that needs the args file: the rlimit lines, then a probe.
      const limits = script.split("\n").filter((line) => line.startsWith("ulimit"));
      const probe = await execa(shell, ["-c", `${limits.join("\n")}\nulimit -f`]);
      expect(Number(probe.stdout) * (bash ? 1024 : 512)).toBe(1024 * 1024);
    }
  });
});

describe("buildHostLauncher: bwrap's environment", () => {
  it("bash execs bwrap with an empty environment (exec -c); POSIX sh relies on the env -i before it", async () => {
    const script = buildHostLauncher({
      ...base,
      bash: true,
      bwrapPath: "/usr/bin/env",
      argsFile: "/dev/null",
    });
    expect(script).toContain("exec -c '/usr/bin/env' --args 3");
    expect(buildHostLauncher({ ...base, bash: false })).toContain("exec '/usr/bin/bwrap' --args 3");
    // The launcher with /usr/bin/env standing in for bwrap: it prints what bwrap would get.
    const run = await execa("/bin/bash", ["--norc", "--noprofile", "-p", "-c", script, "launcher"], {
      env: { WORKER_SECRET: "s3cret", PATH: "/usr/bin:/bin" },
      extendEnv: false,
      reject: false,
    });
    expect(run.stdout).not.toContain("WORKER_SECRET");
    expect(run.stdout).not.toContain("PATH=");
  });
});
