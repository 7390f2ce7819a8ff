/**
 * Project images inside the worker containers (infra/README.md, "Project images"): the images
 * suite's Debian Python image (test/images, debootstrap, cached in OVERSEER_TEST_IMAGE_CACHE) is
 * pushed to a docker-registry on the host's loopback, which the workers reach through the test's
 * host networking. Two projects name it in `sandbox.image`; their after_run hook is a Python
 * unittest, and the worker image has no python3, so it passes only on the image's rootfs. One
 * runs under bwrap, the other under gVisor (`sandbox.driver: gvisor`, runsc in the worker
 * image): its test also asserts gVisor's own kernel release. The worker pulls with skopeo and
 * unpacks with `umoci --rootless` into its image cache as uid 10001 without capabilities.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { expect } from "vitest";
import { debianPythonImage, TestRegistry, toolchainImagesSkipReason } from "../images/test-registry.ts";
import { waitFor } from "../support/wait-for.ts";
import {
  api,
  bareRepo,
  cli,
  compose,
  IMAGE_USER,
  progress,
  REPOS,
  required,
  sh,
  sql,
} from "./deploy-support.ts";

/** gVisor's sentry reports this kernel release whatever the host runs. */
const GVISOR_RELEASE = "4.4.0";

const GREETING_TEST = [
  "import sys, unittest",
  "sys.path.insert(0, 'src')",
  "from greeting import greet",
  "",
  "class GreetingTest(unittest.TestCase):",
  "    def test_greets(self):",
  "        self.assertEqual(greet('Ada'), 'Hello, Ada')",
  "",
].join("\n");

const KERNEL_TEST = [
  "import platform, unittest",
  "",
  "class KernelTest(unittest.TestCase):",
  "    def test_runs_on_gvisors_kernel(self):",
  `        self.assertEqual(platform.release(), '${GVISOR_RELEASE}')`,
  "",
].join("\n");

const TASK = {
  id: "S00-001",
  title: "Add greet",
  role: "backend",
  scope: ["src/**"],
  prerequisites: [],
  body: `\`\`\`overseer-fake\nexecute: write src/greeting.py "def greet(name):\\n    return 'Hello, ' + name\\n"; submit "Add greet"\n\`\`\`\n`,
};

async function registerImageProject(
  scratch: string,
  project: string,
  image: string,
  driver: "bwrap" | "gvisor",
): Promise<void> {
  const files: Record<string, string> = { "tests/test_greeting.py": GREETING_TEST };
  if (driver === "gvisor") files["tests/test_kernel.py"] = KERNEL_TEST;
  const repo = await bareRepo(scratch, project, files);
  const config = path.join(REPOS, `${project}-runner.json`);
  await writeFile(
    config,
    JSON.stringify({
      // `node` of the image (the worker's is at /usr/local/bin); the fake harness is bound in
      // with overseer-agent's directory.
      argv: ["node", "/opt/overseer/dist/bin/fake-harness.mjs"],
      timeout_seconds: 300,
      retry_backoff_seconds: 0.5,
      attempts: 1,
      sandbox: { image, ...(driver === "gvisor" ? { driver } : {}) },
      hooks: {
        after_run: { argv: ["python3", "-m", "unittest", "discover", "-s", "tests"], timeout_seconds: 180 },
      },
    }),
  );
  await sh("chown", ["-R", IMAGE_USER, config]);
  await cli(["init", "--project", project, "--repo", repo, "--config", config, "--objective", "Python"]);
  await api("POST", `/api/v1/projects/${project}/tasks/import`, [TASK]);
  await api("POST", `/api/v1/projects/${project}/resume`, {});
}

interface ImageRun {
  action: string;
  status: string;
  image_digest: string | null;
  failure: string | null;
}

async function finishedRuns(project: string): Promise<ImageRun[]> {
  await waitFor(
    `project ${project}'s task done or stopped`,
    async () => {
      const [task] = await sql<{ status: string }>("SELECT status FROM tasks WHERE project_id = $1", [
        project,
      ]);
      const [paused] = await sql("SELECT 1 FROM projects WHERE id = $1 AND status = 'paused'", [project]);
      return task?.status === "done" || paused ? true : undefined;
    },
    420_000,
    1000,
  );
  return sql<ImageRun>(
    "SELECT action, status, image_digest, failure FROM runs WHERE project_id = $1 ORDER BY created_at",
    [project],
  );
}

export async function projectImages(scratch: string): Promise<void> {
  const skip = await toolchainImagesSkipReason();
  if (skip !== null) throw new Error(`the project-image case cannot run here: ${skip}`);
  const started = Date.now();
  const registry = new TestRegistry();
  await registry.start(Number(required("OVERSEER_TEST_REGISTRY_PORT")));
  try {
    const python = await registry.push(debianPythonImage());
    progress(
      `Python image ${python.reference} (${python.digest.slice(0, 19)}…) pushed in ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
    // Each worker probed runsc at start (a bwrap worker still runs gvisor projects where it works).
    const logs = await compose(["logs", "--no-color", "worker"]);
    expect(logs).toMatch(/gVisor \(sandbox\.driver: gvisor\): works/);

    await registerImageProject(scratch, "py-bwrap", python.reference, "bwrap");
    await registerImageProject(scratch, "py-gvisor", python.reference, "gvisor");
    for (const project of ["py-bwrap", "py-gvisor"]) {
      const runs = await finishedRuns(project);
      expect(runs.map((r) => [r.action, r.status, r.failure])).toEqual([
        ["execute", "finished", null],
        ["review", "finished", null],
      ]);
      for (const run of runs) expect(run.image_digest).toBe(python.digest);
      progress(
        `${project}: its python3 unittest passed on the image inside a worker container (${((Date.now() - started) / 1000).toFixed(1)} s since the push began)`,
      );
    }
  } finally {
    await registry.stop();
  }
}
