import { integerQuerySchema, projectIdSchema, withinBigint } from "./id-schemas.ts";
import { INTAKE_KINDS, INTAKE_STATUS_MOMENTS, intakeSourceIdSchema } from "./intake-schemas.ts";
import { deliveryStatusSchema } from "./notification-api-schemas.ts";
import { z } from "./openapi-zod.ts";

/**
 * The tracker update routes' schemas (README "Intake and notifications", two-way status): what
 * Overseer writes back to an intake item's issue (a comment, state and labels per the source's
 * status map, a close on merge), one row per moment, with its status, attempts, last error and
 * dead letters, and the answer of a redelivery. Mirrors the notification deliveries' schemas.
 */

const UPDATE_ID_EXPECTED = "a tracker update id (an integer, from overseer intake updates)";

export const trackerUpdateIdSchema = z
  .string()
  .regex(/^[1-9][0-9]{0,18}$/, { error: UPDATE_ID_EXPECTED })
  .refine(withinBigint, { error: UPDATE_ID_EXPECTED })
  .openapi({ example: "42", description: "Tracker update id." });

export const TrackerUpdateParams = z.object({
  update_id: trackerUpdateIdSchema.openapi({ param: { name: "update_id", in: "path" } }),
});

export const TrackerUpdateListQuery = z.object({
  project_id: projectIdSchema.optional(),
  source_id: intakeSourceIdSchema.optional(),
  status: deliveryStatusSchema.optional(),
  before: trackerUpdateIdSchema.optional().openapi({ description: "Only updates older than this id." }),
  limit: integerQuerySchema(1, 500, 100, "Page size (at most 500)."),
});

const isoTime = z.string().openapi({ description: "ISO 8601 time." });

export const TrackerUpdateSchema = z
  .object({
    id: z.string(),
    key: z.string().openapi({
      description:
        "source:issue:moment:occurrence; also the marker of its comment, so a retry never posts twice.",
    }),
    project_id: z.string(),
    task_id: z.string(),
    source_id: z.string(),
    kind: z.enum(INTAKE_KINDS).nullable().openapi({ description: "The source's tracker." }),
    issue_id: z.string(),
    moment: z.enum(INTAKE_STATUS_MOMENTS),
    status: deliveryStatusSchema.openapi({ description: "pending, delivered, or dead (a dead letter)." }),
    attempts: z.number().int(),
    last_error: z.string().nullable(),
    last_attempt_at: isoTime.nullable(),
    delivered_at: isoTime.nullable(),
    created_at: isoTime,
  })
  .openapi("TrackerUpdate");

export const TrackerUpdateListSchema = z
  .object({
    updates: z.array(TrackerUpdateSchema),
    next_before: z
      .string()
      .nullable()
      .openapi({ description: "Give as `before` for the next (older) page; null on the last page." }),
  })
  .openapi("TrackerUpdateList");

export const TrackerUpdateRedeliveredSchema = z
  .object({
    update: TrackerUpdateSchema,
    redelivered: z.boolean().openapi({
      description:
        "true: the dead letter is pending again (written once more under the same key, so its comment is not posted twice); false: it was not dead, nothing changed.",
    }),
  })
  .openapi("TrackerUpdateRedelivered");

export type TrackerUpdate = z.infer<typeof TrackerUpdateSchema>;
