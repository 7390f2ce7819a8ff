/**
 * Issue → task draft (pure). The title and body come from the issue, acceptance from its
 * Markdown checklist, scope and role from labels or the source's config, prerequisites from the
 * issues it is blocked by that intake already turned into tasks.
 */
import type { IntakeAs, IntakeSourceConfig } from "./intake-config.ts";
import type { TrackerIssue } from "./tracker-adapter.ts";

export interface TaskDraft {
  readonly id: string;
  readonly as: IntakeAs;
  readonly stage: string;
  readonly title: string;
  readonly body: string;
  readonly role: string;
  readonly scope: readonly string[];
  readonly acceptance: readonly string[];
  /** Task ids of the blockers intake already took. */
  readonly prerequisites: readonly string[];
  /** Blocker issue ids intake has not taken (not prerequisites: they are outside Overseer). */
  readonly outsideBlockers: readonly string[];
}

const CHECKLIST_ITEM = /^\s*[-*+]\s+\[[ xX]\]\s+(.+?)\s*$/;
const MAX_TASK_ID = 64;

/** The items of a Markdown task list (`- [ ] …`, `* [x] …`), in order, duplicates once. */
export function checklistOf(markdown: string): string[] {
  const items: string[] = [];
  for (const line of markdown.split(/\r?\n/)) {
    const text = CHECKLIST_ITEM.exec(line)?.[1];
    if (text !== undefined && !items.includes(text)) items.push(text);
  }
  return items;
}

/**
 * The task id of an issue: its key made an id (`acme/app#12` → `acme-app-12`, `ENG-12` stays),
 * at most 64 characters (a long key keeps its end, which holds the number).
 */
export function taskIdOf(issue: Pick<TrackerIssue, "key">): string {
  const slug = issue.key
    .replace(/[^A-Za-z0-9._-]+/g, "-")
    .replace(/-{2,}/g, "-")
    .replace(/^[-._]+|-+$/g, "");
  const id = slug.length > MAX_TASK_ID ? slug.slice(slug.length - MAX_TASK_ID).replace(/^[-._]+/, "") : slug;
  return id === "" ? "issue" : id;
}

/** Whether the issue starts a mission: its label says so, else the source's `as`. */
export function intakeAsOf(issue: Pick<TrackerIssue, "labels">, config: IntakeSourceConfig): IntakeAs {
  if (issue.labels.includes(config.missionLabel)) return "mission";
  if (issue.labels.includes(config.taskLabel)) return "task";
  return config.as;
}

function labelValues(labels: readonly string[], prefix: string): string[] {
  return labels
    .filter((label) => label.startsWith(prefix))
    .map((label) => label.slice(prefix.length).trim())
    .filter((value) => value !== "");
}

/**
 * The task an issue becomes. `taken` maps issue ids intake already turned into tasks to those
 * task ids (blockers found there become prerequisites).
 */
export function taskDraftOf(
  issue: TrackerIssue,
  config: IntakeSourceConfig,
  taken: ReadonlyMap<string, string>,
): TaskDraft {
  const scopes = labelValues(issue.labels, config.scopeLabelPrefix);
  const role = labelValues(issue.labels, config.roleLabelPrefix)[0] ?? config.role;
  const prerequisites: string[] = [];
  const outsideBlockers: string[] = [];
  for (const blocker of issue.blockedBy) {
    const taskId = taken.get(blocker);
    if (taskId === undefined) outsideBlockers.push(blocker);
    else if (!prerequisites.includes(taskId)) prerequisites.push(taskId);
  }
  const title = issue.title.trim() === "" ? issue.key : issue.title.trim();
  return {
    id: taskIdOf(issue),
    as: intakeAsOf(issue, config),
    stage: config.stage,
    title,
    body: `From ${issue.key} (${issue.url}).\n\n${issue.body.trim()}`.trim(),
    role,
    scope: scopes.length > 0 ? [...new Set(scopes)] : [...config.scope],
    acceptance: checklistOf(issue.body),
    prerequisites,
    outsideBlockers,
  };
}
