import {
  LANDING_FAILURE_REASONS,
  MISSION_BOUNDS,
  MISSION_STATES,
  PROJECT_STATUSES,
  REPO_KINDS,
  RUN_ACTIONS,
  RUN_STATUSES,
  TASK_KINDS,
  TASK_STATUSES,
} from "@overseer/domain";
import { z } from "./openapi-zod.ts";
import {
  ARGUS_TASK_STATUSES,
  OpenPullRequestSchema,
  PullRequestPolicySchema,
  TaskPullRequestSchema,
} from "./pull-request-schemas.ts";
import { RunEnvironmentSchema } from "./run-environment-schemas.ts";

/** What the gateway answers: OpenAPI components and handler types; snake_case, ISO-8601 times. */

const isoTime = z.string().openapi({ format: "date-time", example: "2025-01-01T12:00:00.000Z" });
const nullableIso = isoTime.nullable();
const jsonObject = z.record(z.string(), z.unknown());

export const ErrorBodySchema = z
  .object({
    error: z.object({
      code: z.string().openapi({ example: "not_found" }),
      message: z.string().openapi({ example: "Project demo does not exist." }),
      details: jsonObject,
    }),
  })
  .openapi("Error");

/** A stale resolve: the card was already resolved with another option. */
export const StaleErrorSchema = z
  .object({
    error: z.object({ code: z.literal("stale"), message: z.string(), details: jsonObject }),
    resolved: z.literal(false),
    application_status: z.literal("stale"),
    resolution: z.object({
      resolution_id: z.string().nullable(),
      selected_option: z.string().nullable(),
      note: z.string().nullable(),
    }),
  })
  .openapi("StaleResolution");

export const DecisionOptionSchema = z
  .object({
    id: z.string().openapi({ example: "use_postgres" }),
    label: z.string(),
    description: z.string(),
    requires_note: z.boolean(),
  })
  .openapi("DecisionOption");

export const DecisionCardSchema = z
  .object({
    id: z.string().openapi({ example: "decision-S00-001.R1" }),
    item_id: z.string().openapi({ example: "S00-001.R1" }),
    revision: z.number().int(),
    status: z.enum(["pending", "resolved"]),
    title: z.string(),
    reason: z.string(),
    question: z.string(),
    evidence: z.array(z.object({ label: z.string(), path: z.string(), summary: z.string() })),
    options: z.array(DecisionOptionSchema),
    options_source: z.enum(["agent", "none"]),
    selected_option: z.string().nullable(),
    note: z.string().nullable(),
    resolution_id: z.string().nullable(),
    resolved_by: z.string().nullable(),
    created_at: isoTime,
    resolved_at: nullableIso,
  })
  .openapi("DecisionCard", {
    description:
      '"Needs you" card in the Argus shape. Option `custom` always means a free-text answer in `note`; `stop` cancels the item (docs/state-machine.md rule 12).',
  });

export const ActiveRunSchema = z
  .object({
    run_id: z.string(),
    task_id: z.string(),
    agent_id: z.string(),
    action: z.enum(RUN_ACTIONS),
    attempt: z.number().int(),
    number: z.number().int().openapi({
      description:
        "The run's number among its task's runs of the same action, counted from the stored runs: execute #1, execute #2, review #1… (`attempt` is the failure-retry attempt).",
    }),
    status: z.enum(RUN_STATUSES),
    worker_id: z.string().nullable(),
    created_at: isoTime,
    started_at: nullableIso,
  })
  .openapi("ActiveRun");

const countsSchema = z.record(z.string(), z.number().int()).openapi({
  description: "Tasks per status (every status listed, zeros included) plus `total`.",
  example: { todo: 2, done: 1, total: 3 },
});

export const UsageTotalsSchema = z
  .object({
    tokens_in: z.number().openapi({ description: "Input tokens, cached ones included." }),
    tokens_out: z.number(),
    tokens_cached: z.number().openapi({ description: "Input tokens served from the provider's cache." }),
    cost_usd: z.number().openapi({ description: "Priced spend in USD (rounded to a millionth)." }),
    tokens_unpriced: z.number().openapi({
      description:
        "Tokens no price covered (neither the price table, the runner config's prices, nor the CLI).",
    }),
    cost: z.string().openapi({
      description:
        'The spend for people: "$0.2500", "unpriced (1,241 tokens)", or both; never $0 for unpriced usage.',
      example: "$0.2500 + unpriced (1,241 tokens)",
    }),
  })
  .openapi("UsageTotals", {
    description:
      "What runs spent, read from the agent CLI's own output or session files, or passed to overseer-agent; failed and timed-out runs included.",
  });

