import { NOTIFICATION_SEVERITIES, NOTIFICATION_TYPES } from "@overseer/domain";
import { integerQuerySchema, projectIdSchema, SAFE_ID_PATTERN, withinBigint } from "./id-schemas.ts";
import { z } from "./openapi-zod.ts";

/**
 * The notification routes' schemas (README "Intake and notifications"): subscriptions (where
 * signed webhooks go, filtered by project, event type and least severity), their deliveries
 * (status, attempts, dead letters) and the answers of test, rotate and redeliver. A signing
 * secret appears in an answer only when it is created (add, rotate), never in a listing.
 */

/** How long a rotated-out secret keeps signing beside the new one, unless the request says. */
export const DEFAULT_ROTATION_OVERLAP_SECONDS = 86_400;
/** The longest overlap a rotation may ask for (30 days). */
export const MAX_ROTATION_OVERLAP_SECONDS = 30 * 86_400;

const SUBSCRIPTION_ID_EXPECTED =
  "a subscription id of letters, digits, ., _ or - (like sub_3f0a8b1f0c3e4c1e), from overseer notify list";
const DELIVERY_ID_EXPECTED = "a delivery id (an integer, from overseer notify deliveries)";

export const subscriptionIdSchema = z
  .string()
  .regex(SAFE_ID_PATTERN, { error: SUBSCRIPTION_ID_EXPECTED })
  .openapi({ example: "sub_3f0a8b1f0c3e4c1e", description: "Notification subscription id." });

export const deliveryIdSchema = z
  .string()
  .regex(/^[1-9][0-9]{0,18}$/, { error: DELIVERY_ID_EXPECTED })
  .refine(withinBigint, { error: DELIVERY_ID_EXPECTED })
  .openapi({ example: "42", description: "Notification delivery id." });

export const SubscriptionParams = z.object({
  subscription_id: subscriptionIdSchema.openapi({ param: { name: "subscription_id", in: "path" } }),
});
export const DeliveryParams = z.object({
  delivery_id: deliveryIdSchema.openapi({ param: { name: "delivery_id", in: "path" } }),
});

export const notificationTypeSchema = z.enum(NOTIFICATION_TYPES, {
  error: `one of ${NOTIFICATION_TYPES.join(", ")}`,
});
export const notificationSeveritySchema = z.enum(NOTIFICATION_SEVERITIES, {
  error: `one of ${NOTIFICATION_SEVERITIES.join(", ")}`,
});
export const deliveryStatusSchema = z.enum(["pending", "delivered", "dead"], {
  error: "one of pending, delivered, dead",
});

const WEBHOOK_URL_EXPECTED = "an http:// or https:// URL of at most 2000 characters, without credentials";

/** A receiver's URL: http(s), no user:password (a secret in a URL would be listed to readers). */
export const webhookUrlSchema = z
  .string({ error: WEBHOOK_URL_EXPECTED })
  .max(2000, { error: WEBHOOK_URL_EXPECTED })
  .refine(
    (value) => {
      if (!URL.canParse(value)) return false;
      const url = new URL(value);
      return (url.protocol === "http:" || url.protocol === "https:") && !url.username && !url.password;
    },
    { error: WEBHOOK_URL_EXPECTED },
  )
  .openapi({ example: "https://hooks.example.com/overseer", description: "Where the signed POSTs go." });

/** A Slack conversation id (`C…` public, `G…` private, `D…` direct), as Slack's API names it. */
export const slackChannelSchema = z
  .string()
  .regex(/^[CGD][A-Z0-9]{2,30}$/, {
    error: "a Slack channel id such as C0123456789 (in Slack: the channel's details, at the bottom)",
  })
  .openapi({
    example: "C0123456789",
    description: "The Slack channel the bot posts to (it must be a member).",
  });

export const SubscriptionCreateBody = z
  .strictObject({
    url: webhookUrlSchema.optional(),
    slack_channel: slackChannelSchema.optional(),
    project_id: projectIdSchema
      .nullable()
      .optional()
      .openapi({ description: "Only this project's notifications; absent or null: every project." }),
    event_types: z
      .array(notificationTypeSchema)
      .max(NOTIFICATION_TYPES.length * 2)
      .optional()
      .openapi({ description: "Only these types; absent or empty: every type." }),
    min_severity: notificationSeveritySchema
      .optional()
      .openapi({ description: "The least severity sent (info < warning < critical); default info." }),
  })
  .refine((body) => (body.url === undefined) !== (body.slack_channel === undefined), {
    error: "give exactly one of url (a webhook receiver) and slack_channel (a Slack channel id)",
  })
  .openapi("SubscriptionCreateRequest");

