import { TranscriptEntrySchema } from "@overseer/transcript";
import { z } from "zod";
import { ControlTransitionSchema } from "./control-file-schema.ts";
import { runEnvironmentSchema } from "./run-environment-schema.ts";
import { runPhaseSchema, traceparentSchema } from "./run-phases.ts";
import { runSandboxSchema, SANDBOX_DRIVER_NAMES } from "./sandbox-request-schema.ts";
import { DEFAULT_POOL, poolNameSchema } from "./worker-pool.ts";

/**
 * Queue payloads are versioned tagged unions (`v`, `kind`). The coordinator renders the prompt
 * and resolves the config into a `RunJob` before enqueueing; the job stays in Postgres
 * (`run_jobs`, while the run is live) and the queue carries only a `RunRef` naming it, which a
 * worker resolves with the run fence's read (one statement before a delivery starts). A queued
 * `RunJob` (an older coordinator, a test without Postgres) still runs as it is.
 */
export const RUN_JOB_VERSION = 1;

const argvSchema = z.array(z.string().min(1)).min(1);

export const hookSchema = z.object({ argv: argvSchema, timeoutMs: z.number().int().positive() });

/** Why approved work did not land: a conflict (with its files) or a failed check command. */
export const landingFailureSchema = z.object({
  reason: z.enum(["conflict", "check_failed"]),
  files: z.array(z.string()),
});

