/**
 * `npm run bench -- --only images` (issue 24): what a run on a project image costs at start.
 *
 * - first pull and unpack: skopeo from a loopback registry (Debian's docker-registry) into an
 *   empty image cache, then umoci unpack, as the worker does for a new digest;
 * - a cache hit: `ImageCache.acquire` of the same image by digest (the path of every later run);
 * - the sandbox start: bwrap on the worker's own root against bwrap on the image's rootfs, each
 *   against a plain spawn of `/bin/true` in the same loop (measureSpawnOverhead);
 * - `docker run --rm --network none` of the same image, when a Docker engine answers here;
 * - gVisor (`sandbox.driver: gvisor`): the same start on the host root and on the image rootfs
 *   under runsc (fewer iterations: each start is a new gVisor kernel), skipped with the reason
 *   where runsc is missing or fails its probe.
 *
 * Goal (issue 24): a cache-hit image run within +20 ms of plain bwrap: the acquire p50 plus the
 * start cost on the image minus the start cost on the host root, where a start cost is the
 * series' prepare + spawn + cleanup p50 less its own plain spawn p50.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import {
  createSandboxDriver,
  ImageCache,
  measureSpawnOverhead,
  percentile,
  type SandboxDriver,
} from "@overseer/sandbox";
import { execa } from "execa";
import {
  baseImage,
  builtImage,
  imagesSuiteSkipReason,
  type TestImageRecipe,
  TestRegistry,
} from "../images/test-registry.ts";

const GOAL_MS = 20;

/** The images suite's base image plus /usr/bin/true, the program every series starts. */
function benchImage(): TestImageRecipe {
  const base = baseImage("bench-1");
  return {
    ...base,
    name: "overseer-bench/base",
    rootfs: { ...base.rootfs, programs: [...(base.rootfs?.programs ?? []), "/usr/bin/true"] },
  };
}

const round = (value: number) => Math.round(value * 100) / 100;

async function timed<T>(work: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const started = performance.now();
  const value = await work();
  return { ms: performance.now() - started, value };
}

/** Why `docker run` cannot be measured here, or null when an engine answers. */
async function dockerSkipReason(): Promise<string | null> {
  const info = await execa("docker", ["info", "--format", "{{.ServerVersion}}"], { reject: false });
  if (info.exitCode === 0) return null;
  return `no Docker engine answers (docker info: ${(info.stderr || info.stdout || "docker not found").split("\n")[0]}); start one as scripts/test-deploy.sh does`;
}

/** `docker run --rm --network none IMAGE /bin/true`, the image loaded from the same OCI layout. */
async function measureDockerRun(layout: string, iterations: number): Promise<Record<string, unknown>> {
  const tag = "overseer-bench/base:bench-1";
  await execa("skopeo", ["copy", "--quiet", `oci:${layout}:image`, `docker-daemon:${tag}`]);
  const samples: number[] = [];
  try {
    for (let i = 0; i < iterations + 2; i++) {
      const { ms } = await timed(() =>
        execa("docker", ["run", "--rm", "--network", "none", tag, "/bin/true"]),
      );
      if (i >= 2) samples.push(ms);
    }
  } finally {
    await execa("docker", ["rmi", "--force", tag], { reject: false });
  }
  return { iterations, p50Ms: round(percentile(samples, 50)), p99Ms: round(percentile(samples, 99)) };
}

/** Why gVisor cannot be measured here, or null when runsc works. */
async function gvisorSkipReason(driver: SandboxDriver): Promise<string | null> {
  const probe = await driver.probe();
  if (probe.version === null) return "runsc is not installed (apt-get install runsc)";
  const failed = [probe.writeOutsideDenied, probe.networkDenied, probe.privilegesDropped].filter(
    (c) => !c.ok,
  );
  return failed.length > 0
    ? `runsc fails its probe: ${[...probe.problems, ...failed.map((c) => c.detail)].join("; ")}`
    : null;
}

/** gVisor's start on the host root and on the image rootfs, and its extra over the plain bwrap start. */
async function measureGvisor(
  rootfs: string,
  iterations: number,
  bwrapStartMs: number,
): Promise<Record<string, unknown>> {
  const driver = createSandboxDriver("gvisor");
  try {
    const skip = await gvisorSkipReason(driver);
    if (skip) return { skipped: skip };
    const runs = Math.min(iterations, 20);
    const hostRoot = await measureSpawnOverhead({ driver, iterations: runs, warmup: 2 });
    const onImage = await measureSpawnOverhead({ driver, iterations: runs, warmup: 2, spec: { rootfs } });
    return {
      version: await driver.version(),
      hostRoot,
      imageRootfs: onImage,
      startExtraVsPlainBwrapMs: round(onImage.totalP50Ms - onImage.plainP50Ms - bwrapStartMs),
    };
  } finally {
    await driver.dispose();
  }
}

export async function benchImageRuns(iterations: number): Promise<Record<string, unknown>> {
  const skip = await imagesSuiteSkipReason();
  if (skip) return { skipped: skip };
  const recipe = benchImage();
  const layout = await builtImage(recipe);
  const registry = await new TestRegistry().start();
  const dir = await mkdtemp(path.join(tmpdir(), "overseer-image-bench-"));
  const driver = createSandboxDriver("bwrap");
  try {
    const pushed = await registry.push(recipe);
    const cache = new ImageCache({ dir, insecureRegistries: [registry.host] });
    const first = await timed(() => cache.acquire(pushed.reference));
    await first.value.release();
    const byDigest = `${registry.host}/${recipe.name}@${pushed.digest}`;
    const hits: number[] = [];
    for (let i = 0; i < iterations; i++) {
      const hit = await timed(() => cache.acquire(byDigest));
      await hit.value.release();
      hits.push(hit.ms);
    }
    const hostRoot = await measureSpawnOverhead({ driver, iterations });
    const image = await cache.acquire(byDigest);
    // Each series' own plain spawn is taken off, so load that drifts between series cancels out;
    // total = prepare + spawn + cleanup, what a worker pays per agent start.
    const startCost = (series: typeof hostRoot) => series.totalP50Ms - series.plainP50Ms;
    let onImage: Awaited<ReturnType<typeof measureSpawnOverhead>>;
    let gvisor: Record<string, unknown>;
    try {
      onImage = await measureSpawnOverhead({ driver, iterations, spec: { rootfs: image.rootfs } });
      gvisor = await measureGvisor(image.rootfs, iterations, startCost(hostRoot));
    } finally {
      await image.release();
    }
    const acquireHitP50 = percentile(hits, 50);
    const cacheHitExtraMs = round(acquireHitP50 + startCost(onImage) - startCost(hostRoot));
    const dockerSkip = await dockerSkipReason();
    return {
      image: { reference: pushed.reference, digest: pushed.digest, sizeBytes: first.value.sizeBytes },
      firstPullAndUnpackMs: round(first.ms),
      cacheHitAcquireMs: { iterations, p50: round(acquireHitP50), p99: round(percentile(hits, 99)) },
      bwrapHostRoot: hostRoot,
      bwrapImageRootfs: onImage,
      cacheHitRunExtraVsPlainBwrapMs: {
        value: cacheHitExtraMs,
        goal: `≤ ${GOAL_MS}`,
        met: cacheHitExtraMs <= GOAL_MS,
      },
      dockerRun: dockerSkip ? { skipped: dockerSkip } : await measureDockerRun(layout, iterations),
      gvisor,
    };
  } finally {
    await driver.dispose();
    await registry.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