export const SecretRotateBody = z
  .strictObject({
    overlap_seconds: z
      .int({ error: `an integer from 0 to ${MAX_ROTATION_OVERLAP_SECONDS}` })
      .min(0, { error: `an integer from 0 to ${MAX_ROTATION_OVERLAP_SECONDS}` })
      .max(MAX_ROTATION_OVERLAP_SECONDS, { error: `an integer from 0 to ${MAX_ROTATION_OVERLAP_SECONDS}` })
      .optional()
      .openapi({
        description: `How long the previous secrets keep signing beside the new one (default ${DEFAULT_ROTATION_OVERLAP_SECONDS}).`,
      }),
  })
  .openapi("SecretRotateRequest");

const isoTime = z.string().openapi({ description: "ISO 8601 time." });

export const SubscriptionSchema = z
  .object({
    id: z.string(),
    project_id: z.string().nullable().openapi({ description: "null: every project." }),
    channel: z.enum(["webhook", "slack"]),
    url: z.string().nullable(),
    slack_channel: z
      .string()
      .nullable()
      .openapi({ description: "The Slack channel of a slack subscription." }),
    event_types: z.array(z.string()).openapi({ description: "Empty: every type." }),
    min_severity: z.enum(NOTIFICATION_SEVERITIES),
    enabled: z.boolean(),
    secrets: z.array(z.object({ created_at: isoTime, expires_at: isoTime.nullable() })).openapi({
      description: "The signing secrets still valid, newest first (their values are never listed).",
    }),
    created_by: z.string(),
    created_at: isoTime,
  })
  .openapi("NotificationSubscription");

export const SubscriptionListSchema = z
  .object({ subscriptions: z.array(SubscriptionSchema) })
  .openapi("NotificationSubscriptionList");

export const SubscriptionCreatedSchema = z
  .object({
    subscription: SubscriptionSchema,
    secret: z.string().nullable().openapi({
      description:
        "The signing secret (whsec_…), shown this once: give it to the receiver. null for a Slack subscription (the bot token authenticates its posts).",
    }),
  })
  .openapi("NotificationSubscriptionCreated");

export const SubscriptionRemovedSchema = z
  .object({ removed: z.literal(true), id: z.string() })
  .openapi("NotificationSubscriptionRemoved");

export const SecretRotatedSchema = z
  .object({
    subscription: SubscriptionSchema,
    secret: z.string().openapi({ description: "The new signing secret, shown this once." }),
    previous_expire_at: isoTime.nullable().openapi({
      description:
        "Until when the previous secrets still sign; null when none signs any more (no overlap, or none before).",
    }),
  })
  .openapi("NotificationSecretRotated");

export const SubscriptionTestedSchema = z
  .object({
    ok: z.boolean().openapi({ description: "The receiver answered 2xx." }),
    status: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "The receiver's HTTP status; null when none." }),
    error: z.string().nullable(),
    webhook_id: z.string().openapi({ description: "The test message's webhook-id." }),
  })
  .openapi("NotificationSubscriptionTested");

export const DeliverySchema = z
  .object({
    id: z.string(),
    webhook_id: z.string().openapi({ description: "The webhook-id header: the same on every attempt." }),
    subscription_id: z.string(),
    project_id: z.string(),
    task_id: z.string().nullable(),
    event_id: z.string(),
    type: z.string(),
    severity: z.string(),
    status: deliveryStatusSchema.openapi({ description: "pending, delivered, or dead (a dead letter)." }),
    attempts: z.number().int(),
    last_status: z.number().int().nullable().openapi({ description: "The receiver's last HTTP status." }),
    last_error: z.string().nullable(),
    last_attempt_at: isoTime.nullable(),
    delivered_at: isoTime.nullable(),
    created_at: isoTime,
  })
  .openapi("NotificationDelivery");

export const DeliveryListSchema = z
  .object({
    deliveries: z.array(DeliverySchema),
    next_before: z
      .string()
      .nullable()
      .openapi({ description: "Give as `before` for the next (older) page; null on the last page." }),
  })
  .openapi("NotificationDeliveryList");

export const DeliveryListQuery = z.object({
  project_id: projectIdSchema.optional(),
  subscription_id: subscriptionIdSchema.optional(),
  status: deliveryStatusSchema.optional(),
  before: deliveryIdSchema.optional().openapi({ description: "Only deliveries older than this id." }),
  limit: integerQuerySchema(1, 500, 100, "Page size (at most 500)."),
});

export const SubscriptionListQuery = z.object({
  project_id: projectIdSchema
    .optional()
    .openapi({ description: "This project's subscriptions and the every-project ones." }),
});

export const RedeliveredSchema = z
  .object({
    delivery: DeliverySchema,
    redelivered: z.boolean().openapi({
      description:
        "true: the dead letter is pending again (sent once more, same webhook-id); false: it was not dead (pending or delivered already), nothing changed.",
    }),
  })
  .openapi("NotificationRedelivered");

export type Subscription = z.infer<typeof SubscriptionSchema>;
export type Delivery = z.infer<typeof DeliverySchema>;