const MissionSpendSchema = z
  .object({
    cost_usd: z.number().openapi({ description: "Priced spend in USD (rounded to a millionth)." }),
    tokens_unpriced: z.number().openapi({ description: "Tokens no price covered." }),
    cost: z.string().openapi({
      description:
        'The spend for people: "$0.2500", "unpriced (1,241 tokens)", or both; never $0 for unpriced usage.',
    }),
    budget_usd: z.number().nullable().openapi({ description: "The project's budget_usd; null = none." }),
    tokens_in: z.number().openapi({ description: "Input tokens, cached ones included." }),
    tokens_cached: z.number(),
    tokens_out: z.number(),
    sessions_used: z.number().int(),
    sessions_limit: z.number().int().nullable(),
  })
  .openapi("MissionSpend");

const statusOnly =
  " Present on the Argus status and snapshot and on GET /api/v1/projects/{id}; absent in the project list.";

export const MissionSchema = z
  .object({
    objective: z.string(),
    stage: z.string().nullable(),
    round: z.number().int().openapi({ description: "Planning rounds so far (the first plan is round 1)." }),
    max_rounds: z.number().int(),
    evidence: z
      .string()
      .nullable()
      .openapi({ description: "Completion evidence an independent reviewer approved; null until then." }),
    completed_at: isoTime.nullable(),
    state: z
      .enum(MISSION_STATES)
      .optional()
      .openapi({
        description: `running, paused_by_bound (a bound paused it and it was not restarted since), paused, stopped or completed.${statusOnly}`,
      }),
    tasks: countsSchema.optional().openapi({ description: `Tasks per status plus total.${statusOnly}` }),
    spend: MissionSpendSchema.optional().openapi({
      description: `Spend and sessions so far against their bounds.${statusOnly}`,
    }),
    last_evidence: z
      .object({
        kind: z.enum(["completion", "stage_summary"]),
        text: z.string(),
        task_id: z.string().nullable(),
        at: isoTime.nullable(),
      })
      .nullable()
      .optional()
      .openapi({
        description: `Last verified evidence: the approved completion evidence, else the summary of the last approved task that had one.${statusOnly}`,
      }),
    bound: z
      .object({ bound: z.enum(MISSION_BOUNDS), reason: z.string(), at: isoTime })
      .nullable()
      .optional()
      .openapi({
        description: `The bound (rounds, sessions, budget) the mission stands paused by; null otherwise.${statusOnly}`,
      }),
  })
  .openapi("Mission");

/** Where a project's approved work lands (domain `landingBranch`), shared by the project and its status. */
const landingFields = {
  repo_kind: z.enum(REPO_KINDS).openapi({
    description:
      "What the repository was when the project was registered: `remote` (a URL), `bare` (a local bare repository) or `working_copy` (a local repository with a working tree, which Overseer never writes to).",
  }),
  landing_branch: z.string().openapi({
    description:
      "Where approved work lands, and what every checkout, review and merge builds on: `branch`, or `overseer/<branch>` for a working copy.",
    example: "overseer/main",
  }),
  landing_hint: z.string().nullable().openapi({
    description:
      "How to bring the landed work into your own branch (e.g. `git merge overseer/main`), or null when it lands on `branch` itself.",
  }),
  landing_mode: z.enum(["push", "pull_request"]).openapi({
    description:
      "`push`: approved work is pushed to the landing branch; `pull_request`: it lands through a pull request.",
  }),
  pull_requests: PullRequestPolicySchema.nullable().openapi({
    description:
      "In `pull_request` mode: the forge (never its token) and the merge policy; null in `push` mode.",
  }),
};

