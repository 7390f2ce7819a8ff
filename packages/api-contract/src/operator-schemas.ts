import { z } from "./openapi-zod.ts";
import {
  DecisionCardSchema,
  ProjectSchema,
  RunSummarySchema,
  TaskSchema,
  TokenSchema,
} from "./resource-schemas.ts";

/**
 * Request bodies the operator verbs send and the list/result envelopes they read
 * (docs/http-api.md). The gateway validates and documents with them; the CLI parses every
 * answer with them.
 */

const MAX_TEXT = 50_000;
const nonEmptyText = (field: string) =>
  z
    .string({ error: `${field}: a non-empty string` })
    .max(MAX_TEXT, { error: `${field}: at most ${MAX_TEXT} characters` })
    .refine((t) => t.trim() !== "", { error: `${field}: a non-empty string (not only whitespace)` });

export const ResolveRequestSchema = z
  .strictObject({
    option_id: z
      .string({ error: "an option id from the card's options (or custom)" })
      .min(1, { error: "an option id from the card's options (or custom)" })
      .max(128, { error: "an option id of at most 128 characters" })
      .openapi({ example: "use_postgres" }),
    note: z
      .string({ error: "a string, or null" })
      .max(MAX_TEXT, { error: `a note of at most ${MAX_TEXT} characters` })
      .nullish()
      .openapi({ description: "Required when the option has requires_note (always for custom)." }),
  })
  .openapi("ResolveRequest");

export const TextRequestSchema = z
  .strictObject({ text: nonEmptyText("text").openapi({ example: "Use Postgres 16." }) })
  .openapi("TextRequest");

export const ReleaseRequestSchema = z
  .strictObject({
    reason: z
      .string({ error: "a non-empty reason" })
      .max(2000, { error: "at most 2000 characters" })
      .refine((r) => r.trim() !== "", { error: "a non-empty reason" }),
  })
  .openapi("ReleaseRequest");

export const ProjectListSchema = z.object({ projects: z.array(ProjectSchema) });

export const TaskChangeSchema = z
  .object({
    task: TaskSchema,
    application_status: z.enum(["applied", "already_applied"]),
    cancelled_runs: z.array(z.string()),
    decision: DecisionCardSchema.nullable(),
  })
  .openapi("TaskChange");

export const RunListSchema = z.object({
  runs: z.array(RunSummarySchema),
  next_before: z.string().nullable(),
});

export const RunLogSchema = z.object({
  run_id: z.string(),
  status: z.string(),
  output: z.string().nullable(),
  truncated: z.boolean(),
});

export const TokenListSchema = z.object({ tokens: z.array(TokenSchema) });

export const TokenRevokedSchema = z.object({ revoked: z.literal(true), id: z.string() });

/** `data` of a `log` event of GET /api/runs/{id}/log/stream. */
export const LogChunkEventSchema = z.object({
  text: z.string(),
  stored: z.boolean().optional(),
  truncated: z.boolean().optional(),
});

/** `data` of the final `end` event of GET /api/runs/{id}/log/stream. */
/** `usage` event of a run's log stream: the run's recorded usage, sent whenever it changed. */
export const LogUsageEventSchema = z.object({
  tokens_in: z.number(),
  tokens_out: z.number(),
  tokens_cached: z.number(),
  tokens_unpriced: z.number(),
  cost_usd: z.number(),
  /** For people: "$0.2500", "unpriced (1,241 tokens)", or both. */
  cost: z.string(),
});

export const LogEndEventSchema = z.object({
  run_id: z.string(),
  status: z.string(),
  transition: z.string().nullable(),
  exit_code: z.number().int().nullable(),
  failure: z.string().nullable(),
});
