import { readFile } from "node:fs/promises";
import type { ConfigIssue } from "@overseer/input-errors";
import {
  ConfigError,
  describeReceived,
  expectedErrorMap,
  formatIssuePath,
  REDACTED,
  zodIssuesToConfigIssues,
} from "@overseer/input-errors";
import {
  DEFAULT_POOL,
  DEFAULT_SANDBOX_LIMITS,
  EGRESS_HOST_EXPECTED,
  egressHostRuleSchema,
  imageReferenceSchema,
  poolNameSchema,
  SANDBOX_DRIVER_NAMES,
} from "@overseer/run-contract";
import {
  ALWAYS_EXEMPT_GLOBS,
  findGlobProblem,
  formatFromExtension,
  formatSyntaxProblem,
  parseStructuredText,
  ROLE_PATTERN,
  SCOPE_GLOB_EXPECTED,
} from "@overseer/task-files";
import { z } from "zod";
import { AGENT_KINDS } from "./agent-kinds.ts";
import { forgeSchema, LANDING_MODES, pullRequestSchema } from "./landing-config-schema.ts";

/**
 * Per-project runner config (docs/runner-config.md).
 *
 * The Luma runner's JSON (`argv`, `commands_by_role`, `git_commits`, `max_sessions`,
 * `timeout_seconds`, `max_prompt_chars`) is accepted unchanged; that runner has no
 * other keys (docs/argus-compatibility.md). Everything Overseer adds is optional with a default, so its file is a
 * complete config. Unknown keys are rejected at every level with the list of known keys: a
 * typo such as `timeout_second` would otherwise silently keep the default.
 *
 * Security notes: `secrets` values reach the harness only as environment variables, are never
 * echoed in errors, and are meant to be fed to `createRedactor` (`runnerConfigSecretValues`).
 * Names of the worker's own run variables (`OVERSEER_*`, `LUMA_*`) cannot be allow-listed or
 * overridden, so a project cannot read the worker's token or spoof the run identity.
 */

const ROLE_EXPECTED = "a role name of letters, digits, ., _ or - (at most 64)";

const ENV_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Run variables the worker sets itself; see the module comment. */
const RESERVED_ENV_PREFIXES = ["OVERSEER_", "LUMA_"] as const;
const ENV_NAME_EXPECTED =
  "an environment variable name ([A-Za-z_][A-Za-z0-9_]*) not starting with OVERSEER_ or LUMA_";

const envName = z
  .string()
  .refine((v) => ENV_NAME_PATTERN.test(v) && !RESERVED_ENV_PREFIXES.some((p) => v.startsWith(p)), {
    error: ENV_NAME_EXPECTED,
  });

const ARG_EXPECTED = "a non-empty string without NUL characters";
const argvElement = z.string({ error: ARG_EXPECTED }).refine((v) => v !== "" && !v.includes("\0"), {
  error: ARG_EXPECTED,
});
/** A program and its arguments, run without a shell. Empty means "not configured". */
const argvSchema = z.array(argvElement, { error: "an array of strings (program and arguments)" });
const requiredArgv = argvSchema.min(1, { error: "a non-empty array of strings (program and arguments)" });

/** Longest duration any seconds field accepts: one year. */
const MAX_SECONDS = 31_536_000;
const MIB = 1024 * 1024;

function positive(expected: string) {
  const phrase = `${expected} (at most ${MAX_SECONDS})`;
  return z.number({ error: phrase }).positive({ error: phrase }).max(MAX_SECONDS, { error: phrase });
}
function nonNegative(expected: string) {
  const phrase = `${expected} (at most ${MAX_SECONDS})`;
  return z.number({ error: phrase }).min(0, { error: phrase }).max(MAX_SECONDS, { error: phrase });
}
function integer(min: number, max: number) {
  const expected = `an integer from ${min} to ${max}`;
  return z.int({ error: expected }).min(min, { error: expected }).max(max, { error: expected });
}

const roleKey = z.string().regex(ROLE_PATTERN, { error: ROLE_EXPECTED });

const GLOB_LIST_EXPECTED = `an array of globs (${SCOPE_GLOB_EXPECTED})`;
const globList = z.array(
  z
    .string({ error: SCOPE_GLOB_EXPECTED })
    .refine((g) => findGlobProblem(g) === undefined, { error: SCOPE_GLOB_EXPECTED }),
  { error: GLOB_LIST_EXPECTED },
);

