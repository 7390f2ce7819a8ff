/**
 * `doctor`'s run-image check: for a project with `sandbox.image`, the tools a worker pulls it
 * with (skopeo, umoci) are on this host, and the reference resolves to a digest at its
 * registry (`resolveImageDigest` of `@overseer/sandbox`, the call a worker makes when a run
 * starts), with `OVERSEER_IMAGE_INSECURE_REGISTRIES` applied. A missing tool or an image that
 * does not resolve would end every run of the project as a configuration incident, so each
 * fails the check with what to do. Like the harness checks, it speaks for the host doctor runs
 * on: run it where the workers run.
 */

import { resolveExecutable } from "@overseer/harness";
import type { RunnerConfig } from "@overseer/project-config";
import { resolveImageDigest } from "@overseer/sandbox";
import type { ForgeCheck } from "./doctor-forge-check.ts";

const TOOLS = ["skopeo", "umoci"] as const;

export async function imageChecks(
  projectId: string,
  config: RunnerConfig,
  env: Readonly<Record<string, string | undefined>>,
  options: { insecureRegistries: readonly string[]; timeoutMs: number },
): Promise<ForgeCheck[]> {
  const reference = config.sandbox.image;
  if (!reference) return [];
  const name = `${projectId}: run image`;
  const missing = TOOLS.filter((tool) => !resolveExecutable(tool, env.PATH));
  if (missing.length > 0) {
    return [
      {
        name,
        status: "fail",
        detail: `${reference} (sandbox.image) needs ${missing.join(" and ")} on the worker, not found on PATH`,
        required: true,
        fix: `apt-get install -y skopeo umoci on every worker host (or remove sandbox.image from ${projectId}'s runner config)`,
      },
    ];
  }
  try {
    const digest = await resolveImageDigest(reference, {
      insecureRegistries: options.insecureRegistries,
      timeoutMs: options.timeoutMs,
    });
    return [{ name, status: "ok", detail: `${reference} → ${digest}`, required: true }];
  } catch (error) {
    return [
      {
        name,
        status: "fail",
        detail: `${reference} does not resolve: ${(error as Error).message}`,
        required: true,
        fix: "check the reference and that this host reaches its registry (skopeo inspect --raw docker://REF); a registry on plain HTTP goes in OVERSEER_IMAGE_INSECURE_REGISTRIES",
      },
    ];
  }
}
