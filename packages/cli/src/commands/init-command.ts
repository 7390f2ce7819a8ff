import { readFile, realpath } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, resolve } from "node:path";
import { ProjectSchema } from "@overseer/api-contract";
import { getProject } from "@overseer/db";
import { landingBranch, landingHint, PROJECT_ID_PATTERN, type RepoKind } from "@overseer/domain";
import { createIntegrationBranch, repoKindOf, runGit } from "@overseer/git";
import { resolveExecutable } from "@overseer/harness";
import { ConfigError } from "@overseer/input-errors";
import {
  AGENT_KINDS,
  AGENT_PRESETS,
  type AgentKind,
  agentPresetConfig,
  type ForgeSettingsInput,
  findRepositoryLocationProblem,
  loadRunnerConfigFile,
  parseRunnerConfig,
  presetKeyEnv,
  type RunnerConfig,
  type RunnerConfigInput,
  unpricedBudgetWarning,
} from "@overseer/project-config";
import { formatFromExtension, parseStructuredText } from "@overseer/task-files";
import { createProject, TransitionApplier, updateProjectConfig } from "@overseer/transitions";
import type { z } from "zod";
import { parseCommandArgs, requirePositive } from "../arg-parser.ts";
import { withDatabase } from "../cli-context.ts";
import { CLI_DEFAULTS } from "../cli-defaults.ts";
import { CommandFailed, EXIT_OK, UsageError } from "../cli-errors.ts";
import type { CliIo } from "../cli-io.ts";
import type { CliCommand } from "../command-registry.ts";
import { commandTarget, describeTarget, withGateway } from "../command-target.ts";
import { type GatewayClient, GatewayHttpError } from "../gateway-client.ts";
import { forgeFromFlags } from "./init-forge.ts";

const usage =
  "overseer init --project ID --repo PATH|URL [--branch main] [--agent codex|claude|opencode|gemini|copilot [--model M] [--base-url URL] [--agent-bin PATH]] [--config runner.json] [--forge github|gitlab|gitea --forge-url URL [--forge-repo owner/name] [--forge-app-id N --forge-installation-id N]] [--objective TEXT] [--name NAME] [--concurrency N] [--update]";

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
        agent: { type: "string" },
        model: { type: "string" },
        "base-url": { type: "string" },
        "agent-bin": { type: "string" },
        forge: { type: "string" },
        "forge-url": { type: "string" },
        "forge-repo": { type: "string" },
        "forge-app-id": { type: "string" },
        "forge-installation-id": { type: "string" },
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
      config = await buildConfig(
        {
          config: values.config ? resolve(io.cwd, values.config) : undefined,
          agent: values.agent,
          model: values.model,
          baseUrl: values["base-url"],
          agentBin: values["agent-bin"] ? resolve(io.cwd, values["agent-bin"]) : undefined,
        },
        io,
      );
    } catch (error) {
      if (error instanceof ConfigError) throw new UsageError(error.message);
      throw error;
    }
    const repo =
      values.repo && !/^[a-z][a-z0-9+.-]*:\/\//i.test(values.repo) && !values.repo.includes("@")
        ? resolve(io.cwd, values.repo)
        : values.repo;
    const branch = values.branch ?? CLI_DEFAULTS.branch;
    const forgeFlags = {
      forge: values.forge,
      forgeUrl: values["forge-url"],
      forgeRepo: values["forge-repo"],
      forgeAppId: values["forge-app-id"],
      forgeInstallationId: values["forge-installation-id"],
    };
    const forgeFor = (projectRepo: string | undefined) =>
      forgeFromFlags({ ...forgeFlags, repo: projectRepo }, io.env);
    // Refuse bad forge flags before touching anything (on --update without --repo the
    // registered repository is known only later).
    if (!values.update || values.repo !== undefined || values["forge-repo"] !== undefined)
      forgeFor(values.repo);
    if (repo) {
      const head = await lsRemoteHead(repo, branch).catch((error: Error) => {
        throw new CommandFailed(`Cannot read repository ${repo}: ${error.message}`);
      });
      if (head === null)
        io.err(
          `warning: branch "${branch}" does not exist yet in ${repo}; the first approved task will create it.`,
        );
    }
    const settings: InitSettings = {
      id: values.project,
      name: values.name,
      repo,
      branch,
      objective: values.objective,
      concurrency,
      config,
      update: values.update ?? false,
      forge: values.forge === undefined ? null : forgeFor,
    };
    const unpriced = config ? unpricedBudgetWarning(config) : null;
    if (unpriced) io.err(`warning: ${unpriced}`);
    const target = commandTarget(io);
    io.err(describeTarget(target));
    return target.kind === "gateway"
      ? initThroughGateway(target.client, io, settings)
      : initInDatabase(io, settings);
  },
};

