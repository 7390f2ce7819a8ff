import { projectIdSchema, SAFE_ID_PATTERN, stageSchema } from "./id-schemas.ts";
import { z } from "./openapi-zod.ts";

/**
 * The intake routes' schemas (README "Intake and notifications"): what a project subscribes to in
 * a tracker (`IntakeSourceSpec`: kind, query, task | mission, status map, and the NAMES of the
 * host environment variables holding the token and the webhook secret, never the secrets), the
 * listing (items taken, last poll, last error), the dry run and the webhook's answer. The
 * coordinator's intake runner parses a stored source's query and config with the same parts
 * (`IntakeQuerySpec`, `IntakeConfigSpec`), so a source is read the way it was validated.
 */

/** Mirrors `TRACKER_KINDS` of @overseer/intake (the contract imports no adapter). */
export const INTAKE_KINDS = ["github", "gitlab", "linear", "jira"] as const;
/** Mirrors `STATUS_MOMENTS` of @overseer/intake. */
export const INTAKE_STATUS_MOMENTS = ["started", "pr_opened", "done", "blocked", "merged"] as const;

const ENV_NAME_EXPECTED =
  "the NAME of an environment variable on the gateway/coordinator host (like OVERSEER_GITHUB_TOKEN: capitals, digits, _), not the secret itself";
const envNameSchema = z
  .string({ error: ENV_NAME_EXPECTED })
  .regex(/^[A-Z_][A-Z0-9_]{0,127}$/, { error: ENV_NAME_EXPECTED })
  .openapi({ example: "OVERSEER_GITHUB_TOKEN" });

const SOURCE_ID_EXPECTED =
  "an intake source id of letters, digits, ., _ or - (like src_3f0a8b1f0c3e4c1e), from overseer intake list";
export const intakeSourceIdSchema = z
  .string()
  .regex(SAFE_ID_PATTERN, { error: SOURCE_ID_EXPECTED })
  .openapi({ example: "src_3f0a8b1f0c3e4c1e", description: "Intake source id." });

const label = z.string().min(1, { error: "a non-empty label" }).max(200);
const nonEmpty = (what: string) =>
  z
    .string()
    .min(1, { error: `a non-empty ${what}` })
    .max(400);

/** What the source subscribes to; an unset field does not filter. */
export const IntakeQuerySpec = z
  .object({
    container: nonEmpty("container").openapi({
      description: 'GitHub "owner/repo", GitLab project path, Linear team key, Jira project key.',
      example: "acme/app",
    }),
    labels: z.array(label).max(20).optional().openapi({ description: "Every one must be on the issue." }),
    assignee: nonEmpty("assignee").optional().openapi({
      description: "Login, username, Linear user name/email or Jira accountId the issue is assigned to.",
    }),
    states: z
      .array(nonEmpty("state name"))
      .max(20)
      .optional()
      .openapi({ description: "Tracker states that count as active (default: the open ones)." }),
  })
  .strict();

const StatusMapEntrySpec = z
  .object({
    state: nonEmpty("state name").optional(),
    addLabels: z.array(label).max(20).optional(),
    removeLabels: z.array(label).max(20).optional(),
    comment: z.boolean().optional(),
  })
  .strict();

/** How an issue becomes work and what is written back; an unset field keeps intake's default. */
export const IntakeConfigSpec = z
  .object({
    as: z.enum(["task", "mission"], { error: "task or mission" }).optional(),
    missionLabel: label.optional(),
    taskLabel: label.optional(),
    stage: stageSchema.optional(),
    role: nonEmpty("role").optional(),
    scope: z.array(nonEmpty("scope glob")).max(50).optional(),
    scopeLabelPrefix: label.optional(),
    roleLabelPrefix: label.optional(),
    statusMap: z
      .partialRecord(
        z.enum(INTAKE_STATUS_MOMENTS, { error: INTAKE_STATUS_MOMENTS.join(", ") }),
        StatusMapEntrySpec,
      )
      .optional()
      .openapi({ description: `Per moment (${INTAKE_STATUS_MOMENTS.join(", ")}): state, labels, comment.` }),
    closeOnMerge: z.boolean().optional(),
  })
  .strict();

/** One intake source: the create body, checked field by field. */
export const IntakeSourceSpec = z
  .object({
    kind: z.enum(INTAKE_KINDS, { error: `one of ${INTAKE_KINDS.join(", ")}` }),
    base_url: z
      .url({
        protocol: /^https?$/,
        error: "an http:// or https:// URL (self-hosted tracker or a test double)",
      })
      .max(2000)
      .optional(),
    query: IntakeQuerySpec,
    config: IntakeConfigSpec.optional(),
    token_env: envNameSchema,
    webhook_secret_env: envNameSchema.optional(),
  })
  .strict();
export type IntakeSourceSpec = z.infer<typeof IntakeSourceSpec>;

export const IntakeSourceParams = z.object({
  id: projectIdSchema.openapi({ param: { name: "id", in: "path" } }),
  source_id: intakeSourceIdSchema.openapi({ param: { name: "source_id", in: "path" } }),
});
export const IntakeWebhookParams = z.object({
  source_id: intakeSourceIdSchema.openapi({ param: { name: "source_id", in: "path" } }),
});

export const IntakeSourceSchema = z
  .object({
    id: z.string(),
    project_id: z.string(),
    kind: z.enum(INTAKE_KINDS),
    base_url: z.string().nullable(),
    query: z.record(z.string(), z.unknown()),
    config: z.record(z.string(), z.unknown()),
    token_env: z.string(),
    webhook_secret_env: z.string().nullable(),
    webhook_path: z.string().openapi({ description: "Where the tracker posts its webhooks." }),
    enabled: z.boolean(),
    items_taken: z.number().int().openapi({ description: "Issues this source turned into tasks." }),
    polled_at: z.string().nullable().openapi({ description: "Where the last successful poll resumed from." }),
    webhooks_received: z
      .number()
      .int()
      .openapi({ description: "Verified webhook deliveries stored for this source (each once)." }),
    last_webhook_at: z
      .string()
      .nullable()
      .openapi({ description: "When the last verified webhook delivery came; null: none yet." }),
    last_error: z.string().nullable(),
    created_by: z.string(),
    created_at: z.string(),
  })
  .openapi("IntakeSource");

export const IntakeSourceCreatedSchema = z.object({ source: IntakeSourceSchema });
export const IntakeSourceListSchema = z.object({ sources: z.array(IntakeSourceSchema) });
export const IntakeSourceRemovedSchema = z.object({ id: z.string(), removed: z.literal(true) });

export const IntakeDryRunSchema = z.object({
  source_id: z.string(),
  matched: z.number().int().openapi({ description: "Issues the tracker returned for the query." }),
  would_take: z.array(
    z.object({
      issue_id: z.string(),
      key: z.string(),
      url: z.string(),
      task_id: z.string(),
      as: z.enum(["task", "mission"]),
      title: z.string(),
      role: z.string(),
      scope: z.array(z.string()),
      acceptance: z.array(z.string()),
    }),
  ),
  already_taken: z.array(z.object({ issue_id: z.string(), key: z.string(), task_id: z.string() })),
});

export const IntakeWebhookAcceptedSchema = z.object({
  source_id: z.string(),
  delivery_id: z.string().nullable(),
  stored: z
    .boolean()
    .openapi({ description: "false: a redelivery (or a delivery about nothing intake reads)." }),
  issue_id: z.string().nullable(),
});
export type IntakeSource = z.infer<typeof IntakeSourceSchema>;
