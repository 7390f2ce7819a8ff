import { PROJECT_ID_PATTERN, STAGE_EXPECTED, STAGE_PATTERN } from "@overseer/domain";
import { z } from "./openapi-zod.ts";

/**
 * Identifiers in paths and queries. Each is a strict pattern with a length bound, checked
 * before any lookup: `../`, `/`, control characters, spaces and absurd lengths are refused
 * with 400 and never reach SQL, Redis keys or log lines.
 */

/** Task, resolver, run, decision and token ids: letters, digits, `.`, `_`, `-`; at most 160. */
export const SAFE_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,159}$/;
const SAFE_ID_EXPECTED =
  "an id of letters, digits, ., _ or - starting with a letter or digit (at most 160 characters)";
const PROJECT_ID_EXPECTED =
  "a project id of lowercase letters, digits, _ or - (at most 63 characters, like demo)";

export const projectIdSchema = z
  .string()
  .regex(PROJECT_ID_PATTERN, { error: PROJECT_ID_EXPECTED })
  .openapi({ example: "demo", description: "Project id (slug)." });

/** A stage name (`start`, missions, task cards): the domain's STAGE_PATTERN, no control characters. */
export const stageSchema = z
  .string({ error: STAGE_EXPECTED })
  .regex(STAGE_PATTERN, { error: STAGE_EXPECTED })
  .openapi({ example: "S01", description: "Stage name." });

function safeId(description: string, example: string) {
  return z.string().regex(SAFE_ID_PATTERN, { error: SAFE_ID_EXPECTED }).openapi({ example, description });
}

export const taskIdSchema = safeId("Task id (resolvers are `<task>.R<n>`).", "S00-001");
export const decisionIdSchema = safeId("Decision card id, `decision-<task>`.", "decision-S00-001.R1");
export const runIdSchema = safeId("Run id.", "8b1f0c3e-3f0a-4c1e-9c55-0d2d8e6f9a10");
export const tokenIdSchema = safeId("API token id.", "3f0a8b1f-0c3e-4c1e-9c55-0d2d8e6f9a10");

function pathParam<T extends z.ZodType>(schema: T, name: string) {
  return schema.openapi({ param: { name, in: "path" } });
}

export const ProjectParams = z.object({ id: pathParam(projectIdSchema, "id") });
export const ProjectTaskParams = z.object({
  id: pathParam(projectIdSchema, "id"),
  task_id: pathParam(taskIdSchema, "task_id"),
});
export const ProjectItemParams = z.object({
  id: pathParam(projectIdSchema, "id"),
  item_id: pathParam(taskIdSchema, "item_id"),
});
export const ProjectDecisionParams = z.object({
  id: pathParam(projectIdSchema, "id"),
  decision_id: pathParam(decisionIdSchema, "decision_id"),
});
export const RunParams = z.object({ id: pathParam(runIdSchema, "id") });
export const ProjectRunParams = z.object({
  id: pathParam(projectIdSchema, "id"),
  run_id: pathParam(runIdSchema, "run_id"),
});
export const TokenParams = z.object({ token_id: pathParam(tokenIdSchema, "token_id") });

/** Postgres event ids (bigserial), as decimal strings. */
export const EVENT_ID_PATTERN = /^(0|[1-9][0-9]{0,18})$/;
/** Largest Postgres bigint: cursors beyond it would make the query fail, so they are refused. */
export const BIGINT_MAX = 9_223_372_036_854_775_807n;
const EVENT_ID_EXPECTED = `an event id (an integer from 0 to ${BIGINT_MAX})`;

/** A decimal string within Postgres bigint range (pattern checked first). */
export function withinBigint(value: string): boolean {
  return /^[0-9]{1,19}$/.test(value) && BigInt(value) <= BIGINT_MAX;
}

/** An event id cursor (query `after`, header `Last-Event-ID`). */
export function eventIdSchema() {
  return z
    .string()
    .regex(EVENT_ID_PATTERN, { error: EVENT_ID_EXPECTED })
    .refine(withinBigint, { error: EVENT_ID_EXPECTED });
}
export const eventCursorSchema = eventIdSchema().openapi({
  example: "1042",
  description: "Event id cursor: only events after it.",
});

/** Redis stream entry ids (`<ms>-<seq>`), `0` for the beginning, or `stored` for the stored output. */
const LOG_CURSOR_PATTERN = /^(0|[0-9]{1,20}-[0-9]{1,20}|stored)$/;
/** Largest part of a Redis stream id (each of `<ms>` and `<seq>` is an unsigned 64-bit integer). */
const STREAM_ID_PART_MAX = 18_446_744_073_709_551_615n;
const LOG_CURSOR_EXPECTED = `a log entry id such as 1700000000000-0 (each part at most ${STREAM_ID_PART_MAX}), 0, or stored`;

/**
 * A run-log cursor (query `after`, header `Last-Event-ID`): the pattern, and each part within
 * Redis's stream-id range, so a cursor Redis would refuse is a 400 rather than a stream that
 * never delivers.
 */
export function logCursorSchema() {
  return z
    .string()
    .regex(LOG_CURSOR_PATTERN, { error: LOG_CURSOR_EXPECTED })
    .refine(
      (v) =>
        v === "stored" ||
        (LOG_CURSOR_PATTERN.test(v) && v.split("-").every((part) => BigInt(part) <= STREAM_ID_PART_MAX)),
      {
        error: LOG_CURSOR_EXPECTED,
      },
    );
}

/** Task list cursor (the `seq` of the last task of the previous page). */
export const taskCursorSchema = z
  .string()
  .regex(/^[0-9]{1,19}$/, { error: "the next_cursor value of the previous page" })
  .refine(withinBigint, { error: "the next_cursor value of the previous page" })
  .openapi({ description: "Opaque cursor from `next_cursor` of the previous page." });

/**
 * An integer query parameter: decimal digits only (no sign, no `0x10`, `1e1`, `16.0` or spaces,
 * which `Number()` would accept), within `min`..`max`, `fallback` when absent.
 */
export function integerQuerySchema(min: number, max: number, fallback: number, description: string) {
  const expected = `an integer from ${min} to ${max} (decimal digits only)`;
  return z
    .string()
    .regex(/^[0-9]{1,16}$/, { error: expected })
    .transform(Number)
    .pipe(z.int({ error: expected }).min(min, { error: expected }).max(max, { error: expected }))
    .default(fallback)
    .openapi({ type: "integer", minimum: min, maximum: max, default: fallback, description });
}

export function limitSchema(max: number, fallback: number) {
  return integerQuerySchema(1, max, fallback, `Page size (at most ${max}).`);
}

/** The forges whose webhooks the gateway takes. */
export const forgeKindSchema = z
  .enum(["github", "gitlab", "gitea"], { error: "github, gitlab or gitea" })
  .openapi({ description: "The forge sending the webhook (Forgejo: gitea).", example: "github" });
export const ForgeWebhookParams = z.object({
  id: pathParam(projectIdSchema, "id"),
  forge: pathParam(forgeKindSchema, "forge"),
});
