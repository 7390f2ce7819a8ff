import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { type CliIo, runCli } from "@overseer/cli";
import { createProject, createScratchDatabase, type ScratchDatabase } from "@overseer/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClusterFixture } from "../support/cluster-fixture.ts";
import { baseImage, imagesSuiteSkipReason, TestRegistry } from "./test-registry.ts";

/**
 * `overseer doctor` on a project with `sandbox.image`, as an operator runs it on a worker host
 * (README "Project images"): the image resolves at a real registry (docker-registry on loopback)
 * to the digest that was pushed; an unknown tag, a plain-HTTP registry left out of
 * OVERSEER_IMAGE_INSECURE_REGISTRIES and a host without skopeo each fail with what to do.
 */

const skip = await imagesSuiteSkipReason();

interface Captured extends CliIo {
  stdout: string[];
  stderr: string[];
}

describe.skipIf(skip !== null)("overseer doctor: run images", () => {
  const registry = new TestRegistry();
  let scratch: ScratchDatabase;
  let dir: string;
  let pushed: { reference: string; digest: string };

  beforeAll(async () => {
    await registry.start();
    pushed = await registry.push(baseImage());
    scratch = await createScratchDatabase();
    dir = await mkdtemp(path.join(tmpdir(), "overseer-doctor-image-"));
    const projects: Record<string, string> = {
      "img-ok": pushed.reference,
      "img-missing": `${registry.host}/overseer-test/base:no-such-tag`,
    };
    for (const [id, image] of Object.entries(projects)) {
      await createProject(scratch.db, {
        id,
        repo: "/tmp/none",
        runnerConfig: ClusterFixture.fakeRunnerConfig({ sandbox: { image } }),
        objective: "doctor",
      });
    }
  }, 300_000);

  afterAll(async () => {
    await registry.stop();
    await scratch?.drop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  function io(env: Record<string, string | undefined> = {}): Captured {
    const stdout: string[] = [];
    const stderr: string[] = [];
    return {
      stdout,
      stderr,
      out: (line) => stdout.push(line),
      err: (line) => stderr.push(line),
      env: {
        DATABASE_URL: scratch.url,
        REDIS_URL: "redis://127.0.0.1:6379",
        PATH: process.env.PATH,
        OVERSEER_DATA_DIR: path.join(dir, "data"),
        OVERSEER_IMAGE_INSECURE_REGISTRIES: registry.host,
        ...env,
      },
      cwd: dir,
    };
  }

  async function imageCheck(project: string, env: Record<string, string | undefined> = {}) {
    const out = io(env);
    await runCli(["doctor", "--json", "--project", project], out);
    const report = JSON.parse(out.stdout.join("\n")) as {
      checks: { name: string; status: string; detail: string; fix?: string }[];
    };
    return report.checks.find((check) => check.name === `${project}: run image`);
  }

  it("resolves the project's image to the digest the registry serves", async () => {
    const check = await imageCheck("img-ok");
    expect(check).toMatchObject({ status: "ok", detail: `${pushed.reference} → ${pushed.digest}` });
  }, 120_000);

  it("fails an unknown tag, saying how to check the reference", async () => {
    const check = await imageCheck("img-missing");
    expect(check?.status).toBe("fail");
    expect(check?.detail).toContain("no-such-tag does not resolve");
    expect(check?.fix).toContain("skopeo inspect --raw docker://REF");
  }, 120_000);

  it("fails a plain-HTTP registry left out of OVERSEER_IMAGE_INSECURE_REGISTRIES, naming the setting", async () => {
    const check = await imageCheck("img-ok", { OVERSEER_IMAGE_INSECURE_REGISTRIES: undefined });
    expect(check?.status).toBe("fail");
    expect(check?.fix).toContain("OVERSEER_IMAGE_INSECURE_REGISTRIES");
  }, 120_000);

  it("fails a host without skopeo and umoci, with the command that installs them", async () => {
    const check = await imageCheck("img-ok", { PATH: "/nonexistent" });
    expect(check).toMatchObject({ status: "fail" });
    expect(check?.detail).toContain("needs skopeo and umoci on the worker");
    expect(check?.fix).toContain("apt-get install -y skopeo umoci");
  }, 120_000);
});
