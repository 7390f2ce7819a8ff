import type { deliveryFigures, intakeFigures } from "@overseer/db";

/** Rows per project and status, and the attempts they made (`deliveryFigures`, `trackerUpdateFigures` of `@overseer/db`). */
export type DeliveryFigures = Awaited<ReturnType<typeof deliveryFigures>>;
/** Per project and tracker kind: items taken and webhook deliveries stored (`intakeFigures`). */
export type IntakeFigures = Awaited<ReturnType<typeof intakeFigures>>;

type Sample = { value: number; labels: Record<string, string> };

interface MetricDefinition<F> {
  readonly name: string;
  readonly help: string;
  readonly type: "gauge" | "counter";
  readonly samples: (figures: F) => Sample[];
}

/**
 * The three metrics of a durable outbox (rows by status, attempts, failed attempts), read from
 * Postgres at scrape time like every cluster figure: every gateway replica reports the same, and
 * a coordinator restart loses nothing. A failed attempt is one that did not deliver: every
 * attempt of a pending or dead row, every attempt but the last of a delivered one (a redelivery
 * starts its count again).
 */
function outboxMetrics(
  names: { rows: string; attempts: string; failures: string },
  what: { rows: string; attempt: string; failure: string },
): MetricDefinition<DeliveryFigures>[] {
  return [
    {
      name: names.rows,
      help: `${what.rows} by project and status (pending, delivered, dead: a dead letter).`,
      type: "gauge",
      samples: (figures) =>
        figures.map((f) => ({ labels: { project: f.projectId, status: f.status }, value: f.deliveries })),
    },
    {
      name: names.attempts,
      help: `Attempts made to ${what.attempt}, by project.`,
      type: "counter",
      samples: (figures) => byProject(figures, (f) => f.attempts),
    },
    {
      name: names.failures,
      help: `${what.failure}, by project.`,
      type: "counter",
      samples: (figures) =>
        byProject(figures, (f) => (f.status === "delivered" ? f.attempts - f.deliveries : f.attempts)),
    },
  ];
}

export const NOTIFICATION_METRICS = outboxMetrics(
  {
    rows: "overseer_notification_deliveries",
    attempts: "overseer_notification_delivery_attempts_total",
    failures: "overseer_notification_delivery_failures_total",
  },
  {
    rows: "Notification deliveries",
    attempt: "send notifications (signed webhook POSTs, Slack posts)",
    failure: "Notification attempts that did not deliver (an error answer, no answer, a timeout)",
  },
);

/** Two-way status: what Overseer writes back to intake items' issues (`tracker_updates`). */
export const TRACKER_UPDATE_METRICS = outboxMetrics(
  {
    rows: "overseer_tracker_updates",
    attempts: "overseer_tracker_update_attempts_total",
    failures: "overseer_tracker_update_failures_total",
  },
  {
    rows: "Tracker updates (comments, states, labels, closes written back to intake items' issues)",
    attempt: "write tracker updates",
    failure: "Tracker update attempts that did not write (a tracker error or refusal, no answer)",
  },
);

export const INTAKE_METRICS: readonly MetricDefinition<IntakeFigures>[] = [
  {
    name: "overseer_intake_items",
    help: "Tracker issues intake turned into tasks or missions, by project and tracker kind (a removed source's items go with it).",
    type: "gauge",
    samples: (figures) =>
      figures.map((f) => ({ labels: { project: f.projectId, kind: f.kind }, value: f.items })),
  },
  {
    name: "overseer_intake_webhook_deliveries",
    help: "Verified tracker webhook deliveries stored (each once), by project and tracker kind.",
    type: "gauge",
    samples: (figures) =>
      figures.map((f) => ({ labels: { project: f.projectId, kind: f.kind }, value: f.webhooks })),
  },
];

function byProject(figures: DeliveryFigures, value: (f: DeliveryFigures[number]) => number): Sample[] {
  const totals = new Map<string, number>();
  for (const f of figures) totals.set(f.projectId, (totals.get(f.projectId) ?? 0) + Math.max(0, value(f)));
  return [...totals].map(([project, total]) => ({ labels: { project }, value: total }));
}
