import { lstatSync } from "node:fs";
import path from "node:path";
import type { RepoMirror } from "@overseer/git";
import {
  ENVIRONMENT_FILE,
  type EnvironmentFile,
  MAX_ENVIRONMENT_FILE_BYTES,
  parseEnvironmentFile,
} from "@overseer/project-config";
import type { RunEnvironment, RunJob, RunOutcome } from "@overseer/run-contract";
import type { AgentCliInstall } from "./agent-cli-cache.ts";
import type { RunExecutorDeps, RunPaths } from "./run-context.ts";
import { acquireRunImage, type RunImage } from "./run-image.ts";

/**
 * The run environment of one run (README "Project images"): the runner config's
 * `sandbox.image`, and the repository's `.overseer/environment.yml` as it is in the commit the
 * run checked out (its image, setup commands and agent CLI).
 *
 * The file is untrusted input (anyone who pushes, an agent included, writes it): it is read
 * from the mirror as a blob (a symlink or an oversized entry is refused, never followed), parsed
 * on the host as data, and its commands run inside the run's sandbox only. The runner config's
 * `sandbox.image` wins over the file's `image`: it is the operator's choice (a pinned digest, a
 * registry they trust), and a commit must not be able to move a project off it.
 */

export interface ResolvedEnvironment {
  /** The image the run uses, or none (the worker's own system). */
  image: string | undefined;
  /** The file's setup commands (argv each) and their timeout; empty without a file. */
  setup: string[][];
  setupTimeoutMs: number;
  /** The agent CLI to install (`package@version`), or none. */
  agentPackage: string | undefined;
  /** What the run recorded about it (RunResult.environment). */
  record: RunEnvironment;
}

/**
 * The environment file's blob in `commit`, or null when there is none. `checkout`, when given,
 * is a fresh checkout of exactly `commit` that no agent has touched yet: a path missing there
 * is missing from the commit, which answers the common case without a git process. Anything
 * found there is read from the commit itself (its mode, its size, never the file).
 */
async function readEnvironmentBlob(
  mirror: RepoMirror,
  commit: string,
  checkout?: string,
): Promise<{ oid: string; text: string } | { problem: string } | null> {
  if (checkout !== undefined && absentFrom(checkout, ENVIRONMENT_FILE)) return null;
  const listed = await mirror.git(["ls-tree", "-l", "-z", commit, "--", ENVIRONMENT_FILE]);
  const entry = listed.stdout.split("\0").find((line) => line.length > 0);
  if (entry === undefined) return null;
  const match = /^(\d+) (\w+) ([0-9a-f]+)\s+(-|\d+)\t/.exec(entry);
  if (match === null) return { problem: `cannot read its entry in the tree (${JSON.stringify(entry)})` };
  const [, mode, type, oid, size] = match;
  if (type !== "blob" || (mode !== "100644" && mode !== "100755"))
    return { problem: `is not a regular file (mode ${mode}, a ${type}); commit it as a plain YAML file` };
  if (Number(size) > MAX_ENVIRONMENT_FILE_BYTES)
    return {
      problem: `${size} bytes, over the ${MAX_ENVIRONMENT_FILE_BYTES} bytes allowed; keep it short (build what it installs into the image)`,
    };
  const blob = await mirror.git(["cat-file", "blob", oid as string]);
  return { oid: oid as string, text: blob.stdout };
}

/** Whether `relative` does not exist under `dir` (a missing directory on the way counts). */
function absentFrom(dir: string, relative: string): boolean {
  try {
    // Synchronous and without an error for the usual answer (no such file): one lstat.
    return lstatSync(path.join(dir, relative), { throwIfNoEntry: false }) === undefined;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === "ENOENT" || code === "ENOTDIR";
  }
}

export type EnvironmentResolution =
  | { kind: "ok"; environment: ResolvedEnvironment }
  | { kind: "misconfigured"; outcome: RunOutcome };

/**
 * What `job` runs on, given the environment file of the commit it checked out (`commit`;
 * `checkout`: its fresh checkout, untouched by any agent yet, see readEnvironmentBlob).
 */
