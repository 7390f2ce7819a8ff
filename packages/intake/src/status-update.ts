/**
 * What Overseer writes back to an issue at each moment of its task (pure): a comment carrying a
 * hidden marker (so a retried write finds the first), a state and labels per the source's map,
 * and a close on merge.
 */
import type { IntakeSourceConfig, StatusMoment } from "./intake-config.ts";
import type { TrackerKind } from "./tracker-adapter.ts";
import { MARKER_PREFIX } from "./tracker-change.ts";

export interface StatusContext {
  readonly taskId: string;
  /** What makes this moment's write unique (the outbox row id): a second `blocked` is a new comment. */
  readonly occurrence: string;
  readonly pullRequestUrl?: string | null | undefined;
  /** Why blocked: the question of the "Needs you" card, or the reason of a pause at a bound. */
  readonly detail?: string | null | undefined;
  /** Set when `blocked` is the project's pause at a bound (budget, sessions, rounds): which one. */
  readonly bound?: string | null | undefined;
  readonly dashboardUrl?: string | null | undefined;
}

export interface StatusUpdate {
  readonly comment: { readonly body: string; readonly marker: string } | null;
  readonly state: string | null;
  readonly addLabels: readonly string[];
  readonly removeLabels: readonly string[];
}

/** Trackers whose states are just open and closed. */
const OPEN_CLOSED: ReadonlySet<TrackerKind> = new Set(["github", "gitlab"]);

function commentText(moment: StatusMoment, context: StatusContext): string {
  const task = `\`${context.taskId}\``;
  const link = context.dashboardUrl ? ` ([dashboard](${context.dashboardUrl}))` : "";
  switch (moment) {
    case "started":
      return `Overseer started work on this issue as task ${task}${link}.`;
    case "pr_opened":
      return `Overseer opened a pull request for task ${task}: ${context.pullRequestUrl ?? "(no link)"}`;
    case "done":
      return `Task ${task} is done${link}.`;
    case "blocked":
      if (context.bound) return pausedText(task, context.bound, context.detail, link);
      return `Task ${task} needs a person${context.detail ? `: ${context.detail}` : "."}\n\nReply here to answer; the reply goes to the task.`;
    case "merged":
      return `The pull request of task ${task} merged${context.pullRequestUrl ? `: ${context.pullRequestUrl}` : "."}`;
  }
}

/**
 * A pause at a bound asks nothing of the issue's readers: it says what stopped the work and
 * what an operator does to go on (raise the bound, start the project again).
 */
function pausedText(task: string, bound: string, reason: string | null | undefined, link: string): string {
  return [
    `Task ${task} is paused: its project stopped at its ${bound} bound${reason ? ` (${reason})` : ""}.`,
    "",
    `Nothing to answer here. An operator can raise the ${bound} bound and start the project again (\`overseer start\`)${link}; the work then goes on.`,
  ].join("\n");
}

/** The marker of one write: `<!-- overseer:intake:<task>:<moment>:<occurrence> -->`. */
export function statusMarkerOf(moment: StatusMoment, context: StatusContext): string {
  return `${MARKER_PREFIX}intake:${context.taskId}:${moment}:${context.occurrence} -->`;
}

/** The write for one moment: the map's entry, and on merge a close when the source asks for it. */
export function statusUpdateOf(
  kind: TrackerKind,
  moment: StatusMoment,
  config: IntakeSourceConfig,
  context: StatusContext,
): StatusUpdate {
  const entry = config.statusMap[moment] ?? {};
  const closes = moment === "merged" && config.closeOnMerge && OPEN_CLOSED.has(kind);
  const add = [...new Set(entry.addLabels ?? [])];
  return {
    comment:
      entry.comment === false
        ? null
        : { body: commentText(moment, context), marker: statusMarkerOf(moment, context) },
    state: entry.state ?? (closes ? "closed" : null),
    addLabels: add,
    removeLabels: [...new Set(entry.removeLabels ?? [])].filter((label) => !add.includes(label)),
  };
}
