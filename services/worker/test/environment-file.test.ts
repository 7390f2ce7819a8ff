/**
 * `.overseer/environment.yml` as a real worker reads it (run-environment.ts), against real git,
 * Redis and bwrap: the setup commands run in the sandbox, in the checkout, before the agent; what
 * the run used is recorded on its result; a bad file, a symlink in its place and an image no
 * worker can pull end the run as a configuration error naming the file, line and fix.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WorkerRig } from "./support/worker-rig.ts";

const rig = new WorkerRig();
// Each case commits a new environment file on main: every run fetches it.
beforeAll(() => rig.setup({ mirrorFreshMs: 0 }));
afterAll(() => rig.teardown());

let tasks = 0;
const nextTask = () => `S07-${String(++tasks).padStart(3, "0")}`;

describe(".overseer/environment.yml", () => {
  it("runs its setup commands in the sandbox, in the checkout, before the agent, and records what it used", async () => {
    const hostMarker = path.join(rig.dir, "written-from-setup");
    const head = await rig.commitOnRemote(
      "main",
      {
        ".overseer/environment.yml": [
          "setup:",
          '  - echo "$PWD" > .setup-ran && id -u >> .setup-ran',
          `  - [sh, -c, "echo escaped > ${hostMarker} 2>/dev/null; printf argv >> .setup-ran"]`,
          "setup_timeout_seconds: 30",
          "",
        ].join("\n"),
      },
      "Add the environment file",
    );
    const job = rig.job(
      "cp .setup-ran src/setup-ran.txt && echo Work | overseer-agent submit --message-file -",
      { taskId: nextTask() },
    );
    const result = await rig.run(job);
    expect(result.outcome).toMatchObject({ kind: "transition", transition: { kind: "submit" } });
    const ran = await rig.git("show", `${result.commitSha}:src/setup-ran.txt`);
    const [cwd, , last] = ran.split("\n");
    expect(cwd).toMatch(/\/checkout$/);
    expect(last).toBe("argv");
    // The setup ran inside the sandbox: a host path it wrote to is not the host's.
    expect(existsSync(hostMarker)).toBe(false);
    const blob = await rig.git("rev-parse", `${head}:.overseer/environment.yml`);
    expect(result.environment).toEqual({
      file: { path: ".overseer/environment.yml", blob },
      image: null,
      imageFrom: null,
      setupCommands: 2,
      agentPackage: null,
    });
    const names = (result.timing.timeline ?? []).map((p) => p.name);
    expect(names.indexOf("environment_setup")).toBe(names.indexOf("sandbox") + 1);
  });

  it("fails the run with the failing setup command and its output", async () => {
    await rig.commitOnRemote(
      "main",
      { ".overseer/environment.yml": "setup:\n  - echo preparing; exit 3\n" },
      "A failing setup",
    );
    const result = await rig.run(rig.job("overseer-agent submit --message nothing", { taskId: nextTask() }));
    expect(result.outcome).toMatchObject({ kind: "no-transition", crashed: false });
    const detail = result.outcome.kind === "no-transition" ? result.outcome.detail : "";
    expect(detail).toContain(".overseer/environment.yml setup[0] failed (exit 3): echo preparing; exit 3");
    expect(detail).toContain("preparing");
  });

  it("refuses a bad file as a configuration error naming the file, the line and what to write", async () => {
    const head = await rig.commitOnRemote(
      "main",
      { ".overseer/environment.yml": "setup:\n  - make\nagent:\n  npm: codex\n" },
      "A bad agent line",
    );
    const result = await rig.run(rig.job("overseer-agent submit --message nothing", { taskId: nextTask() }));
    expect(result.outcome).toMatchObject({ kind: "misconfigured", reason: "configuration_error" });
    const message = result.outcome.kind === "misconfigured" ? result.outcome.message : "";
    expect(message).toContain(
      '.overseer/environment.yml:4:8: agent.npm: expected an npm package at an exact version such as "@openai/codex@0.171.0", received "codex"',
    );
    expect(message).toContain(`commit ${head.slice(0, 12)}`);
    expect(message).toContain(
      "Fix .overseer/environment.yml in the repository and push, then resume the project.",
    );
  });

  it("refuses a symlink in the file's place without following it", async () => {
    // The file is a symlink to a host path, as a hostile commit would make it (a path that does
    // not exist here: the worker must not even try it).
    await rig.commitSymlinkOnRemote("main", ".overseer/environment.yml", "/nonexistent/overseer-env-target");
    const result = await rig.run(rig.job("overseer-agent submit --message nothing", { taskId: nextTask() }));
    const message = result.outcome.kind === "misconfigured" ? result.outcome.message : "";
    expect(message).toContain(".overseer/environment.yml: is not a regular file (mode 120000, a blob)");
  });

  it("refuses an image from the file on a worker without an image cache, naming where it came from", async () => {
    await rig.commitOnRemote(
      "main",
      { ".overseer/environment.yml": "image: 127.0.0.1:5/overseer-test/python:1\n" },
      "An image",
    );
    const result = await rig.run(rig.job("overseer-agent submit --message nothing", { taskId: nextTask() }));
    const message = result.outcome.kind === "misconfigured" ? result.outcome.message : "";
    expect(message).toContain(
      "runs on the image 127.0.0.1:5/overseer-test/python:1 (image in .overseer/environment.yml), but this worker has no image cache",
    );
    expect(result.environment).toMatchObject({
      image: "127.0.0.1:5/overseer-test/python:1",
      imageFrom: "environment_file",
    });
  });
});
