/**
 * The production build (`npm run build`, scripts/build.mjs): the bundles run with plain
 * `node`, no tsx, and still find what they load from disk at run time (migrations, the web
 * app, `overseer-agent` and the fake harness bound into each sandboxed run). One task goes
 * through the built coordinator, worker (bwrap) and gateway against real Postgres and Redis, and
 * the built liveness probe (`dist/healthcheck.js`) reads their heartbeat files. `npm install -g`
 * of the output dir puts the `overseer` command on PATH.
 */
import { execFile } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { createApiToken } from "@overseer/db";
import { runGit } from "@overseer/git";
import { isProcessAlive } from "@overseer/process";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClusterFixture } from "../support/cluster-fixture.ts";
import { buildProduction, productionBuildDir } from "../support/production-build.ts";
import { type ServiceProcess, startService } from "../support/service-process.ts";
import { startUp } from "../support/up-process.ts";
import { allTasks } from "../support/wait-for.ts";

const run = promisify(execFile);

const outDir = productionBuildDir();

async function waitForOutput(
  service: ServiceProcess,
  pattern: RegExp,
  timeoutMs = 60_000,
): Promise<RegExpExecArray> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const match = pattern.exec(service.output());
    if (match) return match;
    if (Date.now() > deadline || service.child.exitCode !== null) {
      throw new Error(`${service.name} never printed ${pattern}:\n${service.output()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The command lines of `pid`'s child processes (arguments joined by spaces). */
function childCommandLines(pid: number): string[] {
  const lines: string[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid !== pid) continue;
      // trim: a process that renamed itself (the Perl spawner's `$0`) pads its old command line's
      // space with blanks after the new name.
      const words = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0").filter(Boolean);
      lines.push(words.join(" ").trim());
    } catch {
      // Gone meanwhile.
    }
  }
  return lines;
}

describe("production build", () => {
  const cluster = new ClusterFixture({ sandbox: "bwrap" });
  const services: ServiceProcess[] = [];

  beforeAll(async () => {
    expect(await buildProduction(outDir)).toContain("worker.js");
    await cluster.setup();
  });
  afterAll(async () => {
    await Promise.all(services.map((service) => service.kill("SIGTERM")));
    await cluster.teardown();
    await rm(outDir, { recursive: true, force: true });
  });

  it("writes one bundle per service and the CLI, with the harness binaries and the web app beside them", async () => {
    for (const name of [
      "coordinator.js",
      "gateway.js",
      "worker.js",
      "overseer.js",
      "healthcheck.js",
      "process-spawner.mjs",
      "process-spawner.pl",
      "web/index.html",
    ]) {
      expect(existsSync(path.join(outDir, name)), name).toBe(true);
    }
    for (const name of ["overseer-agent", "fake-harness.mjs"]) {
      expect((await stat(path.join(outDir, "bin", name))).mode & 0o111, name).not.toBe(0);
    }
    const { stdout } = await run(process.execPath, [path.join(outDir, "overseer.js"), "--help"]);
    expect(stdout).toContain("overseer");
  });

  it("installs as the `overseer` command: `npm install -g ./dist` puts it on PATH", async () => {
    const manifest = JSON.parse(await readFile(path.join(outDir, "package.json"), "utf8"));
    expect(manifest.bin).toEqual({ overseer: "overseer.js" });
    const prefix = await mkdtemp(path.join(tmpdir(), "overseer-prefix-"));
    try {
      await execa("npm", ["install", "-g", "--prefix", prefix, outDir], { cwd: prefix });
      const env = { PATH: `${path.join(prefix, "bin")}:${process.env.PATH ?? "/usr/bin:/bin"}` };
      const overseer = (...args: string[]) =>
        execa("overseer", args, { env, extendEnv: false, cwd: prefix, reject: false });
      const help = await overseer("--help");
      expect(help.exitCode).toBe(0);
      expect(help.stdout).toMatch(/^Usage: overseer <command>/);
      // An operator verb without a token: the command runs and says what to export.
      const status = await overseer("status");
      expect(status.exitCode).toBe(2);
      expect(status.stderr).toContain("OVERSEER_TOKEN is not set");
    } finally {
      await rm(prefix, { recursive: true, force: true });
    }
  });

  it("runs a task end to end on the built coordinator, worker and gateway with plain node", async () => {
    const env = cluster.env({ OVERSEER_GATEWAY_PORT: "0", LOG_LEVEL: "info" });
    services.push(startService("coordinator", env, { builtDir: outDir }));
    services.push(startService("worker", env, { builtDir: outDir }));
    const gateway = startService("gateway", env, { builtDir: outDir });
    services.push(gateway);

    const port = (await waitForOutput(gateway, /"port":(\d+)/))[1];
    const base = `http://127.0.0.1:${port}`;
    const { token } = await createApiToken(cluster.scratch.db, { name: "build-test", scope: "read" });
    const ready = await fetch(`${base}/readyz`, { headers: { Authorization: `Bearer ${token}` } });
    expect(ready.status).toBe(200);
    // The web app is served from the copy beside the bundle.
    const page = await fetch(`${base}/`);
    expect(await page.text()).toContain("<!doctype html>");

    // The harness is the fake harness shipped in the build; overseer-agent comes from dist/bin.
    const repo = await cluster.addProject({
      id: "built",
      tasks: [
        {
          id: "S00-001",
          title: "Write a file",
          role: "backend",
          scope: ["src/**"],
          body: '```overseer-fake\nexecute: write src/built.txt "from the build"; submit "Add built.txt"\nreview: approve "ok"\n```',
        },
      ],
      runnerConfig: ClusterFixture.fakeRunnerConfig({
        argv: [process.execPath, path.join(outDir, "bin", "fake-harness.mjs")],
      }),
    });
    await cluster.waitForProject("built", (s) => allTasks(s, ["done"]), 90_000);
    const landed = await runGit(["show", "main:src/built.txt"], { cwd: repo });
    expect(landed.stdout.trim()).toBe("from the build");
    // The built worker ran that git through the process spawner copied beside its bundle.
    const worker = services[1]?.child.pid as number;
    expect(childCommandLines(worker)).toContain("overseer-spawner");

    // Liveness: each service keeps its heartbeat file fresh; the probe loads no npm dependency.
    const probeEnv = { PATH: process.env.PATH ?? "/usr/bin:/bin", OVERSEER_DATA_DIR: cluster.dataDir };
    const probe = (service: string) =>
      run(process.execPath, [path.join(outDir, "healthcheck.js"), service], { env: probeEnv }).then(
        ({ stdout }) => ({ code: 0, text: stdout }),
        (error: { code: number; stderr: string }) => ({ code: error.code, text: error.stderr }),
      );
    for (const name of ["coordinator", "worker", "gateway"]) {
      const verdict = await probe(name);
      expect(verdict, name).toMatchObject({ code: 0 });
      expect(verdict.text).toContain(`healthy: ${name} pid`);
    }

    for (const service of services.splice(0)) expect(await service.kill("SIGTERM"), service.name).toBe(0);
    // A stopped service removes its file: the probe now fails.
    expect(await probe("worker")).toMatchObject({
      code: 1,
      text: expect.stringContaining("no heartbeat file"),
    });
    expect(await probe("nonsense")).toMatchObject({ code: 2 });
  });

  it("runs `node dist/overseer.js up`: the built services, a working token, a clean stop on SIGTERM", async () => {
    const up = startUp(["--workers", "1", "--port", "0"], cluster.env(), { builtDir: outDir });
    try {
      await up.waitFor(/starting from the production build/);
      const url = (await up.waitFor(/overseer up: gateway (http:\/\/\S+)/))[1] as string;
      const token = (await up.waitFor(/overseer up: token (ovr_\S+)/))[1] as string;
      expect((await fetch(`${url}/readyz`, { headers: { Authorization: `Bearer ${token}` } })).status).toBe(
        200,
      );
      up.child.kill("SIGTERM");
      expect(await up.exited).toBe(0);
      const pids = [...up.childPids().values()].flat();
      expect(pids.length).toBe(3);
      for (const pid of pids) expect(isProcessAlive(pid), `pid ${pid}`).toBe(false);
    } finally {
      if (up.child.exitCode === null) up.child.kill("SIGKILL");
    }
  });
});
