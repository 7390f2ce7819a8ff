import type { SandboxSpec } from "./sandbox-spec-schema.ts";

const MIB = 1024 * 1024;

/** What one run (or a `doctor --deep` probe of it) is given: the project's policy and its dirs. */
export interface RunSandboxInput {
  /** Names the per-run cgroup (1-64 of [A-Za-z0-9_.-]; other characters are dropped). */
  id: string;
  checkoutDir: string;
  controlDir: string;
  /** Host paths bound read-only at the same place (git metadata, the prompt, overseer-agent, the CLI's install). */
  readOnlyBinds: readonly string[];
  /** Commands runnable with no environment (`env -i overseer-agent`): name → host file. */
  commands: Readonly<Record<string, string>>;
  /** Host paths masked inside (the worker's data dir: other projects' mirrors and checkouts). */
  hiddenPaths: readonly string[];
  /** The complete environment of the command. */
  env: Readonly<Record<string, string>>;
  /** The project's `network_allow_hosts`; empty = no network at all. */
  networkAllowHosts: readonly string[];
  pidsMax: number;
  memoryMb: number;
  cpuSeconds: number;
  /** Largest file one process may write (the run's disk limit plus a margin); null = not capped. */
  fileSizeBytes?: number | null;
  /** The run image's unpacked root filesystem (the image cache's), or absent for the host's system. */
  rootfs?: string;
  /** The image's unprivileged user, when it has one. */
  uid?: number;
  gid?: number;
}

/**
 * The sandbox spec of a run, from the project's runner-config policy. The worker builds every
 * run's sandbox with it, and `overseer doctor --deep` its probes, so a probe meets exactly the
 * sandbox a run does: the same binds, environment, egress allow-list and limits.
 */
export function runSandboxSpec(input: RunSandboxInput): SandboxSpec {
  return {
    runId: input.id.replace(/[^A-Za-z0-9_.-]/g, "").slice(0, 64),
    checkoutDir: input.checkoutDir,
    controlDir: input.controlDir,
    readOnlyBinds: [...input.readOnlyBinds],
    commands: { ...input.commands },
    hiddenPaths: [...input.hiddenPaths],
    env: { ...input.env },
    network:
      input.networkAllowHosts.length > 0
        ? { mode: "proxy", allowHosts: [...input.networkAllowHosts] }
        : { mode: "none" },
    limits: {
      pidsMax: input.pidsMax,
      memoryBytes: input.memoryMb * MIB,
      cpuSeconds: input.cpuSeconds,
      ...(input.fileSizeBytes == null ? {} : { fileSizeBytes: input.fileSizeBytes }),
    },
    ...(input.rootfs === undefined ? {} : { rootfs: input.rootfs }),
    ...(input.uid === undefined ? {} : { uid: input.uid }),
    ...(input.gid === undefined ? {} : { gid: input.gid }),
  };
}