export const runJobSchema = z.object({
  v: z.literal(RUN_JOB_VERSION),
  kind: z.literal("run"),
  runId: z.string().min(1),
  projectId: z.string().min(1),
  taskId: z.string().min(1),
  agentId: z.string().min(1),
  action: z.enum(["execute", "review", "resolve"]),
  role: z.string().min(1),
  attempt: z.number().int().positive(),
  /**
   * The worker pool the run needs (the project's runner config `pool`): its job waits in that
   * pool's queue for a worker that serves it. Absent (a job queued before pools): `default`.
   */
  pool: poolNameSchema.default(DEFAULT_POOL),
  /** Git remote: local path or URL. */
  repo: z.string().min(1),
  /** The project's main branch: where `landingBranch` starts before anything landed on it. */
  mainBranch: z.string().min(1),
  /**
   * Where approved work lands (domain `landingBranch`): `mainBranch`, or `overseer/<main>` for a
   * working copy. Checkouts, the merge of the main branch after a failed landing and the landing
   * itself all build on it. Absent (a job from an older coordinator): `mainBranch`.
   */
  landingBranch: z.string().min(1).optional(),
  /** The task's own branch (`overseer/task/<id>`). */
  taskBranch: z.string().min(1),
  /**
   * The task branch head Postgres knows (the last submit), or null before the first one. A
   * worker whose mirror already has exactly this head need not fetch before checking out.
   */
  expectedTaskHead: z.string().nullable(),
  /**
   * The newest landing Postgres knows of in the run's project: the commit it put on `branch`
   * (run fence, read with the run's start). A new task's checkout trusts its mirror within the
   * freshness window only while the mirror's head of `branch` is this commit, so no run starts
   * from a base older than a landing Postgres recorded. Absent or null (an older coordinator, a
   * job queued whole, nothing landed yet): the freshness window alone decides.
   */
  expectedBase: z
    .object({ branch: z.string().min(1), sha: z.string().regex(/^[0-9a-f]{40}([0-9a-f]{24})?$/) })
    .nullable()
    .optional(),
  /**
   * The agent whose submit is under review (reviews only). A worker refuses an approve from
   * this agent, so no executor ever lands its own work.
   */
  executorAgentId: z.string().nullable().optional(),
  /** The full prompt, already rendered and bounded by max_prompt_chars. */
  prompt: z.string(),
  /** Harness argv before placeholder expansion. */
  argv: argvSchema,
  /** Environment given to the harness (allow-list + secrets), nothing else. */
  env: z.record(z.string(), z.string()),
  /** Names of the worker host's own variables to pass through (the project's env allow-list). */
  envAllow: z.array(z.string()),
  /** Values to redact from every log, output and stream of this run. */
  secretValues: z.array(z.string()),
  timeoutMs: z.number().int().positive(),
  idleTimeoutMs: z.number().int().nonnegative(),
  scope: z.array(z.string()),
  /** Paths exempt from the scope check besides `.overseer/**`. */
  metadataGlobs: z.array(z.string()),
  gitCommits: z.boolean(),
  author: z.object({ name: z.string().min(1), email: z.string().min(1) }),
  hooks: z.object({ setup: hookSchema.optional(), afterRun: hookSchema.optional() }),
  /** Files placed into the checkout, never committed (e.g. `.env` from the secret store). */
  files: z.record(z.string(), z.string()),
  sandbox: runSandboxSchema,
  /** Epoch ms at enqueue time (orchestration-overhead measurement). */
  enqueuedAt: z.number(),
  /**
   * Epoch ms when the run was created (claimed): its `queue_wait` phase starts here, so the
   * phases add up to the run's duration. Absent (an older coordinator): `enqueuedAt`.
   */
  createdAt: z.number().optional(),
  /**
   * The run's trace (W3C Trace Context), set only when the coordinator exports traces: the
   * worker's phase spans are children of it. Absent: the worker records no spans.
   */
  traceparent: traceparentSchema.optional(),
  /** The agent CLI (runner config `agent`): how usage and failure causes are read from its output. */
  agent: z.string().nullable().optional(),
  /** After a transition, how long the CLI may go on (to print final usage) before its group is stopped. */
  transitionLingerMs: z.number().int().nonnegative().optional(),
  /** Price of the project's model (runner config `prices[model]`), for CLIs that report no cost. */
  price: z
    .object({
      input_usd_per_mtok: z.number(),
      output_usd_per_mtok: z.number(),
      cached_input_usd_per_mtok: z.number().optional(),
      /** `project`: the runner config's `prices` (replaces the CLI's figure); `table`: Overseer's price table. */
      source: z.enum(["project", "table"]).optional(),
    })
    .nullable()
    .optional(),
  /** Host paths bound read-only into the sandbox (the CLI's install outside /usr). */
  readOnlyPaths: z.array(z.string()).optional(),
  /**
   * How an approve lands (runner config `landing`): `squash` or a reviewed-range `merge`, and
   * the check command run on the integrated tree before the push. Absent: squash, no check.
   */
  landing: z
    .object({
      strategy: z.enum(["squash", "merge"]),
      check: hookSchema.optional(),
      /**
       * Runner config `landing.mode: pull_request`: an approve lands nothing on the main branch;
       * the reviewed head is pushed, fast-forward only and inside the run fence, to this branch
       * (domain `pullRequestBranch`, `overseer/pr/<task>`), which the coordinator's forge runner
       * opens the pull request from. Absent: push mode (land on the landing branch).
       */
      pullRequestBranch: z.string().min(1).optional(),
      /**
       * `landing.mode: pull_request`, on every run of the project: the landing branch moves on
       * the forge (merges done there), not only through workers, so a checkout never trusts a
       * recent fetch or push of its own and always fetches.
       */
      viaPullRequests: z.literal(true).optional(),
    })
    .optional(),
  /**
   * Execute and resolve runs after a failed landing: merge the main branch into the task branch
   * before the agent starts (conflict markers committed in the conflicting files). Absent or
   * null: check out the task branch as it is.
   */
  mergeMain: landingFailureSchema.nullable().optional(),
});
export type RunJob = z.infer<typeof runJobSchema>;

/**
 * A reference to a run whose job is stored in Postgres (the run's row in `run_jobs`): its id and
 * the pool whose queue it waits in. `projectId` is absent when the queue held the run by id
 * (`runByIdSchema`): the fence's read of the stored job finds the run by its id alone.
 */
export const runRefSchema = z.object({
  v: z.literal(RUN_JOB_VERSION),
  kind: z.literal("run-ref"),
  runId: z.string().min(1),
  projectId: z.string().min(1).optional(),
  pool: poolNameSchema.default(DEFAULT_POOL),
});
export type RunRef = z.infer<typeof runRefSchema>;

/**
 * How a run queue's job carries a `RunRef` (what coordinators queue): its tag alone. The job's
 * id names the run (`run-<runId>`) and its queue names the pool, so the job's data holds no id
 * again: every value of the job's Redis hash then stays within Redis's default
 * `hash-max-listpack-value` (64 bytes) and the hash one compact listpack (~0.3 KB per queued or
 * running run instead of ~0.8 KB as a hash table).
 */
