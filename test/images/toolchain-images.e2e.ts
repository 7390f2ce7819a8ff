import { GvisorDriver } from "@overseer/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClusterFixture, scriptedTask } from "../support/cluster-fixture.ts";
import { allTasks } from "../support/wait-for.ts";
import {
  debianJdkImage,
  debianPythonImage,
  TestRegistry,
  toolchainImagesSkipReason,
} from "./test-registry.ts";

/**
 * Projects whose tests need a toolchain the worker does not have, each on a Debian image built by
 * debootstrap from Debian packages (python3; default-jdk-headless) and served by a local registry
 * (README "Project images"): one names its image in `.overseer/environment.yml`, with a setup
 * command, the other in the runner config's `sandbox.image`. A real coordinator, worker (image
 * cache: skopeo + umoci), bwrap on the image's rootfs, git, Postgres and Redis. The unhappy
 * paths: an environment file naming a tag the registry does not have, and one that does not
 * validate, pause the project with what to fix.
 *
 * The happy cases run under bwrap and again under gVisor (`sandbox.driver: gvisor`, runsc on the
 * same unpacked rootfs) where runsc passes its probe here. The images are built once (3 to 4
 * minutes each on a loaded 2-core machine, cold) and kept in OVERSEER_TEST_IMAGE_CACHE.
 */

const skip = await toolchainImagesSkipReason();
if (skip) console.warn(`images suite (toolchain images) skipped: ${skip}`);
const gvisorSkip = skip ?? (await gvisorSkipReason());
if (gvisorSkip && !skip) console.warn(`images suite (toolchain images under gVisor) skipped: ${gvisorSkip}`);

/** Why runsc cannot confine runs here (as the worker probes it), or null. */
async function gvisorSkipReason(): Promise<string | null> {
  const driver = new GvisorDriver();
  try {
    if ((await driver.version()) === null) return "runsc is not installed (apt-get install -y runsc)";
    const probe = await driver.probe();
    const failed = [probe.writeOutsideDenied, probe.networkDenied, probe.privilegesDropped].filter(
      (c) => !c.ok,
    );
    if (!probe.available || failed.length > 0)
      return `runsc does not confine runs here: ${[...probe.problems, ...failed.map((c) => c.detail)].join("; ")}`;
    return null;
  } finally {
    await driver.dispose();
  }
}

const PY_TEST = [
  "import sys, unittest",
  "sys.path.insert(0, 'src')",
  "from greeting import greet",
  "",
  "class GreetingTest(unittest.TestCase):",
  "    def test_greets(self):",
  "        self.assertEqual(greet('Ada'), 'Hello, Ada')",
  "",
  "    def test_setup_ran_on_the_image(self):",
  "        with open('.setup-ran') as marker:",
  "            self.assertIn('Python 3.11', marker.read())",
  "",
].join("\n");

const JAVA_TEST = [
  "public class GreetingTest {",
  "  public static void main(String[] args) {",
  '    String got = Greeting.greet("Ada");',
  '    if (!got.equals("Hello, Ada")) { System.err.println("got " + got); System.exit(1); }',
  '    System.out.println("ok on Java " + System.getProperty("java.specification.version"));',
  "  }",
  "}",
  "",
].join("\n");

const PY_TASK = scriptedTask(
  "S00-001",
  `execute: write src/greeting.py "def greet(name):\\n    return 'Hello, ' + name\\n"; submit "Add greet"`,
);
const JAVA_TASK = scriptedTask(
  "S00-001",
  `execute: write src/Greeting.java "public class Greeting {\\n  public static String greet(String name) { return \\"Hello, \\" + name; }\\n}\\n"; submit "Add Greeting"`,
);

const DRIVERS = [
  { driver: "bwrap" as const, skipped: skip },
  { driver: "gvisor" as const, skipped: gvisorSkip },
];

