import { mkdir, rm } from "node:fs/promises";
import path from "node:path";
import type { LandCheckOutcome, RepoMirror } from "@overseer/git";
import type { RunJob } from "@overseer/run-contract";
import { hookRunner, runEnv } from "./agent-phase.ts";
import { placeCheckoutFiles } from "./checkout-files.ts";
import type { RunExecutorDeps, RunPaths } from "./run-context.ts";

export interface LandingCheckContext {
  /** The run's paths; the check gets its own checkout beside them. */
  paths: RunPaths;
  redact: (text: string) => string;
  signal?: AbortSignal | undefined;
}

/**
 * The project's `landing.check_command` on an integrated commit (a merge or rebase made by
 * landBranch, in the mirror but not pushed): a fresh worktree of that commit with the placed
 * files, the setup hook, then the check — each in the run's sandbox like the hooks, with the
 * same environment. A failing setup hook fails the check. Nothing of the checkout is kept.
 */
export function landingCheck(
  job: RunJob,
  deps: Pick<RunExecutorDeps, "killGraceMs" | "sandboxFor">,
  mirror: RepoMirror,
  ctx: LandingCheckContext,
): ((sha: string) => Promise<LandCheckOutcome>) | undefined {
  const check = job.landing?.check;
  if (!check) return undefined;
  let n = 0;
  return async (sha) => {
    n += 1;
    const dir = path.join(ctx.paths.runDir, `land-check-${n}`);
    const paths: RunPaths = {
      ...ctx.paths,
      runDir: dir,
      checkout: path.join(dir, "checkout"),
      controlDir: path.join(dir, "control"),
    };
    await mkdir(paths.controlDir, { recursive: true, mode: 0o700 });
    const worktree = await mirror.addWorktree({
      base: sha,
      path: paths.checkout,
      neverCommit: Object.keys(job.files),
    });
    try {
      const dirs = worktree.gitDirs();
      paths.gitDirs = [...new Set([dirs.commonDir, dirs.worktreeGitDir])];
      await placeCheckoutFiles(paths.checkout, job.files);
      const wrap = await deps.sandboxFor(job, paths);
      const hook = hookRunner(deps, paths, runEnv(job, paths), wrap, ctx);
      if (job.hooks.setup) {
        const setup = await hook(job.hooks.setup);
        if (!setup.ok) return { ok: false, output: `setup hook failed (${how(setup)}):\n${setup.output}` };
      }
      const result = await hook(check);
      return result.ok
        ? { ok: true }
        : { ok: false, output: `check command failed (${how(result)}):\n${result.output}` };
    } finally {
      await worktree.remove();
      await rm(dir, { recursive: true, force: true });
    }
  };
}

function how(result: { timedOut: boolean; exitCode: number | null }): string {
  return result.timedOut ? "timed out" : `exit ${result.exitCode ?? "by signal"}`;
}