export const runByIdSchema = z.object({ v: z.literal(RUN_JOB_VERSION), kind: z.literal("run-by-id") });
export type RunById = z.infer<typeof runByIdSchema>;

/** What a run job delivered to a worker names: a reference or a whole job (an older coordinator, a test). */
export const runQueuePayloadSchema = z.discriminatedUnion("kind", [runRefSchema, runJobSchema]);
export type RunQueuePayload = z.infer<typeof runQueuePayloadSchema>;

/** A run queue's job data as stored: a run by id (what coordinators queue), a full reference or a whole job. */
export const queuedRunSchema = z.discriminatedUnion("kind", [runByIdSchema, runRefSchema, runJobSchema]);
export type QueuedRun = z.infer<typeof queuedRunSchema>;

/** The reference a run queue carries for `job`. */
export function runRefOf(job: Pick<RunJob, "runId" | "projectId" | "pool">): RunRef {
  return { v: RUN_JOB_VERSION, kind: "run-ref", runId: job.runId, projectId: job.projectId, pool: job.pool };
}

/** The branch a job's work builds on and lands on (`landingBranch`, else `mainBranch`). */
export function jobLandingBranch(job: Pick<RunJob, "landingBranch" | "mainBranch">): string {
  return job.landingBranch ?? job.mainBranch;
}

/**
 * What a run consumed, measured by the worker (the agent CLI's own report as it streamed, or
 * the control file's usage). No `costUsd`: nothing priced it (neither a price nor the CLI).
 */
const runUsageSchema = z.object({
  tokensIn: z.number().optional(),
  tokensOut: z.number().optional(),
  /** Input tokens served from the provider's cache (part of tokensIn). */
  tokensCached: z.number().optional(),
  costUsd: z.number().optional(),
  /** Where the numbers came from: `overseer-agent` (its flags) or the CLI's stream or session file. */
  source: z.string().optional(),
});
export type RunUsage = z.infer<typeof runUsageSchema>;
const usageSchema = runUsageSchema.optional();

/** How a run ended, as the worker saw it. */
export const runOutcomeSchema = z.discriminatedUnion("kind", [
  /**
   * The agent's control file, secrets redacted: the same schema the worker read it with.
   * `usage` here is what older workers sent; the result's own `usage` covers every outcome.
   */
  z.object({ kind: z.literal("transition"), transition: ControlTransitionSchema, usage: usageSchema }),
  z.object({
    kind: z.literal("timeout"),
    stalled: z.boolean(),
    /** How long the run ran. */
    seconds: z.number(),
    /** A stall: how long it had been idle when the watchdog ended it. */
    idleSeconds: z.number().optional(),
  }),
  z.object({
    kind: z.literal("no-transition"),
    detail: z.string(),
    crashed: z.boolean(),
    /** The agent exited 0 by itself without calling overseer-agent (no known cause in its output). */
    protocolNotFollowed: z.boolean().optional(),
  }),
  /** The worker refused or stopped the run for breaking a run rule (nothing was landed). */
  z.object({
    kind: z.literal("violation"),
    violation: z.enum(["forbidden_transition", "disk_limit"]),
    detail: z.string(),
  }),
  z.object({
    kind: z.literal("misconfigured"),
    reason: z.enum(["harness_not_configured", "configuration_error"]),
    message: z.string(),
  }),
]);
export type RunOutcome = z.infer<typeof runOutcomeSchema>;

export const runTranscriptSchema = z.object({
  /** The agent kind whose output was parsed (null: a custom CLI, every line kept raw). */
  agent: z.string().nullable(),
  entries: z.array(TranscriptEntrySchema),
  truncated: z.boolean(),
});
export type RunTranscript = z.infer<typeof runTranscriptSchema>;

