import type { deliveryFigures } from "@overseer/db";

/** Deliveries per project and status, and the attempts they made (`deliveryFigures` of `@overseer/db`). */
export type DeliveryFigures = Awaited<ReturnType<typeof deliveryFigures>>;

type Sample = { value: number; labels: Record<string, string> };

interface MetricDefinition {
  readonly name: string;
  readonly help: string;
  readonly type: "gauge" | "counter";
  readonly samples: (figures: DeliveryFigures) => Sample[];
}

/**
 * The notification metrics, read from Postgres at scrape time like every cluster figure: every
 * gateway replica reports the same, and a coordinator restart loses nothing. A failed attempt is
 * one that did not deliver: every attempt of a pending or dead delivery, every attempt but the
 * last of a delivered one (a redelivery starts its count again).
 */
export const NOTIFICATION_METRICS: readonly MetricDefinition[] = [
  {
    name: "overseer_notification_deliveries",
    help: "Notification deliveries by project and status (pending, delivered, dead: a dead letter).",
    type: "gauge",
    samples: (figures) =>
      figures.map((f) => ({ labels: { project: f.projectId, status: f.status }, value: f.deliveries })),
  },
  {
    name: "overseer_notification_delivery_attempts_total",
    help: "Attempts made to send notifications (signed webhook POSTs), by project.",
    type: "counter",
    samples: (figures) => byProject(figures, (f) => f.attempts),
  },
  {
    name: "overseer_notification_delivery_failures_total",
    help: "Notification attempts that did not deliver (an error answer, no answer, a timeout), by project.",
    type: "counter",
    samples: (figures) =>
      byProject(figures, (f) => (f.status === "delivered" ? f.attempts - f.deliveries : f.attempts)),
  },
];

function byProject(figures: DeliveryFigures, value: (f: DeliveryFigures[number]) => number): Sample[] {
  const totals = new Map<string, number>();
  for (const f of figures) totals.set(f.projectId, (totals.get(f.projectId) ?? 0) + Math.max(0, value(f)));
  return [...totals].map(([project, total]) => ({ labels: { project }, value: total }));
}
