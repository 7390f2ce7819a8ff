import { PROJECT_STATUSES } from "@overseer/domain";
import { z } from "./openapi-zod.ts";
import { DecisionCardSchema } from "./resource-schemas.ts";

/** Shapes of the cross-project read models the operator web app lists (snake_case, ISO times). */

const isoTime = z.string().openapi({ format: "date-time", example: "2025-01-01T12:00:00.000Z" });

export const SessionSchema = z
  .object({
    token_name: z.string(),
    scope: z.enum(["read", "operate", "admin"]),
    can_operate: z.boolean(),
    can_admin: z.boolean(),
  })
  .openapi("Session", { description: "The caller's token: what the web app may show controls for." });

export const FleetProjectSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    status: z.enum(PROJECT_STATUSES),
    status_reason: z.string().nullable(),
    stage: z.string().nullable(),
    objective: z.string(),
    counts: z.record(z.string(), z.number().int()).openapi({
      description: "Tasks per status (statuses without tasks are absent) plus `total`.",
    }),
    running: z.number().int().openapi({ description: "Queued and running runs." }),
    pending_decisions: z.number().int(),
    sessions: z.object({ used: z.number().int(), limit: z.number().int().nullable() }),
    budget_usd: z.number().nullable(),
    cost_usd: z.number().openapi({ description: "Priced spend in USD (rounded to a millionth)." }),
    tokens_unpriced: z.number().openapi({
      description:
        "Tokens no price covered (neither the price table, the runner config's prices, nor the CLI).",
    }),
    cost: z.string().openapi({
      description:
        'The spend for people: "$0.2500", "unpriced (1,241 tokens)", or both; never $0 for unpriced usage.',
      example: "unpriced (1,241 tokens)",
    }),
    tokens_in: z.number(),
    tokens_out: z.number(),
    throughput: z.array(z.number().int()).openapi({
      description: "Runs ended per bucket over the window, oldest bucket first.",
    }),
    updated_at: isoTime,
  })
  .openapi("FleetProject");

export const FleetSchema = z
  .object({
    projects: z.array(FleetProjectSchema),
    window_seconds: z.number().int(),
    bucket_seconds: z.number().int(),
    generated_at: isoTime,
  })
  .openapi("Fleet");

export const PendingDecisionSchema = DecisionCardSchema.extend({ project_id: z.string() }).openapi(
  "PendingDecision",
);

export const RunStatsSchema = z
  .object({
    since: isoTime,
    bucket_seconds: z.number().int(),
    buckets: z.array(
      z.object({
        at: isoTime,
        runs: z.number().int(),
        failed: z.number().int(),
        p50_ms: z.number().nullable(),
        p90_ms: z.number().nullable(),
        p99_ms: z.number().nullable(),
      }),
    ),
    cost: z.array(z.object({ at: isoTime, project_id: z.string(), cost_usd: z.number() })),
  })
  .openapi("RunStats", { description: "Ended runs per time bucket, from the stored runs." });

export const CommitDiffSchema = z
  .object({
    run_id: z.string(),
    commit_sha: z.string(),
    available: z.boolean().openapi({ description: "False when the commit cannot be read (see reason)." }),
    reason: z.string().nullable(),
    message: z.string(),
    files: z.array(
      z.object({
        path: z.string(),
        additions: z.number().int(),
        deletions: z.number().int(),
        binary: z.boolean(),
      }),
    ),
    patch: z.string().openapi({ description: "Unified diff of the commit against its first parent." }),
    truncated: z.boolean(),
  })
  .openapi("CommitDiff");
