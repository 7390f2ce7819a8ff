/**
 * Project images inside the worker containers (infra/README.md, "Project images"): the images
 * suite's Debian Python and JDK images (test/images, debootstrap, cached in
 * OVERSEER_TEST_IMAGE_CACHE) are pushed to a docker-registry on the host's loopback, which the
 * workers reach through the test's host networking. Four projects name one in `sandbox.image`;
 * their after_run hook is their test (a Python unittest; javac and java on a test class), and the
 * worker image has neither python3 nor a JDK, so it passes only on the image's rootfs. One
 * project per image runs under bwrap, the other under gVisor (`sandbox.driver: gvisor`, runsc in
 * the worker image): its test also asserts gVisor's own kernel release. The worker pulls with
 * skopeo and unpacks with `umoci --rootless` into its image cache as uid 10001 without
 * capabilities. Each run records the image's digest and the driver it ran under.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { expect } from "vitest";
import {
  debianJdkImage,
  debianPythonImage,
  TestRegistry,
  toolchainImagesSkipReason,
} from "../images/test-registry.ts";
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

const JAVA_TEST = [
  "public class GreetingTest {",
  "  public static void main(String[] args) {",
  '    String got = Greeting.greet("Ada");',
  '    if (!got.equals("Hello, Ada")) { System.err.println("got " + got); System.exit(1); }',
  '    String kernel = System.getProperty("os.version");',
  '    if (args.length > 0 && !kernel.equals(args[0])) { System.err.println("kernel " + kernel); System.exit(1); }',
  '    System.out.println("ok on Java " + System.getProperty("java.specification.version") + ", kernel " + kernel);',
  "  }",
  "}",
  "",
].join("\n");

type Toolchain = "python" | "jdk";
type Driver = "bwrap" | "gvisor";

function task(toolchain: Toolchain) {
  const write =
    toolchain === "python"
      ? `write src/greeting.py "def greet(name):\\n    return 'Hello, ' + name\\n"`
      : `write src/Greeting.java "public class Greeting {\\n  public static String greet(String name) { return \\"Hello, \\" + name; }\\n}\\n"`;
  return {
    id: "S00-001",
    title: "Add greet",
    role: "backend",
    scope: ["src/**"],
    prerequisites: [],
    body: `\`\`\`overseer-fake\nexecute: ${write}; submit "Add greet"\n\`\`\`\n`,
  };
}

/** The project's test files and its after_run hook (the test, on the image's toolchain). */
function projectTest(toolchain: Toolchain, driver: Driver) {
  if (toolchain === "python") {
    const files: Record<string, string> = { "tests/test_greeting.py": GREETING_TEST };
    if (driver === "gvisor") files["tests/test_kernel.py"] = KERNEL_TEST;
    return { files, argv: ["python3", "-m", "unittest", "discover", "-s", "tests"] };
  }
  const kernel = driver === "gvisor" ? ` ${GVISOR_RELEASE}` : "";
  return {
    files: { "tests/GreetingTest.java": JAVA_TEST },
    argv: [
      "sh",
      "-c",
      `out=$(mktemp -d) && javac -d "$out" src/Greeting.java tests/GreetingTest.java && java -cp "$out" GreetingTest${kernel}`,
    ],
  };
}

async function registerImageProject(
  scratch: string,
  project: string,
  image: string,
  toolchain: Toolchain,
  driver: Driver,
): Promise<void> {
  const test = projectTest(toolchain, driver);
  const repo = await bareRepo(scratch, project, test.files);
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
      hooks: { after_run: { argv: test.argv, timeout_seconds: 240 } },
    }),
  );
  await sh("chown", ["-R", IMAGE_USER, config]);
  await cli(["init", "--project", project, "--repo", repo, "--config", config, "--objective", toolchain]);
  await api("POST", `/api/v1/projects/${project}/tasks/import`, [task(toolchain)]);
  await api("POST", `/api/v1/projects/${project}/resume`, {});
}

/** Why the workers cannot run gVisor projects, from their start-up probe line; null: they can. */
function gvisorSkipReason(workerLogs: string): string | null {
  const probes = [
    ...workerLogs.matchAll(/gVisor \(sandbox\.driver: gvisor\): (works|unavailable)(?:: ([^"\n]*))?/g),
  ];
  if (probes.length === 0) throw new Error("no worker logged its gVisor probe line (worker-main.ts)");
  const failed = probes.find((m) => m[1] !== "works");
  return failed ? `runsc does not work in the worker container: ${failed[2] ?? "no detail"}` : null;
}

interface ImageRun {
  action: string;
  status: string;
  image_digest: string | null;
  sandbox_driver: string | null;
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
    "SELECT action, status, image_digest, sandbox_driver, failure FROM runs WHERE project_id = $1 ORDER BY created_at",
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
    const images = {
      python: await registry.push(debianPythonImage()),
      jdk: await registry.push(debianJdkImage()),
    };
    progress(
      `Python and JDK images pushed in ${((Date.now() - started) / 1000).toFixed(1)} s (${images.python.digest.slice(0, 19)}…, ${images.jdk.digest.slice(0, 19)}…)`,
    );
    // Each worker probed runsc at start (a bwrap worker still runs gvisor projects where it works);
    // where runsc cannot run inside these containers, the gVisor cases are skipped with its reason.
    const gvisorSkip = gvisorSkipReason(await compose(["logs", "--no-color", "worker"]));
    if (gvisorSkip !== null) progress(`the gVisor cases are skipped: ${gvisorSkip}`);
    const drivers: Driver[] = gvisorSkip === null ? ["bwrap", "gvisor"] : ["bwrap"];
    const cases = (["python", "jdk"] as const).flatMap((toolchain) =>
      drivers.map((driver) => ({ toolchain, driver, project: `${toolchain}-${driver}` })),
    );
    for (const c of cases) {
      await registerImageProject(scratch, c.project, images[c.toolchain].reference, c.toolchain, c.driver);
    }
    for (const { toolchain, driver, project } of cases) {
      const runs = await finishedRuns(project);
      expect(runs.map((r) => [r.action, r.status, r.failure])).toEqual([
        ["execute", "finished", null],
        ["review", "finished", null],
      ]);
      for (const run of runs) {
        expect(run.image_digest).toBe(images[toolchain].digest);
        expect(run.sandbox_driver).toBe(driver);
      }
      progress(
        `${project}: its ${toolchain === "python" ? "python3 unittest" : "javac + java test class"} passed on the image under ${driver} inside a worker container (${((Date.now() - started) / 1000).toFixed(1)} s since the push began)`,
      );
    }
  } finally {
    await registry.stop();
  }
}