export const ProjectStatusSchema = z
  .object({
    project_id: z.string(),
    name: z.string(),
    ...landingFields,
    status: z.enum(PROJECT_STATUSES),
    status_reason: z.string().nullable(),
    objective: z.string(),
    stage: z.string().nullable(),
    continuous: z.boolean(),
    sessions: z.object({ used: z.number().int(), limit: z.number().int().nullable() }),
    usage: UsageTotalsSchema.extend({ budget_usd: z.number().nullable() }),
    counts: countsSchema,
    running: z.array(ActiveRunSchema),
    pending_questions: z.array(DecisionCardSchema),
    pending_count: z.number().int(),
    waiting_for_you: z.string().nullable().openapi({
      example: "waiting for you: 1 unanswered question(s)",
      description: "Stop signal text, null when nothing is pending.",
    }),
    pool: z.string().openapi({
      description:
        "The worker pool the project's runs need (runner config `pool`; `default` when it names none).",
    }),
    pool_waiting: z.string().nullable().openapi({
      example: "waiting for a worker in pool jdk",
      description:
        "Set while queued runs wait in a pool no live worker serves (none started, or every one draining), worked out from the workers' heartbeats when read; null otherwise.",
    }),
    open_pull_requests: z.array(OpenPullRequestSchema).openapi({
      description:
        "The pull requests still open (or being opened), oldest task first: link, checks, review and approvals of each.",
    }),
    mission: MissionSchema.nullable().openapi({
      description: "The project's mission with its status; null without one.",
    }),
    mission_notice: z.string().nullable().openapi({
      example:
        "mission paused at the budget bound: budget_usd 5 reached (spent 5.1000) (tasks: 3 done, 1 todo); start again to continue",
      description:
        "Set when the mission completed (`mission completed: <evidence>`) or stands paused at a bound (`mission paused at the <bound> bound: <summary>`): like waiting_for_you, a signal for operators that poll; null otherwise.",
    }),
    text: z.string().openapi({ description: "Human-readable status, as `overseer status` prints it." }),
    generated_at: isoTime.openapi({ description: "When this status was read from Postgres." }),
  })
  .openapi("ProjectStatus");

export const BacklogRowSchema = z
  .object({
    id: z.string(),
    stage: z.string(),
    title: z.string(),
    role: z.string(),
    kind: z.enum(TASK_KINDS),
    status: z.enum(ARGUS_TASK_STATUSES).openapi({
      description: "The Argus status: a task whose pull request is open (`pr_open`) is `review` here.",
    }),
    status_reason: z.string().nullable(),
    awaiting_reason: z.string().nullable(),
    priority: z.number().int(),
    prerequisites: z.array(z.string()),
    parent_id: z.string().nullable(),
    root_id: z.string().nullable(),
    depth: z.number().int(),
    blocked_by: z.string().nullable(),
    pending_question: z
      .string()
      .nullable()
      .openapi({ description: "The pending card's question; null when none is pending." }),
    operator_decision: DecisionCardSchema.nullable().openapi({
      description: "The item's latest card (pending or resolved).",
    }),
    pull_request: TaskPullRequestSchema.nullable().openapi({
      description: "Added by Overseer: the task's pull request (landing.mode pull_request); null when none.",
    }),
  })
  .openapi("BacklogRow");

export const SnapshotSchema = z
  .object({
    compact: z.boolean(),
    project_id: z.string(),
    status: z.enum(PROJECT_STATUSES),
    status_reason: z.string().nullable(),
    objective: z.string(),
    stage: z.string().nullable(),
    counts: countsSchema,
    pending_questions: z.array(DecisionCardSchema),
    pending_count: z.number().int(),
    waiting_for_you: z.string().nullable(),
    mission: MissionSchema.nullable(),
    mission_notice: z.string().nullable(),
    running: z.array(ActiveRunSchema).optional(),
    backlog: z.array(BacklogRowSchema).optional().openapi({ description: "Full snapshot only: every task." }),
    generated_at: isoTime,
  })
  .openapi("Snapshot");

export const ResolveResultSchema = z
  .object({
    resolved: z.literal(true),
    resolution_id: z.string(),
    application_status: z.enum(["applied", "already_applied"]),
    decision: DecisionCardSchema,
  })
  .openapi("ResolveResult");

export const AnswerResultSchema = z
  .object({
    resolved: z
      .boolean()
      .openapi({ description: "True when a pending card of the item was resolved by this answer." }),
    recorded: z.literal(true),
    item_id: z.string(),
    application_status: z.enum(["applied"]),
    resolution_id: z.string().nullable(),
    decision: DecisionCardSchema.nullable(),
    task_status: z.enum(ARGUS_TASK_STATUSES).openapi({
      description: "The item's Argus status afterwards (a task whose pull request is open is `review`).",
    }),
  })
  .openapi("AnswerResult");