const HOST_EXPECTED = EGRESS_HOST_EXPECTED;
/** The same schema the sandbox spec uses (egress-host-rule.ts in @overseer/run-contract): one grammar everywhere. */
const hostPattern = egressHostRuleSchema;

const CHECKOUT_PATH_EXPECTED =
  "a checkout-relative file path (no leading /, no . or .. segments, not inside .git, no control characters)";
function isCheckoutPath(p: string): boolean {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are rejected
  if (p === "" || /[\u0000-\u001f\u007f\\]/.test(p) || p.startsWith("/") || p.endsWith("/")) return false;
  const segments = p.split("/");
  return segments.every((s) => s !== "" && s !== "." && s !== "..") && segments[0] !== ".git";
}

const hookSchema = (defaultTimeout: number) =>
  z.strictObject({
    /** Program and arguments, run in the run's sandbox and checkout. */
    argv: requiredArgv,
    /** Hard limit for the hook; a hook that exceeds it fails the run. */
    timeout_seconds: positive("a number of seconds > 0").default(defaultTimeout),
  });

const FILE_EXPECTED = "exactly one of from_secret or content";
const placedFileSchema = z
  .strictObject({
    /** Name of a key in `secrets` whose value becomes the file content. */
    from_secret: z.string().optional(),
    /** Literal file content (not secret: it is stored with the config). */
    content: z.string().optional(),
  })
  .refine((f) => (f.from_secret === undefined) !== (f.content === undefined), { error: FILE_EXPECTED });

const sandboxSchema = z.strictObject({
  /**
   * Driver for this project's runs; default: the worker's `OVERSEER_SANDBOX`. `bwrap` needs a
   * bwrap worker; `none` runs only on a worker that allows it (`OVERSEER_SANDBOX_UNSAFE_NONE=1`).
   * A worker that cannot honour it refuses the run as a configuration error (the project pauses
   * with an incident); it never runs it under another driver.
   */
  driver: z
    .enum(SANDBOX_DRIVER_NAMES, {
      error: (issue) =>
        issue.input === "docker"
          ? `one of ${SANDBOX_DRIVER_NAMES.join(", ")} (the docker driver was removed: runs are sandboxed by bwrap, inside containers too)`
          : `one of ${SANDBOX_DRIVER_NAMES.join(", ")}`,
    })
    .optional(),
  /**
   * The project's run image (`python:3.12`, `registry.example.com/ci:1`, `name@sha256:…`): the
   * worker pulls it, unpacks it once per digest and runs the sandbox on its root filesystem
   * instead of the worker's /usr. Absent: the worker's own system. The digest is recorded per run.
   */
  image: imageReferenceSchema.optional(),
  /** Most processes and threads a run may have (pids cgroup). Default 512 (`DEFAULT_SANDBOX_LIMITS`). */
  pids_max: integer(1, 1_000_000).default(DEFAULT_SANDBOX_LIMITS.pidsMax),
  /** Memory limit of a run in MiB. Default 4096 (`DEFAULT_SANDBOX_LIMITS`). */
  memory_mb: integer(16, 1_048_576).default(DEFAULT_SANDBOX_LIMITS.memoryBytes / MIB),
  /** CPU time limit of a run in seconds (RLIMIT_CPU). Default 3600 (`DEFAULT_SANDBOX_LIMITS`). */
  cpu_seconds: integer(1, MAX_SECONDS).default(DEFAULT_SANDBOX_LIMITS.cpuSeconds),
  /**
   * Host paths bound read-only at the same place (the agent CLI's install when it is outside
   * /usr, e.g. a per-version npm prefix). Never `/`, /proc, /sys or /dev. Default [].
   */
  read_only_paths: z
    .array(
      z
        .string()
        .refine(
          (p) => p.startsWith("/") && p !== "/" && !/^\/(proc|sys|dev)(\/|$)/.test(p) && !p.includes("\0"),
          {
            error: "an absolute host path other than /, /proc, /sys or /dev",
          },
        ),
      { error: "an array of absolute host paths" },
    )
    .default([]),
  /** Disk a run may add to its checkout in MiB; the worker's OVERSEER_RUN_DISK_MB caps it. */
  disk_mb: integer(1, 1_048_576).optional(),
});

