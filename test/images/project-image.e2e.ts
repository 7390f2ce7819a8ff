import { runGit } from "@overseer/git";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClusterFixture, scriptedTask } from "../support/cluster-fixture.ts";
import { allTasks, waitFor } from "../support/wait-for.ts";
import { baseImage, imagesSuiteSkipReason, pythonImage, TestRegistry } from "./test-registry.ts";

/**
 * A project on its own run image, end to end (README "Project images"): `sandbox.image` in the
 * runner config, a real coordinator, worker (image cache: skopeo + umoci), bwrap on the image's
 * rootfs, git, Postgres and Redis. The project's test needs the image's Python; the same project
 * on an image without Python fails its test, and an image that does not exist pauses the project.
 */

const skip = await imagesSuiteSkipReason();
if (skip) console.warn(`images suite skipped: ${skip}`);

const TEST_FILE = [
  "import sys, unittest",
  "sys.path.insert(0, 'src')",
  "from greeting import greet",
  "",
  "class GreetingTest(unittest.TestCase):",
  "    def test_greets(self):",
  "        self.assertEqual(greet('Ada'), 'Hello, Ada')",
  "",
  "    def test_runs_on_the_python_image(self):",
  "        with open('/etc/overseer-test-image') as marker:",
  "            self.assertEqual(marker.read(), 'python\\n')",
  "",
  "unittest.main()",
  "",
].join("\n");

const TASK = scriptedTask(
  "S00-001",
  `execute: write src/greeting.py "def greet(name):\\n    return 'Hello, ' + name\\n"; submit "Add greet"`,
);

function imageProject(image: string, extra: Record<string, unknown> = {}) {
  return ClusterFixture.fakeRunnerConfig({
    sandbox: { image },
    hooks: { after_run: { argv: ["python3", "tests/test_greeting.py"], timeout_seconds: 60 } },
    ...extra,
  });
}

describe.skipIf(skip !== null)("a project on a run image", () => {
  const registry = new TestRegistry();
  let cluster: ClusterFixture;
  let python: { reference: string; digest: string };
  let base: { reference: string; digest: string };

  beforeAll(async () => {
    await registry.start();
    python = await registry.push(pythonImage());
    base = await registry.push(baseImage());
    cluster = new ClusterFixture({ images: { insecureRegistries: [registry.host] } });
    await cluster.setup();
    await cluster.startCoordinator();
    await cluster.startWorker(2);
  }, 300_000);

  afterAll(async () => {
    await cluster?.teardown();
    await registry.stop();
  });

  const runsOf = (projectId: string) =>
    cluster.scratch.db
      .selectFrom("runs")
      .select(["id", "action", "status", "failure", "output", "image_digest", "phases"])
      .where("project_id", "=", projectId)
      .orderBy("created_at")
      .execute();

  it("runs the task on the image: its test passes on the image's Python, the digest is on every run", async () => {
    const repo = await cluster.addProject({
      id: "py",
      tasks: [TASK],
      files: { "README.md": "# py\n", "tests/test_greeting.py": TEST_FILE },
      runnerConfig: imageProject(python.reference),
    });
    await cluster.waitForProject("py", (s) => allTasks(s, ["done"]), 180_000);
    const landed = await runGit(["show", "main:src/greeting.py"], { cwd: repo });
    expect(landed.stdout).toContain("return 'Hello, ' + name");
    const runs = await runsOf("py");
    expect(runs.map((r) => r.action)).toEqual(["execute", "review"]);
    // Each run's after_run hook (the project's test) passed on the image: a failing one fails the run.
    for (const run of runs) {
      expect(run.status).toBe("finished");
      expect(run.image_digest).toBe(python.digest);
      // The image is acquired after the checkout, whose commit may name it (.overseer/environment.yml).
      const names = run.phases.map((p) => p.name);
      expect(names.indexOf("image")).toBe(names.indexOf("checkout") + 1);
    }
  });

  it("fails the same test on an image without Python, naming what is missing", async () => {
    await cluster.addProject({
      id: "nopy",
      tasks: [TASK],
      files: { "README.md": "# nopy\n", "tests/test_greeting.py": TEST_FILE },
      runnerConfig: imageProject(base.reference, { attempts: 1 }),
    });
    const failed = await waitFor(
      "a failed run of nopy",
      async () => (await runsOf("nopy")).find((r) => r.status === "failed"),
      180_000,
    );
    expect(failed.image_digest).toBe(base.digest);
    expect(`${failed.failure}\n${failed.output}`).toMatch(/python3/);
    expect(`${failed.failure}\n${failed.output}`).toMatch(/No such file or directory|not found/);
  });

  it("pauses the project with a configuration incident naming an image that does not exist", async () => {
    const missing = `${registry.host}/overseer-test/python:no-such-tag`;
    await cluster.addProject({ id: "gone", tasks: [TASK], runnerConfig: imageProject(missing) });
    await cluster.waitForProject("gone", (s) => s.project.status === "paused", 120_000);
    const incidents = await cluster.scratch.db
      .selectFrom("incidents")
      .select(["kind", "message"])
      .where("project_id", "=", "gone")
      .execute();
    expect(incidents.map((i) => i.kind)).toEqual(["configuration_error"]);
    expect(incidents[0]?.message).toContain(`cannot resolve image ${missing}`);
    expect(incidents[0]?.message).toContain("Fix sandbox.image in the runner config");
  });
});