export const MessageResultSchema = AnswerResultSchema.extend({
  routed: z.literal(true),
  decision_id: z.string(),
}).openapi("MessageResult");

export const MessageConflictSchema = ErrorBodySchema.extend({
  routed: z.literal(false),
  pending_questions: z.array(DecisionCardSchema),
}).openapi("MessageNotRouted");

export const ProjectSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    repo: z.string(),
    branch: z.string(),
    ...landingFields,
    objective: z.string(),
    status: z.enum(PROJECT_STATUSES),
    status_reason: z.string().nullable(),
    continuous: z.boolean(),
    concurrency: z.number().int(),
    stage: z.string().nullable(),
    sessions_used: z.number().int(),
    sessions_limit: z.number().int().nullable(),
    budget_usd: z.number().nullable(),
    cost_usd: z.number(),
    tokens_in: z.number(),
    tokens_out: z.number(),
    tokens_cached: z.number(),
    tokens_unpriced: z.number().openapi({
      description:
        "Tokens no price covered (neither the price table, the runner config's prices, nor the CLI).",
    }),
    cost: z.string().openapi({
      description:
        'The spend for people: "$0.2500", "unpriced (1,241 tokens)", or both; never $0 for unpriced usage.',
      example: "$0.2500 + unpriced (1,241 tokens)",
    }),
    mission: MissionSchema.nullable(),
    created_at: isoTime,
    updated_at: isoTime,
    runner_config: jsonObject
      .optional()
      .openapi({ description: "Runner config with secret values replaced by [REDACTED]." }),
  })
  .openapi("Project");

/** A start, pause, resume, stop or mission start: the project afterwards, and whether it changed. */
export const ProjectStatusChangeSchema = z
  .object({ project: ProjectSchema, application_status: z.enum(["applied", "already_applied"]) })
  .openapi("ProjectStatusChange");

/** POST /api/v1/projects/{id}/start. */
export const ProjectStartedSchema = z.object({ project: ProjectSchema }).openapi("ProjectStarted");

export const TaskSchema = z
  .object({
    id: z.string(),
    project_id: z.string(),
    stage: z.string(),
    title: z.string(),
    body: z.string(),
    role: z.string(),
    scope: z.array(z.string()),
    prerequisites: z.array(z.string()),
    acceptance: z.array(z.string()),
    priority: z.number().int(),
    kind: z.enum(TASK_KINDS),
    parent_id: z.string().nullable(),
    root_id: z.string().nullable(),
    depth: z.number().int(),
    status: z.enum(TASK_STATUSES),
    status_reason: z.string().nullable(),
    awaiting_reason: z.string().nullable(),
    blocked_by: z.string().nullable(),
    return_to: z.string().nullable(),
    feedback: z.string().nullable(),
    answers: z.array(z.object({ question: z.string(), answer: z.string(), by: z.string(), at: isoTime })),
    executor_agent_id: z.string().nullable(),
    branch_head: z.string().nullable(),
    landing: z
      .object({ reason: z.enum(LANDING_FAILURE_REASONS), files: z.array(z.string()) })
      .nullable()
      .openapi({
        description:
          "The last approved landing that failed (a conflict with the main branch and its files, or a failed check command), until the next submit; its next executor starts with the main branch merged in.",
      }),
    pull_request: TaskPullRequestSchema.nullable().openapi({
      description:
        "The task's pull request (landing.mode pull_request): `pr_open` while it is open, `done` once merged; null when it never had one.",
    }),
    failures: z.number().int(),
    not_before: nullableIso,
    version: z.number().int(),
    usage: UsageTotalsSchema.extend({ runs: z.number().int() })
      .optional()
      .openapi({ description: "Totals over the task's runs (in the answer of GET .../tasks/{task_id})." }),
  })
  .openapi("Task");

