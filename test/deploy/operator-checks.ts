/**
 * What an operator checks on the compose cluster (infra/README.md): the agent CLI baked into
 * the image with the AGENT_CLIS build arg is on the worker's PATH and `doctor` in the gateway
 * container finds it for an `init --agent` project; `doctor --deep` there (where the docs have
 * operators run the CLI) skips the sandbox checks that do not apply to a container that runs no
 * sandbox, with the reason, instead of failing them, and exits 0.
 */
import { expect } from "vitest";
import { bareRepo, cli, compose, progress, required } from "./deploy-support.ts";

export async function agentCliAndDoctor(scratch: string, healthyProject: string): Promise<void> {
  const spec = required("OVERSEER_TEST_AGENT_CLIS"); // e.g. @google/gemini-cli@0.61.0
  const version = spec.slice(spec.lastIndexOf("@") + 1);
  const onWorker = await compose([
    "exec",
    "-T",
    "--user",
    "overseer",
    "worker",
    "sh",
    "-c",
    "command -v gemini && gemini --version",
  ]);
  expect(onWorker.trim().split("\n")).toEqual(["/usr/local/bin/gemini", version]);
  progress(`AGENT_CLIS=${spec}: the worker runs ${onWorker.trim().replace("\n", " ")}`);

  const repo = await bareRepo(scratch, "gemini");
  await cli(["init", "--project", "gemini", "--repo", repo, "--agent", "gemini"]);
  const doctor = await cli(["doctor", "--project", "gemini"]);
  expect(doctor).toMatch(/^OK\s+gemini: CLI gemini\s+\/usr\/local\/bin\/gemini in this image/m);
  progress(
    "`init --agent gemini` then `doctor` in the gateway container: gemini found at /usr/local/bin/gemini",
  );

  // cli() fails on a non-zero exit: --deep exits 0 in the gateway container.
  const deep = await cli(["doctor", "--deep", "--project", healthyProject]);
  expect(deep).not.toMatch(/^FAIL/m);
  expect(deep).toMatch(
    /^SKIP\s+sandbox bwrap\s+not checked in this docker container, which runs no sandbox/m,
  );
  expect(deep).toMatch(new RegExp(`^OK\\s+${healthyProject}: \\S+ version\\s`, "m"));
  expect(deep).not.toContain("nested sandbox");
  progress(
    `doctor --deep in the gateway container: exit 0, ${deep.match(/^SKIP/gm)?.length ?? 0} checks skipped with the reason, no FAIL`,
  );
}