const gitSchema = z.strictObject({
  /** Commit author name for agent commits. Default "Overseer Agent". */
  author_name: z.string().min(1).default("Overseer Agent"),
  /** Commit author e-mail for agent commits. Default "agent@overseer.local". */
  author_email: z
    .string()
    .regex(/^[^\s@<>]+@[^\s@<>]+$/, { error: "an e-mail address" })
    .default("agent@overseer.local"),
});

const SECRET_FIELD = "secrets";
/** Paths whose values are never printed: every `secrets` value, `forge.token` and `forge.app.private_key`. */
function isSecretPath(path: readonly PropertyKey[]): boolean {
  return (
    path[0] === SECRET_FIELD ||
    (path[0] === "forge" && (path[1] === "token" || (path[1] === "app" && path[2] === "private_key")))
  );
}
const LANDING_MODE_EXPECTED = `one of ${LANDING_MODES.map((m) => `"${m}"`).join(", ")}`;

export const RunnerConfigSchema = z.strictObject({
  // --- Luma runner keys (docs/argus-compatibility.md) ---
  /** Harness command (program + args, placeholders allowed). Empty: harness not configured. Default []. */
  argv: argvSchema.default([]),
  /** Per-role harness commands; `reviewer` is used for every review. Default {}. */
  commands_by_role: z
    .record(roleKey, requiredArgv, { error: "an object mapping role names to argv arrays" })
    .default({}),
  /** Commit each transition that changes files. Default true. */
  git_commits: z.boolean({ error: "true or false" }).default(true),
  /** New agent processes per `start`. Default 1000. */
  max_sessions: integer(1, 1_000_000).default(1000),
  /** Hard wall-clock limit per run; the process group is killed after it. Default 1800. */
  timeout_seconds: positive("a number of seconds > 0").default(1800),
  /** Largest prompt in characters; a prompt that cannot fit fails the run. Default 80000. */
  max_prompt_chars: integer(1, 10_000_000).default(80_000),

  // --- Overseer keys ---
  /** Seconds without output or file change before a run counts as stalled; 0 disables. Default 0. */
  idle_timeout_seconds: nonNegative("a number of seconds >= 0 (0 disables)").default(0),
  /** Attempts of a run that ends without a transition, before a remediation. Default 3. */
  attempts: integer(1, 100).default(3),
  /** Base delay between attempts (exponential). Default 5. */
  retry_backoff_seconds: nonNegative("a number of seconds >= 0").default(5),
  /** Runs of this project at the same time. Default 1. */
  concurrency: integer(1, 64).default(1),
  /** Agent CLI this config drives (`overseer init --agent`): selects how usage and failures are read from its output. Default null (generic). */
  agent: z
    .enum(AGENT_KINDS, { error: `one of ${AGENT_KINDS.join(", ")}, or null` })
    .nullable()
    .default(null),
  /**
   * After the agent's transition, how long its CLI may go on to print final usage before the
   * process group is stopped (it ends sooner when the CLI exits). Default 0.25; presets 20.
   */
  transition_linger_seconds: nonNegative("a number of seconds >= 0")
    .max(600, {
      error: "a number of seconds from 0 to 600",
    })
    .default(0.25),
  /** Model the agent CLI uses (set by presets): selects the `prices` entry. Default null. */
  model: z.string().min(1).nullable().default(null),
  /**
   * USD per million tokens by model; the entry for `model` prices every run (CLIs that report no
   * cost, gateways with their own rates), else the CLI's own cost figure is used:
   * `{ "gpt-5-codex": { input_usd_per_mtok: 1.25, output_usd_per_mtok: 10, cached_input_usd_per_mtok: 0.125 } }`.
   * Default {}.
   */
  prices: z
    .record(
      z.string().min(1),
      z.strictObject({
        input_usd_per_mtok: z.number({ error: "a price >= 0" }).min(0, { error: "a price >= 0" }),
        output_usd_per_mtok: z.number({ error: "a price >= 0" }).min(0, { error: "a price >= 0" }),
        cached_input_usd_per_mtok: z
          .number({ error: "a price >= 0" })
          .min(0, { error: "a price >= 0" })
          .optional(),
      }),
      { error: "an object mapping model names to { input_usd_per_mtok, output_usd_per_mtok }" },
    )
    .default({}),
  /** Plain (non-secret) environment variables for the harness (name → value). Default {}. */
  env: z
    .record(
      envName,
      z.string({ error: "a string" }).refine((v) => !v.includes("\0"), { error: "a string without NUL" }),
      { error: "an object mapping variable names to string values" },
    )
    .default({}),
  /** Host environment variables passed to the harness. Default []. */
  env_allow: z.array(envName, { error: `an array of variable names (${ENV_NAME_EXPECTED})` }).default([]),
  /** Secret environment variables for the harness (name → value); redacted everywhere. Default {}. */
  secrets: z
    .record(
      envName,
      z.string({ error: "a string" }).refine((v) => !v.includes("\0"), { error: "a string without NUL" }),
      {
        error: "an object mapping variable names to string values",
      },
    )
    .default({})
    .meta({ secret: true }),
  /** Hosts the sandbox lets runs reach; empty keeps the network off. Default []. */
  network_allow_hosts: z.array(hostPattern, { error: `an array of hosts (${HOST_EXPECTED})` }).default([]),
  /**
   * The worker pool this project's runs need (docs/runner-config.md#pool): only workers whose
   * `OVERSEER_WORKER_POOLS` lists it take them; while none is live the project shows "waiting for
   * a worker in pool X". Applies to runs created after a change. Default `default`.
   */
  pool: poolNameSchema.default(DEFAULT_POOL),
  /** Sandbox driver and limits. */
  sandbox: sandboxSchema.prefault({}),
  /** Commands around each run: `setup` after checkout, `after_run` after the agent. */
  hooks: z
    .strictObject({
      /** Before the agent (install dependencies, generate files). Default timeout 600 s. */
      setup: hookSchema(600).optional(),
      /** After the agent ends. Default timeout 300 s. */
      after_run: hookSchema(300).optional(),
    })
    .default({}),
  /**
   * How approved work lands (docs/state-machine.md rule 3): pushed to the main branch (`mode:
   * push`, default) or through a pull request on `forge` (`mode: pull_request`).
   */
  landing: z
    .strictObject({
      /** `push` (default): the worker pushes approved work to the main branch; `pull_request`: through a PR on `forge`. */
      mode: z
        .enum(LANDING_MODES, {
          error: (issue) =>
            typeof issue.input === "string" &&
            /^(pr|pull-?request|pullrequest|merge_request|mr)$/i.test(issue.input)
              ? `${LANDING_MODE_EXPECTED} (did you mean "pull_request"?)`
              : LANDING_MODE_EXPECTED,
        })
        .default("push"),
      /**
       * Only the reviewed head's tree lands, never the task branch's history (rejected attempts
       * stay off the main branch): `squash` (one commit with the task's trailers on the main
       * branch) or `merge` (that commit on the task's branch point, merged by a merge commit).
       * Default squash.
       */
      strategy: z
        .enum(["squash", "merge"], {
          error: (issue) =>
            issue.input === "rebase"
              ? 'one of "squash", "merge" (rebase was removed: it replayed attempts a reviewer rejected onto the main branch; squash keeps a linear history)'
              : 'one of "squash", "merge"',
        })
        .default("squash"),
      /**
       * Run in the sandbox on the integrated tree of a non-fast-forward landing, before it is
       * pushed; a failure lands nothing and sends the task back to an executor with the output's
       * tail. The setup hook runs first. Default timeout 600 s.
       */
      check_command: hookSchema(600).optional(),
      /** Pull request settings, read only in `pull_request` mode; every key has a default. */
      pull_request: pullRequestSchema.prefault({}),
    })
    .prefault({}),
  /**
   * The forge pull requests live on: required when `landing.mode` is `pull_request`. Its
   * `token` is a secret (redacted like `secrets`) used host-side only.
   */
  forge: forgeSchema.optional(),
  /** Files placed into each checkout (path → source), never committed. Default {}. */
  files: z
    .record(z.string().refine(isCheckoutPath, { error: CHECKOUT_PATH_EXPECTED }), placedFileSchema, {
      error: "an object mapping checkout paths to { from_secret } or { content }",
    })
    .default({}),
  /** Harness command `doctor --deep` runs to prove the harness works. Default []. */
  probe_argv: argvSchema.default([]),
  /** Generated files exempt from scope checks, besides the always-exempt `.overseer/**`. Default []. */
  metadata_globs: globList.default([]),
  /** Spend (USD, from run usage) at which scheduling pauses; null: no budget. Default null. */
  budget_usd: z
    .number({ error: "a number of dollars >= 0, or null" })
    .min(0, { error: "a number of dollars >= 0, or null" })
    .nullable()
    .default(null),
  /**
   * Tokens (input + output of every run, priced or not) at which scheduling pauses; null: no
   * token budget. Bounds a model no price covers, which budget_usd cannot see. Default null.
   */
  budget_tokens: z
    .number({ error: "a whole number of tokens >= 1, or null" })
    .int({ error: "a whole number of tokens >= 1, or null" })
    .min(1, { error: "a whole number of tokens >= 1, or null" })
    .nullable()
    .default(null),
  /**
   * Who approves a mission planner's task graph: `reviewer` (the fresh reviewer's approve
   * imports it) or `operator` (after the reviewer's approve, a "Needs you" card with the
   * proposed tasks; only the operator's approve imports it). Default reviewer.
   */
  plan_approval: z.enum(["reviewer", "operator"], { error: "reviewer or operator" }).default("reviewer"),
  /** Text opening every prompt of the project. Default "". */
  master_prompt: z.string().default(""),
  /** Extra prompt text per role. Default {}. */
  role_notes: z.record(roleKey, z.string(), { error: "an object mapping role names to text" }).default({}),
  /** Identity of agent commits. */
  git: gitSchema.prefault({}),
});

