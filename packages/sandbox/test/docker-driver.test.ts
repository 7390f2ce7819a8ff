import { existsSync } from "node:fs";
import { chmod, mkdir, mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { formatEnvFile, isWritableBy } from "../src/docker-driver.ts";
import {
  buildDockerRunArgs,
  DockerDriver,
  dockerContainerName,
  parseSandboxSpec,
  SandboxSpecError,
} from "../src/index.ts";

/** No Docker engine runs here: these tests check the argv the driver builds and its host-side checks. */

let base: string;
let checkout: string;
let control: string;
let gitDir: string;

beforeEach(async () => {
  base = await mkdtemp(join(tmpdir(), "overseer-docker-test-"));
  checkout = join(base, "checkout");
  control = join(base, "control");
  gitDir = join(base, "gitdir");
  for (const dir of [checkout, control, gitDir]) await mkdir(dir);
  await chmod(checkout, 0o777);
  await chmod(control, 0o777);
});

afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

function valueAfter(args: readonly string[], flag: string): string[] {
  return args.flatMap((arg, i) => (arg === flag ? [args[i + 1] as string] : []));
}

describe("buildDockerRunArgs", () => {
  const spec = () =>
    parseSandboxSpec({
      runId: "run42",
      checkoutDir: "/data/wt/run42",
      controlDir: "/data/control/run42",
      readOnlyBinds: ["/data/mirrors/p.git", "/opt/harness"],
      env: { PATH: "/usr/bin:/bin", API_KEY: "secret-value" },
      limits: {
        pidsMax: 256,
        memoryBytes: 2 * 1024 ** 3,
        cpuSeconds: 900,
        cpus: 1.5,
        tmpfsBytes: 128 * 1024 ** 2,
      },
    });

  it("builds a locked-down docker run", () => {
    const args = buildDockerRunArgs({
      spec: spec(),
      image: "agent:1",
      name: "overseer-run-run42",
      envFile: "/rt/run-1/env",
      runtimeMountDir: null,
      masks: [],
      command: ["codex", "exec", "--full-auto"],
    });
    expect(args.slice(0, 3)).toEqual(["run", "--rm", "--init"]);
    expect(args).toContain("--interactive");
    expect(args).toContain("--read-only");
    expect(valueAfter(args, "--name")).toEqual(["overseer-run-run42"]);
    expect(valueAfter(args, "--user")).toEqual(["65534:65534"]);
    expect(valueAfter(args, "--cap-drop")).toEqual(["ALL"]);
    expect(valueAfter(args, "--security-opt")).toEqual(["no-new-privileges"]);
    expect(valueAfter(args, "--network")).toEqual(["none"]);
    expect(valueAfter(args, "--pids-limit")).toEqual(["256"]);
    expect(valueAfter(args, "--memory")).toEqual([String(2 * 1024 ** 3)]);
    expect(valueAfter(args, "--memory-swap")).toEqual([String(2 * 1024 ** 3)]);
    expect(valueAfter(args, "--cpus")).toEqual(["1.5"]);
    expect(valueAfter(args, "--ulimit")).toEqual(["cpu=900:900", "core=0:0"]);
    expect(valueAfter(args, "--tmpfs")).toEqual([
      `/tmp:rw,nosuid,nodev,size=${128 * 1024 ** 2},mode=1777`,
      `/home/agent:rw,nosuid,nodev,size=${128 * 1024 ** 2},mode=1777`,
    ]);
    expect(valueAfter(args, "--mount")).toEqual([
      "type=bind,src=/data/mirrors/p.git,dst=/data/mirrors/p.git,readonly",
      "type=bind,src=/opt/harness,dst=/opt/harness,readonly",
      "type=bind,src=/data/wt/run42,dst=/data/wt/run42",
      "type=bind,src=/data/control/run42,dst=/data/control/run42",
    ]);
    expect(valueAfter(args, "--workdir")).toEqual(["/data/wt/run42"]);
    expect(valueAfter(args, "--env-file")).toEqual(["/rt/run-1/env"]);
    expect(args.slice(-4)).toEqual(["agent:1", "codex", "exec", "--full-auto"]);
    // Secrets never on the command line.
    expect(args.join(" ")).not.toContain("secret-value");
    expect(args).not.toContain("--env");
    expect(args).not.toContain("--privileged");
  });

  it("uses the spec's uid/gid, omits --cpus when unset, and mounts the egress runtime in proxy mode", () => {
    const resolved = parseSandboxSpec({
      checkoutDir: "/w/c",
      controlDir: "/w/k",
      env: {},
      uid: 1000,
      gid: 1001,
    });
    const args = buildDockerRunArgs({
      spec: resolved,
      image: "img",
      name: "n",
      envFile: "/e",
      runtimeMountDir: "/rt/run-2/mount",
      masks: [
        { path: "/w/c/.secrets", isDirectory: true },
        { path: "/w/c/.env", isDirectory: false },
      ],
      command: ["sh"],
    });
    expect(valueAfter(args, "--user")).toEqual(["1000:1001"]);
    expect(args).not.toContain("--cpus");
    expect(valueAfter(args, "--network")).toEqual(["none"]);
    expect(valueAfter(args, "--mount")).toContain("type=bind,src=/rt/run-2/mount,dst=/overseer,readonly");
    expect(valueAfter(args, "--mount")).toContain("type=tmpfs,dst=/w/c/.secrets,tmpfs-size=4096");
    expect(valueAfter(args, "--mount")).toContain("type=bind,src=/dev/null,dst=/w/c/.env,readonly");
  });

  it("refuses paths docker --mount cannot express", () => {
    const resolved = parseSandboxSpec({ checkoutDir: "/w/a,b", controlDir: "/w/k", env: {} });
    expect(() =>
      buildDockerRunArgs({
        spec: resolved,
        image: "i",
        name: "n",
        envFile: "/e",
        runtimeMountDir: null,
        masks: [],
        command: ["sh"],
      }),
    ).toThrow(SandboxSpecError);
  });
});

describe("DockerDriver", () => {
  it("prepare() writes a 0600 env file, names the container deterministically and exposes the kill command", async () => {
    const driver = new DockerDriver({ image: "agent:test", runtimeRoot: join(base, "rt") });
    const prepared = await driver.prepare(["agent", "--go"], {
      runId: "abc123",
      checkoutDir: checkout,
      controlDir: control,
      readOnlyBinds: [gitDir],
      env: { PATH: "/usr/bin", TOKEN: "tok-secret" },
    });
    try {
      expect(prepared.file).toBe("docker");
      expect(valueAfter(prepared.args, "--name")).toEqual(["overseer-run-abc123"]);
      expect(prepared.args.join(" ")).not.toContain("tok-secret");
      const envFile = valueAfter(prepared.args, "--env-file")[0] as string;
      expect(await readFile(envFile, "utf8")).toBe("PATH=/usr/bin\nTOKEN=tok-secret\nHOME=/home/agent\n");
      expect((await stat(envFile)).mode & 0o777).toBe(0o600);
      // The docker client's own environment never contains the run's variables.
      expect(Object.values(prepared.env)).not.toContain("tok-secret");
      expect(driver.killCommand("abc123")).toEqual({
        file: "docker",
        args: ["rm", "--force", "overseer-run-abc123"],
      });
      expect(dockerContainerName("abc123")).toBe("overseer-run-abc123");
    } finally {
      await prepared.cleanup();
    }
    expect(existsSync(join(base, "rt"))).toBe(true);
    expect(await import("node:fs/promises").then((fs) => fs.readdir(join(base, "rt")))).toEqual([]);
  });

  it("refuses a checkout the container user cannot write, saying how to fix it", async () => {
    await chmod(checkout, 0o755);
    const driver = new DockerDriver({ runtimeRoot: join(base, "rt") });
    await expect(
      driver.prepare(["sh"], { checkoutDir: checkout, controlDir: control, env: {} }),
    ).rejects.toThrow(/checkoutDir: .* is not writable by the container user 65534:65534; chown it/);
  });

  it("refuses env values with newlines (env-file format)", () => {
    expect(() => formatEnvFile({ A: "x\ny" })).toThrow(/env.A: .*newlines/);
  });

  it("reports no engine: version() is null and probe() says unavailable", async () => {
    const driver = new DockerDriver();
    expect(await driver.version()).toBeNull();
    const report = await driver.probe();
    expect(report.available).toBe(false);
    expect(report.problems[0]).toContain("not available");
    expect((await driver.capabilities()).pids.detail).toContain("no Docker engine");
  });

  it("checks writability from mode bits", () => {
    expect(isWritableBy({ uid: 65534, gid: 0, mode: 0o40755 }, 65534, 65534)).toBe(true);
    expect(isWritableBy({ uid: 0, gid: 65534, mode: 0o40775 }, 65534, 65534)).toBe(true);
    expect(isWritableBy({ uid: 0, gid: 0, mode: 0o40755 }, 65534, 65534)).toBe(false);
    expect(isWritableBy({ uid: 0, gid: 0, mode: 0o40777 }, 65534, 65534)).toBe(true);
  });
});