export const runResultSchema = z.object({
  v: z.literal(RUN_JOB_VERSION),
  kind: z.literal("run-result"),
  runId: z.string(),
  projectId: z.string(),
  workerId: z.string(),
  outcome: runOutcomeSchema,
  /** What the run consumed, whatever its outcome (a failed or timed-out run has spent tokens too). */
  usage: usageSchema,
  /** Paths changed outside the task scope; non-empty means a violation (docs/state-machine.md rule 10). */
  scopeViolations: z.array(z.string()),
  commitSha: z.string().nullable(),
  branchHead: z.string().nullable(),
  landedSha: z.string().nullable(),
  landedBranch: z.string().nullable(),
  checkpointRef: z.string().nullable(),
  /**
   * An approve that did not land: a real conflict with the main branch, or the check command
   * failed on the integrated tree (`details`: git's messages or the check's output tail).
   */
  landingFailure: landingFailureSchema.extend({ details: z.string() }).nullable().optional(),
  /**
   * An approve in pull_request mode: the reviewed head, now on the pull request branch (nothing
   * landed on the main branch, so `landedSha` and `landedBranch` are null). Absent or null
   * otherwise.
   */
  pullRequestHead: z
    .object({ branch: z.string().min(1), sha: z.string().min(1) })
    .nullable()
    .optional(),
  /**
   * The digest of the run image the run ran on (the project's `sandbox.image`, resolved when the
   * run started). Absent or null: the worker's own system.
   */
  imageDigest: z
    .string()
    .regex(/^sha256:[a-f0-9]{64}$/)
    .nullable()
    .optional(),
  /**
   * The sandbox driver the run ran under (the project's `sandbox.driver` as this worker honoured
   * it, else the worker's own). Absent: a run refused before its sandbox was chosen.
   */
  sandboxDriver: z.enum(SANDBOX_DRIVER_NAMES).optional(),
  /**
   * The run environment the run used (README "Project images"): the repository's
   * `.overseer/environment.yml` it read (its blob), the image and where it came from, how many
   * setup commands ran and the agent CLI installed. Absent: a run that ended before its checkout.
   */
  environment: runEnvironmentSchema.optional(),
  exitCode: z.number().nullable(),
  signal: z.string().nullable(),
  durationMs: z.number(),
  output: z.string(),
  outputTruncated: z.boolean(),
  /**
   * The run's transcript (docs/transcripts.md), parsed by the worker as the output streamed and
   * bounded to OVERSEER_MAX_TRANSCRIPT_BYTES (the oldest entries go first, `truncated` says so).
   * Absent when the agent never ran.
   */
  transcript: runTranscriptSchema.optional(),
  timing: z.object({
    enqueuedAt: z.number(),
    pickedAt: z.number(),
    spawnedAt: z.number().nullable(),
    exitedAt: z.number().nullable(),
    reportedAt: z.number(),
    /** Milliseconds spent in each worker phase (fetch, checkout, sandbox, commit…). */
    phases: z.record(z.string(), z.number()).optional(),
    /**
     * The worker's phases in order, back to back from `queue_wait` (run-phases.ts); the
     * coordinator appends `result_applied` and stores the list with the run.
     */
    timeline: z.array(runPhaseSchema).optional(),
  }),
  /** The job's `traceparent`, handed back so the coordinator's spans join the run's trace. */
  traceparent: traceparentSchema.optional(),
});
export type RunResult = z.infer<typeof runResultSchema>;

export const runStartedSchema = z.object({
  v: z.literal(RUN_JOB_VERSION),
  kind: z.literal("run-started"),
  runId: z.string(),
  projectId: z.string(),
  workerId: z.string(),
  at: z.number(),
});
export type RunStarted = z.infer<typeof runStartedSchema>;

/**
 * A running run's usage so far (cumulative, sent when it changed): applied as the largest of
 * what the run has recorded, so repeats, reordering and redelivery never count twice and a
 * later, smaller report lowers nothing.
 */
export const runUsageMessageSchema = z.object({
  v: z.literal(RUN_JOB_VERSION),
  kind: z.literal("run-usage"),
  runId: z.string(),
  projectId: z.string(),
  workerId: z.string(),
  /** This worker's report number for the run (the message's job id). */
  seq: z.number().int().nonnegative(),
  usage: runUsageSchema,
});
export type RunUsageMessage = z.infer<typeof runUsageMessageSchema>;

export const resultMessageSchema = z.discriminatedUnion("kind", [
  runResultSchema,
  runStartedSchema,
  runUsageMessageSchema,
]);
export type ResultMessage = z.infer<typeof resultMessageSchema>;