export type RunnerConfig = z.output<typeof RunnerConfigSchema>;
/** The config as written in a file: every key optional. */
export type RunnerConfigInput = z.input<typeof RunnerConfigSchema>;

/** The three things a run can do (docs/state-machine.md, entities). */
export type RunnerAction = "execute" | "review" | "resolve";

/**
 * Validates a runner config. Throws `ConfigError` whose message has one line per bad field:
 * `source: field.path: expected X, received Y`. Secret values are never printed.
 */
export function parseRunnerConfig(input: unknown, source: string): RunnerConfig {
  const result = RunnerConfigSchema.safeParse(input, { error: expectedErrorMap });
  const issues = result.success ? [] : zodIssuesToConfigIssues(result.error.issues, input, { isSecretPath });
  issues.push(...crossCheck(input));
  if (!result.success || issues.length > 0) {
    throw new ConfigError(source, issues, `Fix these fields in ${source}; see the runner config reference.`);
  }
  return result.data;
}

/**
 * Reads a runner config file: YAML for `.yaml`/`.yml`, JSON otherwise. Unreadable files and
 * syntax errors are `ConfigError`s too.
 */
export async function loadRunnerConfigFile(path: string): Promise<RunnerConfig> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new ConfigError(path, [
      { path: "(file)", expected: "a readable JSON or YAML file", received: `error ${code}` },
    ]);
  }
  const format = formatFromExtension(path) ?? "json";
  const parsed = parseStructuredText(text, format);
  if (!parsed.ok) {
    throw new ConfigError(
      path,
      parsed.problems.map((p) => ({
        path: "(syntax)",
        expected: `valid ${format.toUpperCase()}`,
        received: formatSyntaxProblem(p),
      })),
    );
  }
  return parseRunnerConfig(parsed.value, path);
}

