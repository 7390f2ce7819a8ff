import { tmpdir } from "node:os";
import { resolve } from "node:path";
import {
  ConfigError,
  findRepositoryLocationProblem,
  loadRunnerConfigFile,
  parseRunnerConfig,
  type RunnerConfig,
} from "@overseer/config";
import { createProject, getProject, PROJECT_ID_PATTERN, updateProjectConfig } from "@overseer/db";
import { runGit } from "@overseer/git";
import { parseCommandArgs, requirePositive } from "../arg-parser.ts";
import { withDatabase } from "../cli-context.ts";
import { CommandFailed, EXIT_OK, UsageError } from "../cli-errors.ts";
import type { CliCommand } from "../command-registry.ts";

const usage =
  "overseer init --project ID --repo PATH|URL [--branch main] [--config runner.json] [--objective TEXT] [--name NAME] [--concurrency N] [--update]";

/** Registers a project (or updates it with --update): repository, branch, runner config, objective. */
export const initCommand: CliCommand = {
  path: ["init"],
  summary: "register a project: repository, branch, runner config, objective",
  usage,
  async run(args, io) {
    const { values } = parseCommandArgs(
      args,
      {
        project: { type: "string" },
        repo: { type: "string" },
        branch: { type: "string" },
        config: { type: "string" },
        objective: { type: "string" },
        name: { type: "string" },
        concurrency: { type: "string" },
        update: { type: "boolean" },
      },
      usage,
      false,
    );
    if (!values.project) throw new UsageError(`--project is required.\nUsage: ${usage}`);
    if (!PROJECT_ID_PATTERN.test(values.project)) {
      throw new UsageError(
        `--project must match ${PROJECT_ID_PATTERN} (lowercase slug), received "${values.project}".`,
      );
    }
    if (!values.repo && !values.update) throw new UsageError(`--repo is required.\nUsage: ${usage}`);
    const repoProblem = values.repo ? findRepositoryLocationProblem(values.repo) : undefined;
    if (repoProblem) throw new UsageError(`--repo ${JSON.stringify(values.repo)} ${repoProblem}.`);
    const concurrency = requirePositive(values.concurrency, "--concurrency");
    let config: RunnerConfig | undefined;
    try {
      config = values.config ? await loadRunnerConfigFile(resolve(io.cwd, values.config)) : undefined;
    } catch (error) {
      if (error instanceof ConfigError) throw new UsageError(error.message);
      throw error;
    }
    const repo =
      values.repo && !/^[a-z][a-z0-9+.-]*:\/\//i.test(values.repo) && !values.repo.includes("@")
        ? resolve(io.cwd, values.repo)
        : values.repo;
    const branch = values.branch ?? "main";
    if (repo) {
      const head = await lsRemoteHead(repo, branch).catch((error: Error) => {
        throw new CommandFailed(`Cannot read repository ${repo}: ${error.message}`);
      });
      if (head === null)
        io.err(
          `warning: branch "${branch}" does not exist yet in ${repo}; the first approved task will create it.`,
        );
    }
    return withDatabase(io, { migrate: true }, async ({ db }) => {
      const existing = await getProject(db, values.project as string);
      if (existing && !values.update) {
        throw new UsageError(`Project "${values.project}" already exists; pass --update to change it.`);
      }
      const runnerConfig = config ?? (existing ? undefined : parseRunnerConfig({}, "defaults"));
      if (existing) {
        await updateProjectConfig(db, existing.id, {
          runnerConfig: runnerConfig as Record<string, unknown> | undefined,
          objective: values.objective,
          concurrency: concurrency ?? config?.concurrency,
          ...(config ? { budgetUsd: config.budget_usd } : {}),
        });
        io.out(`updated project ${existing.id}`);
      } else {
        await createProject(db, {
          id: values.project as string,
          name: values.name,
          repo: repo as string,
          branch,
          objective: values.objective ?? "",
          runnerConfig: runnerConfig as Record<string, unknown>,
          concurrency: concurrency ?? runnerConfig?.concurrency ?? 1,
          budgetUsd: runnerConfig?.budget_usd ?? null,
        });
        io.out(
          `created project ${values.project} (${repo}, branch ${branch}); import tasks with \`overseer task import FILE --project ${values.project}\``,
        );
      }
      return EXIT_OK;
    });
  },
};

/** The branch's head on the remote, or null when the branch does not exist there. */
async function lsRemoteHead(repo: string, branch: string): Promise<string | null> {
  const { stdout } = await runGit(
    ["ls-remote", "--heads", "--end-of-options", repo, `refs/heads/${branch}`],
    {
      cwd: tmpdir(),
      hostConfig: true,
      timeoutMs: 30_000,
    },
  );
  return stdout.trim().split(/\s+/)[0] || null;
}