/** What `init` registers or changes, validated. */
interface InitSettings {
  id: string;
  name: string | undefined;
  repo: string | undefined;
  branch: string;
  objective: string | undefined;
  concurrency: number | undefined;
  config: RunnerConfig | undefined;
  update: boolean;
  /** `--forge …`: the forge section for the project's repository; null without --forge. */
  forge: ((repo: string | undefined) => ForgeSettingsInput | null) | null;
}

function createdLine(s: InitSettings): string {
  return `created project ${s.id} (${s.repo}, branch ${s.branch}); import tasks with \`overseer task import FILE --project ${s.id}\``;
}

/** POST /api/v1/projects (admin), or PATCH /api/v1/projects/{id} with --update. */
async function initThroughGateway(client: GatewayClient, io: CliIo, s: InitSettings): Promise<number> {
  return withGateway(async () => {
    if (s.update) {
      if (s.forge && !s.config)
        throw new UsageError(
          "Through the gateway, --update --forge needs the whole runner config (--config FILE and/or --agent NAME): the gateway never answers a project's secrets, so init cannot keep them. Or run it with DATABASE_URL on the coordinator's host.",
        );
      if (s.forge && s.config) {
        const current = await client.get(`/api/v1/projects/${encodeURIComponent(s.id)}`, ProjectSchema);
        s = { ...s, config: withForge(s.config, s.forge(s.repo ?? current.repo)) };
      }
      const body = {
        ...(s.config ? { runner_config: s.config, budget_usd: s.config.budget_usd } : {}),
        ...(s.objective !== undefined ? { objective: s.objective } : {}),
        ...((s.concurrency ?? s.config?.concurrency) !== undefined
          ? { concurrency: s.concurrency ?? s.config?.concurrency }
          : {}),
      };
      const project = await client.patch(`/api/v1/projects/${encodeURIComponent(s.id)}`, body, ProjectSchema);
      io.out(`updated project ${s.id}`);
      await announceLanding(io, project.repo, { repoKind: project.repo_kind, branch: project.branch });
      return EXIT_OK;
    }
    const runnerConfig = withForge(s.config ?? parseRunnerConfig({}, "defaults"), s.forge?.(s.repo) ?? null);
    let project: z.output<typeof ProjectSchema>;
    try {
      project = await client.post(
        "/api/v1/projects",
        {
          id: s.id,
          ...(s.name !== undefined ? { name: s.name } : {}),
          repo: s.repo,
          branch: s.branch,
          objective: s.objective ?? "",
          runner_config: runnerConfig,
          concurrency: s.concurrency ?? runnerConfig.concurrency,
          budget_usd: runnerConfig.budget_usd,
        },
        ProjectSchema,
      );
    } catch (error) {
      if (error instanceof GatewayHttpError && error.code === "already_exists")
        throw new UsageError(`Project "${s.id}" already exists; pass --update to change it.`);
      throw error;
    }
    io.out(createdLine(s));
    announceForge(io, runnerConfig);
    await announceLanding(io, project.repo, { repoKind: project.repo_kind, branch: project.branch });
    return EXIT_OK;
  });
}