/**
 * The argv for a run (docs/runner-config.md): reviews use `commands_by_role.reviewer`, else the task role's
 * command, else `argv`; execute and resolve use the role's command, else `argv`. An empty
 * result means the harness is not configured, which the caller turns into an incident.
 */
export function commandForRole(config: RunnerConfig, role: string, action: RunnerAction): readonly string[] {
  const byRole = config.commands_by_role;
  const own = (name: string) => (Object.hasOwn(byRole, name) ? byRole[name] : undefined);
  const chosen = (action === "review" ? own("reviewer") : undefined) ?? own(role) ?? config.argv;
  return [...chosen];
}

/** Every secret value of the config, for `createRedactor` / `createLogger({ secrets })`. */
export function runnerConfigSecretValues(config: RunnerConfig): string[] {
  const forge = config.forge;
  return [
    ...Object.values(config.secrets),
    ...(forge?.token !== undefined ? [forge.token] : []),
    ...(forge?.app ? [forge.app.private_key] : []),
  ];
}

/** A copy safe to show or store in logs/API answers: secret values replaced by `[REDACTED]`. */
export function redactRunnerConfig(config: RunnerConfig): RunnerConfig {
  return {
    ...config,
    secrets: Object.fromEntries(Object.keys(config.secrets).map((name) => [name, REDACTED])),
    ...(config.forge ? { forge: redactedForge(config.forge) } : {}),
  };
}

