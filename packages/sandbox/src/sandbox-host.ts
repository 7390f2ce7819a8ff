import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { detectCgroupPlan } from "./cgroup-limits.ts";
import { canAccess } from "./path-access.ts";

/**
 * Where the sandbox runs: on a host or inside a container, and whether per-run cgroup limits
 * can be set there (a writable, delegated cgroup subtree) or only the container's own limits
 * apply. The worker logs it at start; `overseer doctor` prints it.
 */
export interface ContainerDetection {
  container: boolean;
  /** `docker`, `podman`, `kubernetes`, `containerd`, `lxc`, or `unknown` inside an unnamed runtime; null on a host. */
  runtime: string | null;
  /** What gave it away (files, cgroup paths, the `container` variable). */
  evidence: string[];
}

export interface SandboxHost {
  container: ContainerDetection;
  cgroups: {
    /** True when per-run cgroups can be created with at least one limit controller. */
    delegated: boolean;
    /** Controllers a run's cgroup can use: pids, memory, cpu. */
    controllers: string[];
    notes: string[];
  };
  /** One line for logs and doctor. */
  summary: string;
}

const CGROUP_RUNTIMES: [RegExp, string][] = [
  [/kubepods/, "kubernetes"],
  [/libpod/, "podman"],
  [/docker/, "docker"],
  [/containerd|cri-containerd/, "containerd"],
  [/\/lxc\b|lxc\.payload/, "lxc"],
];

/** Where `detectContainer` looks unless told otherwise: the host's own root. */
export const CONTAINER_DETECTION_DEFAULTS = Object.freeze({ root: "/" });

/**
 * Container signs under `root` (default `/`): `/.dockerenv` (Docker), `/run/.containerenv`
 * (Podman), runtime names in `/proc/1/cgroup`, and the `container` variable runtimes set.
 */
export async function detectContainer(
  options: { root?: string; env?: Readonly<Record<string, string | undefined>> } = {},
): Promise<ContainerDetection> {
  const root = options.root ?? CONTAINER_DETECTION_DEFAULTS.root;
  const env = options.env ?? process.env;
  const evidence: string[] = [];
  const runtimes: string[] = [];
  if (await canAccess(join(root, ".dockerenv"))) {
    evidence.push("/.dockerenv");
    runtimes.push("docker");
  }
  if (await canAccess(join(root, "run/.containerenv"))) {
    evidence.push("/run/.containerenv");
    runtimes.push("podman");
  }
  const initCgroup = await readFile(join(root, "proc/1/cgroup"), "utf8").catch(() => "");
  for (const [pattern, runtime] of CGROUP_RUNTIMES) {
    const line = initCgroup.split("\n").find((l) => pattern.test(l));
    if (line !== undefined) {
      evidence.push(`/proc/1/cgroup: ${line.trim()}`);
      runtimes.push(runtime);
      break;
    }
  }
  const variable = env.container?.trim();
  if (variable) {
    evidence.push(`container=${variable}`);
    runtimes.push(variable);
  }
  if (evidence.length === 0) return { container: false, runtime: null, evidence };
  // The most specific sign wins: an orchestrator over the engine it drives.
  const runtime = runtimes.includes("kubernetes") ? "kubernetes" : (runtimes[0] ?? "unknown");
  return { container: true, runtime, evidence };
}

/** Container detection plus whether per-run cgroup limits are delegated here, with one summary line. */
export async function detectSandboxHost(options: { root?: string } = {}): Promise<SandboxHost> {
  const [container, plan] = await Promise.all([detectContainer(options), detectCgroupPlan()]);
  const controllers = (["pids", "memory", "cpu"] as const).filter((c) => plan[c] !== null);
  const cgroups = { delegated: controllers.length > 0, controllers: [...controllers], notes: plan.notes };
  const where = container.container
    ? `inside a container (${container.runtime}: ${container.evidence.join(", ")})`
    : "on the host (no container signs)";
  const limits = cgroups.delegated
    ? `per-run cgroup limits enforced here (${controllers.join(", ")} writable)`
    : container.container
      ? "per-run cgroup limits NOT enforced: the container's cgroup subtree is not delegated (read-only or no controllers); runs share the container's own pids/memory/cpu limits, and RLIMIT_CPU per process still applies"
      : "per-run cgroup limits NOT enforced: no writable cgroup subtree; RLIMIT_CPU per process still applies";
  return { container, cgroups, summary: `${where}; ${limits}` };
}
