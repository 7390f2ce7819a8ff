import { agentCommands, type WrapCommand } from "@overseer/harness";
import type { RunJob } from "@overseer/run-contract";
import { runSandboxSpec, type SandboxDriver } from "@overseer/sandbox";
import type { RunPaths } from "./run-executor.ts";
import { imageIdentity, imageRunEnv, type RunImage } from "./run-image.ts";

const MIB = 1024 * 1024;

/**
 * Adapts a sandbox driver to the harness's `wrap` hook for one run: the checkout and
 * control dir writable; the worktree's git metadata, the prompt and the bundled commands
 * read-only (`overseer-agent` also in the sandbox's /bin, for agents that drop the environment); the worker's data dir (other projects' mirrors and checkouts) masked; network
 * off unless the project allow-lists hosts (then only through the egress proxy).
 * On the project's image (run-image.ts) the sandbox's system is the image's unpacked rootfs, with
 * the image's variables and unprivileged user.
 * Each prepared command is single-use: the setup hook, the agent and the after_run hook
 * each get their own (and their own cgroup).
 */
export function sandboxWrapFor(
  driver: SandboxDriver,
  job: RunJob,
  paths: RunPaths,
  dataDir: string,
  image: RunImage | null = null,
): WrapCommand {
  let n = 0;
  return async (argv, env) => {
    n += 1;
    const spec = runSandboxSpec({
      id: `${job.runId.replace(/[^A-Za-z0-9_.-]/g, "").slice(0, 56)}-${n}`,
      checkoutDir: paths.checkout,
      controlDir: paths.controlDir,
      readOnlyBinds: [
        ...paths.gitDirs,
        paths.agentBinDir,
        paths.promptFile,
        ...(paths.agentCli ? [paths.agentCli.root] : []),
        ...(job.readOnlyPaths ?? []),
      ],
      commands: agentCommands(paths.agentBinDir),
      hiddenPaths: [dataDir],
      env:
        image === null
          ? env
          : imageRunEnv(image.config.env, env, [
              paths.agentBinDir,
              ...(paths.agentCli ? [paths.agentCli.binDir] : []),
            ]),
      ...(image === null ? {} : { rootfs: image.rootfs, ...imageIdentity(image.config) }),
      networkAllowHosts: job.sandbox.networkAllowHosts,
      pidsMax: job.sandbox.pidsMax,
      memoryMb: job.sandbox.memoryMb,
      cpuSeconds: job.sandbox.cpuSeconds,
      // One file can never grow far past the run's disk limit, however fast it is written:
      // the cap sits 1 MiB above the limit, so the disk guard still sees the breach.
      fileSizeBytes: paths.diskLimitBytes === null ? null : paths.diskLimitBytes + MIB,
    });
    const prepared = await driver.prepare(argv, spec);
    return {
      file: prepared.file,
      args: [...prepared.args],
      env: { ...prepared.env },
      ...(prepared.preludeLaunch ? { preludeLaunch: prepared.preludeLaunch } : {}),
      cleanup: () => prepared.cleanup(),
      stop: (pid, options) => prepared.stop(pid, options),
      limitsReached: () => prepared.limitsReached(),
    };
  };
}
