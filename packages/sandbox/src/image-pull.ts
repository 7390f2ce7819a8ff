import { createHash } from "node:crypto";
import { readdir, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { type ImageReference, parseImageReference } from "@overseer/run-contract";
import { execa } from "execa";
import { SandboxError } from "./sandbox-errors.ts";

/**
 * Pulling one image and unpacking it, host-side: skopeo fetches it from its registry into an OCI
 * layout, umoci unpacks the layout into a runtime bundle (`rootfs/` plus the OCI runtime
 * `config.json` that carries the image's env, user and working directory). Registry credentials
 * stay with the worker (skopeo's auth file, `REGISTRY_AUTH_FILE`); nothing of this reaches a run.
 */

/** An image could not be resolved, pulled or unpacked; the message says what to check. */
export class ImagePullError extends SandboxError {
  override name = "ImagePullError";
}

export interface ImageToolOptions {
  /** skopeo binary. Default `skopeo` on PATH. */
  skopeoPath?: string;
  /** umoci binary. Default `umoci` on PATH. */
  umociPath?: string;
  /** Registries (`host[:port]`) reached over plain HTTP or unverified TLS (a local registry). */
  insecureRegistries?: readonly string[];
  /** Bound of one skopeo or umoci call. Default 600 000 ms. */
  timeoutMs?: number;
}

/** What the unpacked image asks of its runs (the OCI runtime config umoci wrote). */
export interface ImageRuntimeConfig {
  env: Record<string, string>;
  /** The image's user as numbers (umoci resolved a name against the image's /etc/passwd). */
  uid: number | null;
  gid: number | null;
  workingDir: string | null;
}

function registryOf(reference: ImageReference): string | null {
  const first = reference.name.split("/")[0] ?? "";
  return reference.name.includes("/") && /[.:]|^localhost$/.test(first) ? first : null;
}

function tlsFlag(reference: ImageReference, flag: string, options: ImageToolOptions): string[] {
  const registry = registryOf(reference);
  return registry !== null && (options.insecureRegistries ?? []).includes(registry) ? [`${flag}=false`] : [];
}

async function tool(
  binary: string,
  args: readonly string[],
  options: ImageToolOptions,
  what: string,
): Promise<Buffer> {
  try {
    const result = await execa(binary, args, {
      timeout: options.timeoutMs ?? 600_000,
      encoding: "buffer",
      // The manifest's exact bytes: its digest is their sha256.
      stripFinalNewline: false,
      stdin: "ignore",
    });
    return Buffer.from(result.stdout);
  } catch (error) {
    const failure = error as { code?: string; stderr?: Uint8Array; shortMessage?: string };
    if (failure.code === "ENOENT") {
      throw new ImagePullError(
        `${what}: ${binary} is not installed on this worker; install it (apt-get install skopeo umoci) or remove sandbox.image from the runner config`,
      );
    }
    const stderr = failure.stderr ? Buffer.from(failure.stderr).toString("utf8").trim() : "";
    throw new ImagePullError(`${what}: ${(stderr || failure.shortMessage || String(error)).slice(-600)}`);
  }
}

/**
 * The digest a reference names now: its own when it pins one, else the sha256 of the manifest
 * (or index) the registry serves for the tag: exactly what `name@digest` fetches afterwards.
 */
export async function resolveImageDigest(reference: string, options: ImageToolOptions = {}): Promise<string> {
  const parsed = parseImageReference(reference);
  if (parsed.digest !== null) return parsed.digest;
  const raw = await tool(
    options.skopeoPath ?? "skopeo",
    ["inspect", "--raw", ...tlsFlag(parsed, "--tls-verify", options), `docker://${reference}`],
    options,
    `cannot resolve image ${reference} (check the name and tag, and that this worker can reach the registry)`,
  );
  return `sha256:${createHash("sha256").update(raw).digest("hex")}`;
}

/** Pulls `name@digest` into `workDir/layout` and unpacks it to `workDir/bundle`; returns the bundle. */
export async function pullAndUnpack(
  reference: string,
  digest: string,
  workDir: string,
  options: ImageToolOptions = {},
): Promise<string> {
  const parsed = parseImageReference(reference);
  const layout = join(workDir, "layout");
  const bundle = join(workDir, "bundle");
  await tool(
    options.skopeoPath ?? "skopeo",
    [
      "copy",
      "--quiet",
      ...tlsFlag(parsed, "--src-tls-verify", options),
      `docker://${parsed.name}@${digest}`,
      `oci:${layout}:image`,
    ],
    options,
    `cannot pull image ${reference} (${digest})`,
  );
  // --rootless: no chown or mknod, so no capability beyond writing the cache (a worker container
  // has none to spare). Every file is then the worker's, which the sandbox shows as the agent's
  // own, read-only; device nodes of the image are skipped (the sandbox has its own /dev).
  await tool(
    options.umociPath ?? "umoci",
    ["unpack", "--rootless", "--image", `${layout}:image`, bundle],
    options,
    `cannot unpack image ${reference} (${digest})`,
  );
  await rm(layout, { recursive: true, force: true });
  // umoci's manifest of the unpacked tree serves `umoci repack` only: drop it.
  for (const entry of await readdir(bundle)) {
    if (entry.endsWith(".mtree")) await rm(join(bundle, entry), { force: true });
  }
  return bundle;
}

/** The env, user and working directory of an unpacked bundle (its OCI runtime config). */
export async function readRuntimeConfig(bundle: string): Promise<ImageRuntimeConfig> {
  const config = JSON.parse(await readFile(join(bundle, "config.json"), "utf8")) as {
    process?: { env?: string[]; user?: { uid?: number; gid?: number }; cwd?: string };
  };
  const env: Record<string, string> = {};
  for (const entry of config.process?.env ?? []) {
    const equals = entry.indexOf("=");
    if (equals > 0) env[entry.slice(0, equals)] = entry.slice(equals + 1);
  }
  return {
    env,
    uid: config.process?.user?.uid ?? null,
    gid: config.process?.user?.gid ?? null,
    workingDir: config.process?.cwd ?? null,
  };
}