/** The local path: Postgres at DATABASE_URL (created and migrated when needed). */
async function initInDatabase(io: CliIo, s: InitSettings): Promise<number> {
  return withDatabase(io, { migrate: true }, async ({ db }) => {
    const existing = await getProject(db, s.id);
    if (existing && !s.update) {
      throw new UsageError(`Project "${s.id}" already exists; pass --update to change it.`);
    }
    const registered = existing ?? { repo: s.repo as string, branch: s.branch };
    // Read again on --update (a project registered before repository kinds were recorded);
    // a repository this host cannot open keeps what was recorded.
    const repoKind = await repoKindOf(registered.repo, registered.branch).catch((error: Error) => {
      if (existing) return existing.repo_kind;
      throw new CommandFailed(`Cannot read repository ${registered.repo}: ${error.message}`);
    });
    const base = s.config ?? (existing ? undefined : parseRunnerConfig({}, "defaults"));
    const forge = s.forge?.(s.repo ?? registered.repo) ?? null;
    // --update --forge alone keeps the stored config (secrets included) and adds the forge.
    const runnerConfig =
      forge === null ? base : withForge(base ?? storedConfig(existing?.runner_config, s.id), forge);
    // Both go through the TransitionApplier: one transaction with the event and the NOTIFY
    // that wakes the coordinator and the gateway's watchers.
    const applier = new TransitionApplier({ db });
    if (existing) {
      await updateProjectConfig(applier, existing.id, {
        runnerConfig: runnerConfig as Record<string, unknown> | undefined,
        objective: s.objective,
        concurrency: s.concurrency ?? s.config?.concurrency,
        ...(s.config ? { budgetUsd: s.config.budget_usd } : {}),
        ...(repoKind !== existing.repo_kind ? { repoKind } : {}),
      });
      io.out(`updated project ${existing.id}`);
      if (runnerConfig) announceForge(io, runnerConfig);
    } else {
      await createProject(applier, {
        id: s.id,
        name: s.name,
        repo: s.repo as string,
        branch: s.branch,
        repoKind,
        objective: s.objective ?? "",
        runnerConfig: runnerConfig as Record<string, unknown>,
        concurrency: s.concurrency ?? runnerConfig?.concurrency ?? 1,
        budgetUsd: runnerConfig?.budget_usd ?? null,
      });
      io.out(createdLine(s));
      if (runnerConfig) announceForge(io, runnerConfig);
    }
    await announceLanding(io, registered.repo, { repoKind, branch: registered.branch });
    return EXIT_OK;
  });
}

/** The config with `forge` set and `landing.mode: pull_request`, validated again; unchanged without a forge. */
function withForge(config: RunnerConfig, forge: ForgeSettingsInput | null): RunnerConfig {
  if (forge === null) return config;
  try {
    return parseRunnerConfig(
      { ...config, landing: { ...config.landing, mode: "pull_request" }, forge },
      "runner config with --forge",
    );
  } catch (error) {
    if (error instanceof ConfigError) throw new UsageError(error.message);
    throw error;
  }
}

/** A project's stored config, parsed (an invalid one must be replaced with --config). */
function storedConfig(raw: unknown, id: string): RunnerConfig {
  try {
    return parseRunnerConfig(raw, `stored runner config of project ${id}`);
  } catch (error) {
    if (error instanceof ConfigError)
      throw new UsageError(`${error.message}\nReplace it: pass --config runner.json with --forge.`);
    throw error;
  }
}

/** One line naming where pull requests go (never the token). */
function announceForge(io: { out(text: string): void }, config: RunnerConfig): void {
  if (config.landing.mode !== "pull_request" || !config.forge) return;
  const { kind, url, repository } = config.forge;
  io.out(
    `approved work lands through pull requests on ${kind} ${url} (${repository}); check the token's rights with \`overseer doctor\``,
  );
}

/**
 * Says where approved work lands when it is not the branch itself (a working copy), and creates
 * that integration branch at the branch's head so `git merge` and reviews can name it at once.
 */
async function announceLanding(
  io: { out(text: string): void },
  repo: string,
  project: { repoKind: RepoKind; branch: string },
): Promise<void> {
  const hint = landingHint(project);
  if (hint === null) return;
  const landing = landingBranch(project);
  await createIntegrationBranch(repo, project.branch, landing);
  io.out(`${repo} is a working copy, which Overseer never writes to: ${hint}.`);
}

interface ConfigSources {
  config?: string;
  agent?: string;
  model?: string;
  baseUrl?: string;
  agentBin?: string;
}

/**
 * The runner config from `--agent` (a preset) and/or `--config` (a file whose keys override the
 * preset's), validated by the same schema every run uses, so a config init accepts never fails
 * at run time.
 */