describe.each(DRIVERS)("toolchain projects on Debian images under $driver", ({ driver, skipped }) => {
  if (skipped !== null) {
    it.skip(`skipped: ${skipped}`, () => undefined);
    return;
  }
  const registry = new TestRegistry();
  let cluster: ClusterFixture;
  let python: { reference: string; digest: string };
  let jdk: { reference: string; digest: string };

  beforeAll(async () => {
    await registry.start();
    python = await registry.push(debianPythonImage());
    jdk = await registry.push(debianJdkImage());
    cluster = new ClusterFixture({ sandbox: driver, images: { insecureRegistries: [registry.host] } });
    await cluster.setup();
    await cluster.startCoordinator();
    await cluster.startWorker(2);
  }, 900_000);

  afterAll(async () => {
    await cluster?.teardown();
    await registry.stop();
  });

  const runsOf = (projectId: string) =>
    cluster.scratch.db
      .selectFrom("runs")
      .select(["action", "status", "image_digest", "sandbox_driver", "environment", "output", "failure"])
      .where("project_id", "=", projectId)
      .orderBy("created_at")
      .execute();

  const incidentsOf = (projectId: string) =>
    cluster.scratch.db
      .selectFrom("incidents")
      .select(["kind", "message"])
      .where("project_id", "=", projectId)
      .execute();

  it("a Python project names its image and a setup command in .overseer/environment.yml; its unittest passes on the image", async () => {
    await cluster.addProject({
      id: "py-envfile",
      tasks: [PY_TASK],
      files: {
        "README.md": "# py\n",
        "tests/test_greeting.py": PY_TEST,
        // What setup writes into the checkout is the run's change unless ignored (scope checks).
        ".gitignore": ".setup-ran\n",
        ".overseer/environment.yml": [
          `image: ${python.reference}`,
          "setup:",
          "  - python3 --version > .setup-ran",
          "",
        ].join("\n"),
      },
      runnerConfig: ClusterFixture.fakeRunnerConfig({
        hooks: {
          after_run: { argv: ["python3", "-m", "unittest", "discover", "-s", "tests"], timeout_seconds: 120 },
        },
      }),
    });
    await cluster.waitForProject("py-envfile", (s) => allTasks(s, ["done"]), 220_000);
    const runs = await runsOf("py-envfile");
    expect(runs.map((r) => r.action)).toEqual(["execute", "review"]);
    for (const run of runs) {
      // The after_run hook is the project's unittest: a failing one fails the run.
      expect(run.status).toBe("finished");
      expect(run.image_digest).toBe(python.digest);
      expect(run.sandbox_driver).toBe(driver);
      expect(run.environment).toMatchObject({
        file: { path: ".overseer/environment.yml" },
        image: python.reference,
        imageFrom: "environment_file",
        setupCommands: 1,
        agentPackage: null,
      });
    }
  });

  it("a Java project on the JDK image (sandbox.image) compiles and runs its test class", async () => {
    await cluster.addProject({
      id: "java",
      tasks: [JAVA_TASK],
      files: { "README.md": "# java\n", "tests/GreetingTest.java": JAVA_TEST },
      runnerConfig: ClusterFixture.fakeRunnerConfig({
        sandbox: { image: jdk.reference },
        hooks: {
          after_run: {
            argv: [
              "sh",
              "-c",
              'out=$(mktemp -d) && javac -d "$out" src/Greeting.java tests/GreetingTest.java && java -cp "$out" GreetingTest',
            ],
            timeout_seconds: 180,
          },
        },
      }),
    });
    await cluster.waitForProject("java", (s) => allTasks(s, ["done"]), 220_000);
    const runs = await runsOf("java");
    expect(runs.map((r) => r.action)).toEqual(["execute", "review"]);
    for (const run of runs) {
      expect(run.status).toBe("finished");
      expect(run.image_digest).toBe(jdk.digest);
      expect(run.sandbox_driver).toBe(driver);
      expect(run.environment).toMatchObject({ file: null, image: jdk.reference, imageFrom: "runner_config" });
    }
  });

  it.runIf(driver === "bwrap")(
    "pauses a project whose environment file names a tag the registry does not have, naming the reference",
    async () => {
      const missing = `${registry.host}/overseer-test/debian-python:no-such-tag`;
      await cluster.addProject({
        id: "py-missing",
        tasks: [PY_TASK],
        files: { ".overseer/environment.yml": `image: ${missing}\n` },
      });
      await cluster.waitForProject("py-missing", (s) => s.project.status === "paused", 120_000);
      const incidents = await incidentsOf("py-missing");
      expect(incidents.map((i) => i.kind)).toEqual(["configuration_error"]);
      expect(incidents[0]?.message).toContain(`cannot resolve image ${missing}`);
      expect(incidents[0]?.message).toContain("Fix image in .overseer/environment.yml");
    },
  );

  it.runIf(driver === "bwrap")(
    "pauses a project whose environment file does not validate, with file:line and what to write",
    async () => {
      await cluster.addProject({
        id: "py-bad",
        tasks: [PY_TASK],
        files: { ".overseer/environment.yml": `image: ${python.reference}\nsetup:\n  - 42\n` },
      });
      await cluster.waitForProject("py-bad", (s) => s.project.status === "paused", 120_000);
      const incidents = await incidentsOf("py-bad");
      expect(incidents.map((i) => i.kind)).toEqual(["configuration_error"]);
      expect(incidents[0]?.message).toContain(
        ".overseer/environment.yml:3:5: setup.0: expected a command: a string (run by the image's /bin/sh -c) or an argv list",
      );
      expect(incidents[0]?.message).toContain("Fix .overseer/environment.yml in the repository and push");
    },
  );
});