export const RunSummarySchema = z
  .object({
    id: z.string(),
    project_id: z.string(),
    task_id: z.string(),
    agent_id: z.string(),
    action: z.string(),
    attempt: z.number().int(),
    number: z.number().int().openapi({
      description:
        "The run's number among its task's runs of the same action, counted from the stored runs: execute #1, execute #2, review #1… (`attempt` is the failure-retry attempt).",
    }),
    status: z.string(),
    transition: z.string().nullable(),
    failure: z.string().nullable(),
    worker_id: z.string().nullable(),
    exit_code: z.number().int().nullable(),
    signal: z.string().nullable(),
    timed_out: z.boolean(),
    duration_ms: z.number().int().nullable(),
    prompt_chars: z.number().int().nullable(),
    scope_violations: z.array(z.string()),
    commit_sha: z.string().nullable(),
    tokens_in: z.number(),
    tokens_out: z.number(),
    tokens_cached: z.number(),
    cost_usd: z.number(),
    tokens_unpriced: z.number().openapi({
      description:
        "Tokens no price covered (neither the price table, the runner config's prices, nor the CLI).",
    }),
    cost: z.string().openapi({
      description:
        'The spend for people: "$0.2500", "unpriced (1,241 tokens)", or both; never $0 for unpriced usage.',
      example: "$0.2500 + unpriced (1,241 tokens)",
    }),
    usage_source: z.string().nullable().openapi({
      description:
        "Where the usage was read: `overseer-agent`, or the CLI's stream or session file (`codex --json turn.completed`, `claude stream-json result`, `copilot session-state events.jsonl`…); null = none reported.",
    }),
    image_digest: z.string().nullable().openapi({
      description:
        "The digest of the run image the run ran on (the project's `sandbox.image`, resolved when it started); null = the worker's own system.",
      example: "sha256:4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945",
    }),
    sandbox_driver: z.string().nullable().openapi({
      description:
        "The sandbox driver the run ran under: `bwrap`, `gvisor` (a user-space kernel), or `none` (no isolation, allowed per worker); null = refused before a sandbox was chosen, or no worker result.",
      example: "gvisor",
    }),
    created_at: isoTime,
    started_at: nullableIso,
    ended_at: nullableIso,
  })
  .openapi("RunSummary");

export const RunPhaseSchema = z
  .object({
    name: z.string().openapi({
      description:
        "queue_wait, fetch, checkout, image, agent_cli, sandbox, environment_setup, setup_hook, agent, after_run_hook, scope_check, commit, push, land or result_applied, in the order they happened.",
      example: "agent",
    }),
    started_at: isoTime,
    duration_ms: z.number().openapi({ example: 41250.3 }),
  })
  .openapi("RunPhase");

export const RunSchema = RunSummarySchema.extend({
  output: z.string().nullable().openapi({ description: "Stored output with secrets redacted." }),
  output_truncated: z.boolean(),
  phases: z.array(RunPhaseSchema).openapi({
    description:
      "Where the run's time went: its phases back to back from its creation to the application of its result, so they add up to created_at → ended_at. Empty when no worker result was applied (cancelled, misconfigured, still running). The same timings are the spans of its OpenTelemetry trace.",
  }),
  environment: RunEnvironmentSchema.nullable().openapi({
    description:
      'The run environment the run used (README "Project images"); null = none reported (a run that ended before its checkout, or older).',
  }),
}).openapi("Run");

export const EventSchema = z
  .object({
    id: z.string().openapi({ example: "1042" }),
    project_id: z.string(),
    task_id: z.string().nullable(),
    run_id: z.string().nullable(),
    type: z.string().openapi({ example: "decision.resolved" }),
    data: jsonObject,
    created_at: isoTime,
  })
  .openapi("Event");

/** One page of GET /api/v1/projects/{id}/events: pass `next_after` back as `after`. */
export const EventPageSchema = z
  .object({ events: z.array(EventSchema), next_after: z.string().nullable() })
  .openapi("EventPage");

export const IncidentSchema = z
  .object({
    id: z.string(),
    project_id: z.string(),
    task_id: z.string().nullable(),
    run_id: z.string().nullable(),
    kind: z.string(),
    message: z.string(),
    details: jsonObject,
    created_at: isoTime,
  })
  .openapi("Incident");

export const TokenSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    scope: z.enum(["read", "operate", "admin"]),
    created_at: isoTime,
    revoked_at: nullableIso,
    last_used_at: nullableIso,
  })
  .openapi("ApiToken");

/** One page of GET /api/v1/projects/{id}/tasks; `next_cursor` null on the last page. */
export const TaskPageSchema = z
  .object({ tasks: z.array(TaskSchema), next_cursor: z.string().nullable() })
  .openapi("TaskPage");

/** POST /api/v1/projects/{id}/tasks/import. */
export const ImportResultSchema = z
  .object({ imported: z.number().int(), task_ids: z.array(z.string()) })
  .openapi("ImportResult");
