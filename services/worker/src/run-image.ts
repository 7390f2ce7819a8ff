import type { RunJob, RunOutcome } from "@overseer/run-contract";

/**
 * A run on its project's image (`sandbox.image`, else the image of the repository's
 * `.overseer/environment.yml`): the worker's image cache pulls and unpacks it (once per digest)
 * after the checkout, the sandbox runs on its rootfs, and the run's result
 * records the digest. A reference that cannot be pulled ends the run as a configuration error
 * naming the image and the registry's word (the project pauses with that incident).
 */

/** One run's hold on an unpacked image (`ImageCache.acquire` of @overseer/sandbox). */
export interface RunImage {
  digest: string;
  rootfs: string;
  config: { env: Record<string, string>; uid: number | null; gid: number | null };
  release(): Promise<void>;
}

/** The worker's image cache, as a run sees it. */
export type ImageSource = (reference: string) => Promise<RunImage>;

export type ImageAcquisition =
  | { kind: "none" }
  | { kind: "image"; image: RunImage }
  | { kind: "misconfigured"; outcome: RunOutcome };

export async function acquireRunImage(
  job: Pick<RunJob, "projectId">,
  chosen: { reference: string | undefined; from: "runner_config" | "environment_file" | null },
  source: ImageSource | undefined,
): Promise<ImageAcquisition> {
  const reference = chosen.reference;
  if (reference === undefined) return { kind: "none" };
  const refuse = (message: string): ImageAcquisition => ({
    kind: "misconfigured",
    outcome: { kind: "misconfigured", reason: "configuration_error", message },
  });
  const named = chosen.from === "environment_file" ? "image in .overseer/environment.yml" : "sandbox.image";
  const remove =
    chosen.from === "environment_file"
      ? "or remove image from .overseer/environment.yml"
      : "or remove sandbox.image from the runner config";
  if (source === undefined) {
    return refuse(
      `Project ${job.projectId} runs on the image ${reference} (${named}), but this worker has no image cache: run it on a worker with skopeo and umoci, ${remove}.`,
    );
  }
  try {
    return { kind: "image", image: await source(reference) };
  } catch (error) {
    const fix =
      chosen.from === "environment_file"
        ? "Fix image in .overseer/environment.yml (push the fix)"
        : `Fix sandbox.image in the runner config (overseer init --project ${job.projectId} --update --config FILE)`;
    return refuse(
      `Project ${job.projectId}: ${(error as Error).message}. ${fix} or the registry, then resume the project.`,
    );
  }
}

/** Variables of the image never passed: the sandbox sets its own home, proxy and Overseer ones. */
const NOT_FROM_IMAGE = /^(HOME|PWD|OVERSEER_.*|(HTTPS?|ALL|NO)_PROXY|(https?|all|no)_proxy)$/;
const DEFAULT_IMAGE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/**
 * The environment of a command on an image: the image's variables (JAVA_HOME, LANG, its PATH…)
 * under the run's own, and PATH = the bundled commands' dir (and the installed agent CLI's),
 * then the image's PATH (the worker's PATH names host directories the image does not have).
 */
export function imageRunEnv(
  imageEnv: Readonly<Record<string, string>>,
  runEnv: Readonly<Record<string, string>>,
  binDirs: readonly string[],
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(imageEnv)) if (!NOT_FROM_IMAGE.test(name)) env[name] = value;
  return { ...env, ...runEnv, PATH: [...binDirs, imageEnv.PATH ?? DEFAULT_IMAGE_PATH].join(":") };
}

/** The image's user when it is an unprivileged one; root (or none) keeps the sandbox's default. */
export function imageIdentity(config: RunImage["config"]): { uid?: number; gid?: number } {
  return {
    ...(config.uid !== null && config.uid > 0 ? { uid: config.uid } : {}),
    ...(config.gid !== null && config.gid > 0 ? { gid: config.gid } : {}),
  };
}
