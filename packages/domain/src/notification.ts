import type { Decision } from "./decision.ts";
import type { DomainEvent } from "./domain-event.ts";

/**
 * Notifications (README "Intake and notifications"): the facts an operator hears about outside
 * Overseer (webhooks, Slack). Each is one event of a transition, chosen by `notificationsOf`
 * and written to the outbox in the transaction that records the event, so a notification exists
 * exactly when its fact does.
 */
export const NOTIFICATION_TYPES = [
  "decision.opened",
  "decision.resolved",
  "incident.recorded",
  "project.paused",
  "mission.completed",
  "pr.opened",
  "pr.merged",
] as const;
export type NotificationType = (typeof NOTIFICATION_TYPES)[number];

/** Ordered: a subscription with `min_severity: warning` hears warnings and criticals. */
export const NOTIFICATION_SEVERITIES = ["info", "warning", "critical"] as const;
export type NotificationSeverity = (typeof NOTIFICATION_SEVERITIES)[number];

export function severityRank(severity: NotificationSeverity): number {
  return NOTIFICATION_SEVERITIES.indexOf(severity);
}

export interface Notification {
  /** Index of the event it comes from in the transition's event list. */
  readonly eventIndex: number;
  readonly type: NotificationType;
  readonly severity: NotificationSeverity;
  readonly taskId: string | null;
  /** What a receiver needs without calling back: the event's data, a decision's card. */
  readonly data: Readonly<Record<string, unknown>>;
}

/**
 * The notifications of one transition's events, in event order:
 * - `decision.created` → `decision.opened` (warning: a human is needed), with the card;
 * - `decision.resolved` → `decision.resolved` (info), with the resolution's note;
 * - `incident.recorded` → `incident.recorded` (critical);
 * - `project.status_changed` to paused at a bound (budget, sessions, rounds) → `project.paused`
 *   (warning); a pause an operator asked for is not news to them;
 * - `mission.completed`, `pr.opened`, `pr.merged` (info).
 */
export function notificationsOf(
  events: readonly DomainEvent[],
  decisions: readonly Decision[],
): Notification[] {
  const out: Notification[] = [];
  events.forEach((event, eventIndex) => {
    const found = notificationOf(event, decisions);
    if (found) out.push({ eventIndex, taskId: event.taskId, ...found });
  });
  return out;
}

function notificationOf(
  event: DomainEvent,
  decisions: readonly Decision[],
): Omit<Notification, "eventIndex" | "taskId"> | null {
  switch (event.type) {
    case "decision.created": {
      const card = decisions.find((d) => d.id === event.data.decisionId);
      return { type: "decision.opened", severity: "warning", data: { ...event.data, ...cardOf(card) } };
    }
    case "decision.resolved": {
      // The note goes with the answer, for a Slack card updated to say who chose what.
      const card = decisions.find((d) => d.id === event.data.decisionId);
      return {
        type: "decision.resolved",
        severity: "info",
        data: { ...event.data, note: card?.note ?? null },
      };
    }
    case "incident.recorded":
      return { type: "incident.recorded", severity: "critical", data: event.data };
    case "project.status_changed":
      return event.data.status === "paused" && typeof event.data.bound === "string"
        ? { type: "project.paused", severity: "warning", data: event.data }
        : null;
    case "mission.completed":
    case "pr.opened":
    case "pr.merged":
      return { type: event.type, severity: "info", data: event.data };
    default:
      return null;
  }
}

function cardOf(card: Decision | undefined): Record<string, unknown> {
  if (!card) return {};
  return {
    title: card.title,
    reason: card.reason,
    question: card.question,
    options: card.options.map((o) => ({
      id: o.id,
      label: o.label,
      description: o.description,
      requires_note: o.requires_note,
    })),
  };
}