export async function resolveRunEnvironment(
  job: Pick<RunJob, "projectId" | "sandbox" | "taskBranch">,
  mirror: RepoMirror,
  commit: string,
  checkout?: string,
): Promise<EnvironmentResolution> {
  const refuse = (detail: string): EnvironmentResolution => ({
    kind: "misconfigured",
    outcome: {
      kind: "misconfigured",
      reason: "configuration_error",
      message: `Project ${job.projectId}: ${detail} (commit ${commit.slice(0, 12)}, checked out for ${job.taskBranch}). Fix ${ENVIRONMENT_FILE} in the repository and push, then resume the project.`,
    },
  });
  const blob = await readEnvironmentBlob(mirror, commit, checkout);
  if (blob !== null && "problem" in blob) return refuse(`${ENVIRONMENT_FILE}: ${blob.problem}`);
  let file: EnvironmentFile | null = null;
  if (blob !== null) {
    const parsed = parseEnvironmentFile(Buffer.from(blob.text, "utf8"));
    if (!parsed.ok) return refuse(parsed.message);
    file = parsed.value;
  }
  const fromConfig = job.sandbox.image;
  const image = fromConfig ?? file?.image;
  const imageFrom =
    fromConfig !== undefined ? "runner_config" : file?.image !== undefined ? "environment_file" : null;
  return {
    kind: "ok",
    environment: {
      image,
      setup: file?.setup ?? [],
      setupTimeoutMs: (file?.setupTimeoutSeconds ?? 600) * 1000,
      agentPackage: file?.agentPackage,
      record: {
        file: blob === null ? null : { path: ENVIRONMENT_FILE, blob: blob.oid },
        image: image ?? null,
        imageFrom,
        ...(fromConfig !== undefined && file?.image !== undefined && file.image !== fromConfig
          ? { ignoredImage: file.image }
          : {}),
        setupCommands: file?.setup.length ?? 0,
        agentPackage: file?.agentPackage ?? null,
      },
    },
  };
}

export type PreparedEnvironment =
  | { kind: "ready"; environment: ResolvedEnvironment; record: RunEnvironment }
  | { kind: "misconfigured"; outcome: RunOutcome; record?: RunEnvironment };

/**
 * After the checkout: the run's environment resolved from the checked-out commit, its image
 * acquired (`onImage` holds it, so the run releases it whatever follows) and its agent CLI
 * installed into `checkout.paths.agentCli`. A failure is the project's to fix: a configuration
 * error that says what and where.
 */
export async function prepareEnvironment(
  job: RunJob,
  deps: Pick<RunExecutorDeps, "imageFor" | "agentCliFor">,
  mirror: RepoMirror,
  checkout: { base: string; paths: RunPaths },
  onImage: (image: RunImage) => void,
): Promise<PreparedEnvironment> {
  const resolved = await resolveRunEnvironment(job, mirror, checkout.base, checkout.paths.checkout);
  if (resolved.kind === "misconfigured") return resolved;
  const env = resolved.environment;
  const record = env.record;
  const acquired = await acquireRunImage(
    job,
    { reference: env.image, from: record.imageFrom },
    deps.imageFor,
  );
  if (acquired.kind === "misconfigured") return { ...acquired, record };
  let digest: string | null = null;
  if (acquired.kind === "image") {
    onImage(acquired.image);
    digest = acquired.image.digest;
  }
  if (env.agentPackage !== undefined) {
    const installed = await installAgentCli(job, env.agentPackage, digest, deps);
    if ("outcome" in installed) return { kind: "misconfigured", outcome: installed.outcome, record };
    checkout.paths.agentCli = installed;
  }
  return { kind: "ready", environment: env, record };
}

/** The environment file's agent CLI, installed for the run's image; a failure is the project's to fix. */
async function installAgentCli(
  job: RunJob,
  pkg: string,
  digest: string | null,
  deps: Pick<RunExecutorDeps, "agentCliFor">,
): Promise<AgentCliInstall | { outcome: RunOutcome }> {
  const refuse = (detail: string) => ({
    outcome: {
      kind: "misconfigured" as const,
      reason: "configuration_error" as const,
      message: `Project ${job.projectId}: ${detail}. Fix agent.npm in .overseer/environment.yml (an existing package@version) or the worker's npm registry settings, then resume the project.`,
    },
  });
  if (deps.agentCliFor === undefined)
    return refuse(`${pkg} (agent.npm) cannot be installed: this worker has no agent CLI cache`);
  try {
    return await deps.agentCliFor(pkg, digest);
  } catch (error) {
    return refuse((error as Error).message);
  }
}