async function buildConfig(
  sources: ConfigSources,
  io: { err(text: string): void; env: Readonly<Record<string, string | undefined>> },
): Promise<RunnerConfig | undefined> {
  if (sources.agent === undefined) {
    if (sources.model || sources.baseUrl || sources.agentBin)
      throw new UsageError("--model, --base-url and --agent-bin need --agent NAME.");
    return sources.config ? loadRunnerConfigFile(sources.config) : undefined;
  }
  if (!(AGENT_KINDS as readonly string[]).includes(sources.agent))
    throw new UsageError(`--agent must be one of ${AGENT_KINDS.join(", ")}, received "${sources.agent}".`);
  const kind = sources.agent as AgentKind;
  let preset: RunnerConfigInput;
  try {
    preset = agentPresetConfig(kind, {
      model: sources.model,
      baseUrl: sources.baseUrl,
      bin: sources.agentBin,
      env: io.env,
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (sources.agentBin) {
    const install = await installRootOf(sources.agentBin);
    if (install !== null) preset.sandbox = { ...preset.sandbox, read_only_paths: [install] };
  }
  warnWhenCliMissing(kind, sources.agentBin, io);
  const keyEnv = presetKeyEnv(kind, sources.baseUrl);
  if (!preset.secrets || Object.keys(preset.secrets).length === 0)
    io.err(
      `warning: ${keyEnv} is not set in this environment, so the project has no API key; set it and rerun with --update, or add secrets.${keyEnv} to --config.`,
    );
  const fromFile = sources.config ? await readRawConfig(sources.config) : {};
  return parseRunnerConfig(
    { ...preset, ...fromFile },
    `--agent ${kind}${sources.config ? ` + ${sources.config}` : ""}`,
  );
}

/**
 * The preset's CLI must be on the workers' PATH; where init runs (a gateway container, the
 * cluster host) shares the workers' image or host, so a CLI missing here is very likely missing
 * there too, and every run would stop with "codex not found". Says how to add one.
 */
function warnWhenCliMissing(
  kind: AgentKind,
  agentBin: string | undefined,
  io: { err(text: string): void; env: Readonly<Record<string, string | undefined>> },
): void {
  const { bin, npmPackage } = AGENT_PRESETS[kind];
  const program = agentBin ?? bin;
  if (resolveExecutable(program, io.env.PATH) !== null) return;
  io.err(
    `warning: ${program} (${npmPackage}) is not on this machine's PATH, so a worker sharing it cannot run this project's agent. Add the CLI at a pinned version: in the Overseer image, build it with --build-arg AGENT_CLIS="${npmPackage}@VERSION" (compose: OVERSEER_AGENT_CLIS="${npmPackage}@VERSION" docker compose build; infra/README.md, "Agent CLIs in the image"); on a host, npm install --global ${npmPackage}@VERSION, or name the program with --agent-bin PATH.`,
  );
}

/** The raw keys of a config file (validated together with the preset's afterwards). */
async function readRawConfig(path: string): Promise<Record<string, unknown>> {
  const config = await loadRunnerConfigFile(path);
  const text = await readFile(path, "utf8");
  const parsed = parseStructuredText(text, formatFromExtension(path) ?? "json");
  return parsed.ok && parsed.value !== null && typeof parsed.value === "object"
    ? (parsed.value as Record<string, unknown>)
    : (config as unknown as Record<string, unknown>);
}

/**
 * The directory to expose read-only for a CLI outside the sandbox's system paths: the npm
 * prefix holding its node_modules (the launcher and its native binary live there), else the
 * program's own directory. Null for programs under /usr (already visible).
 */
async function installRootOf(bin: string): Promise<string | null> {
  const real = await realpath(bin).catch(() => {
    throw new UsageError(`--agent-bin ${bin} does not exist.`);
  });
  if (real.startsWith("/usr/")) return null;
  const marker = real.indexOf("/node_modules/");
  const root = marker > 0 ? real.slice(0, marker) : dirname(real);
  const binMarker = bin.indexOf("/node_modules/");
  const linkRoot = binMarker > 0 ? bin.slice(0, binMarker) : dirname(bin);
  return root === linkRoot ? root : commonParent(root, linkRoot);
}

function commonParent(a: string, b: string): string {
  const as = a.split("/");
  const bs = b.split("/");
  let i = 0;
  while (i < as.length && i < bs.length && as[i] === bs[i]) i++;
  return as.slice(0, i).join("/") || "/";
}

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