function redactedForge(forge: NonNullable<RunnerConfig["forge"]>): NonNullable<RunnerConfig["forge"]> {
  return {
    ...forge,
    ...(forge.token !== undefined ? { token: REDACTED } : {}),
    ...(forge.app ? { app: { ...forge.app, private_key: REDACTED } } : {}),
  };
}

/** Scope-check exemptions of a project: `.overseer/**` plus its `metadata_globs`. */
export function exemptGlobsFor(config: RunnerConfig): string[] {
  return [...ALWAYS_EXEMPT_GLOBS, ...config.metadata_globs];
}

/**
 * Relations between fields, checked on the raw input so they are reported together with
 * field errors (zod skips object refinements once a field failed).
 */
function crossCheck(input: unknown): ConfigIssue[] {
  if (!isPlainObject(input)) return [];
  const issues: ConfigIssue[] = [];
  const secrets = isPlainObject(input.secrets) ? input.secrets : {};
  const secretNames = Object.keys(secrets);
  if (Array.isArray(input.env_allow)) {
    input.env_allow.forEach((name, i) => {
      if (typeof name === "string" && Object.hasOwn(secrets, name))
        issues.push({
          path: formatIssuePath(["env_allow", i]),
          expected: "a variable that is not also a secret",
          received: describeReceived(name),
          hint: "a name is either passed from the host or a secret, not both",
        });
    });
  }
  if (isPlainObject(input.env)) {
    for (const name of Object.keys(input.env)) {
      if (Object.hasOwn(secrets, name))
        issues.push({
          path: formatIssuePath(["env", name]),
          expected: "a variable that is not also a secret",
          received: describeReceived(name),
          hint: "a name is either a plain variable or a secret, not both",
        });
    }
  }
  issues.push(...forgeCrossCheck(input));
  if (isPlainObject(input.files)) {
    for (const [file, spec] of Object.entries(input.files)) {
      if (!isPlainObject(spec) || typeof spec.from_secret !== "string") continue;
      if (!Object.hasOwn(secrets, spec.from_secret))
        issues.push({
          path: formatIssuePath(["files", file, "from_secret"]),
          expected:
            secretNames.length > 0
              ? `the name of a key in secrets (${secretNames.sort().join(", ")})`
              : "the name of a key in secrets (none are defined)",
          received: describeReceived(spec.from_secret),
        });
    }
  }
  return issues;
}

/** `forge` is required in pull_request mode; GitHub and Gitea repositories are exactly owner/name. */
function forgeCrossCheck(input: Record<string, unknown>): ConfigIssue[] {
  const mode = isPlainObject(input.landing) ? input.landing.mode : undefined;
  if (mode === "pull_request" && input.forge === undefined) {
    return [
      {
        path: "forge",
        expected:
          "the forge settings { kind, url, repository, token } (required when landing.mode is pull_request)",
        received: "nothing",
        hint: "run `overseer init --project ID --update --forge github|gitlab|gitea --forge-url URL`, or add forge to the config, or set landing.mode: push",
      },
    ];
  }
  const forge = input.forge;
  if (!isPlainObject(forge)) return [];
  const auth = forgeAuthCheck(forge);
  if (auth) return [auth];
  if (typeof forge.repository !== "string") return [];
  if ((forge.kind === "github" || forge.kind === "gitea") && forge.repository.split("/").length !== 2) {
    return [
      {
        path: "forge.repository",
        expected: `owner/name (${forge.kind} repositories have exactly two segments; only GitLab has groups)`,
        received: describeReceived(forge.repository),
      },
    ];
  }
  return [];
}

/** Exactly one of `forge.token` and `forge.app`, and `app` on GitHub only. */
function forgeAuthCheck(forge: Record<string, unknown>): ConfigIssue | null {
  const hasToken = forge.token !== undefined;
  const hasApp = forge.app !== undefined;
  if (hasApp && forge.kind !== "github") {
    return {
      path: "forge.app",
      expected: "no app: GitHub Apps are GitHub's; GitLab and Gitea take a token",
      received: "an app",
      hint: `set forge.token (overseer init --update --forge ${String(forge.kind)} reads it from the environment)`,
    };
  }
  if (hasToken === hasApp) {
    return {
      path: hasToken ? "forge" : "forge.token",
      expected:
        "exactly one of forge.token (an access token) and forge.app (GitHub App id, installation_id, private_key)",
      received: hasToken ? "both" : "nothing (missing)",
      hint: "run `overseer init --project ID --update --forge KIND --forge-url URL` with the token (or the App) in the environment",
    };
  }
  return null;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
