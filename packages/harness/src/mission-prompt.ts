/**
 * Mission parts of a prompt: what a planner (or the reviewer of a plan) needs to know about
 * the mission, and the instructions of a planning run and of its review.
 */

export interface MissionPromptContext {
  objective: string;
  /** Stage the operator asked the planner to start from; null = the planner chooses. */
  stage: string | null;
  round: number;
  maxRounds: number;
  /** Finished tasks, oldest first, with the executor's summary when it gave one. */
  doneTasks: { id: string; title: string; summary: string | null }[];
  /** Tasks cancelled so far (replanned or stopped work), oldest first. */
  cancelledTasks: { id: string; title: string; reason: string | null }[];
  /** Incidents whose task is still open. */
  openIncidents: { taskId: string | null; kind: string; message: string }[];
  /** For the review of a planning task: what the planner proposed. */
  proposal?: { kind: "plan"; tasks: unknown[] } | { kind: "complete"; evidence: string } | null;
}

/** The "Mission" section: objective, round, stage, the evidence so far and the open incidents. */
export function missionSection(m: MissionPromptContext): string {
  const lines = [
    `Objective: ${m.objective.trim()}`,
    `Round: ${m.round} of at most ${m.maxRounds}`,
    `Stage: ${m.stage ?? "(the planner's choice)"}`,
    "",
    "## Done so far",
    "",
    ...(m.doneTasks.length > 0
      ? m.doneTasks.map((t) => `- ${t.id} ${t.title}${t.summary ? ` — ${oneLine(t.summary)}` : ""}`)
      : ["(nothing yet)"]),
  ];
  if (m.cancelledTasks.length > 0) {
    lines.push(
      "",
      "## Cancelled",
      "",
      ...m.cancelledTasks.map((t) => `- ${t.id} ${t.title}${t.reason ? ` — ${oneLine(t.reason)}` : ""}`),
    );
  }
  lines.push(
    "",
    "## Open incidents",
    "",
    ...(m.openIncidents.length > 0
      ? m.openIncidents.map((i) => `- ${i.kind}${i.taskId ? ` on ${i.taskId}` : ""}: ${oneLine(i.message)}`)
      : ["(none)"]),
  );
  return lines.join("\n");
}

const PLAN_FILE_EXAMPLE = [
  "```yaml",
  "tasks:",
  "  - id: S01-001",
  "    title: Add the tokenizer",
  "    role: backend",
  '    scope: ["src/tokenizer/**", "test/tokenizer/**"]',
  "    prerequisites: []",
  '    acceptance: ["tokenizer has unit tests that pass"]',
  "    body: |",
  "      What to do and why.",
  "```",
].join("\n");

/** Instructions of a planning run (the execute action of a `plan` task). */
export function plannerInstructions(
  who: string,
  escalateLines: readonly string[],
  closing: readonly string[],
): string {
  return [
    `You are the mission's planner (${who}). Read the repository (the current directory is a checkout of the main line) and the mission above, then decide what comes next. Change no files: your output is a plan or a completion claim, handed in through overseer-agent.`,
    "",
    "Finish with exactly one of:",
    "- `overseer-agent plan --file FILE [--summary TEXT]`: FILE (write it outside the checkout, e.g. under `$(mktemp -d)`) is a YAML or JSON task file with the next stage of tasks, in the format of `overseer task import`:",
    PLAN_FILE_EXAMPLE,
    "  Use new ids (existing ones are listed above); prerequisites may name new or existing tasks. Keep each task small, scoped (globs) and checkable. The plan is validated (every problem comes back to a new planning run), then reviewed by an independent reviewer, then imported as one whole.",
    "- `overseer-agent complete --evidence FILE`: the objective is met. FILE holds the evidence (what you checked, commands run and their results). An independent reviewer must approve it; the project then ends `completed`.",
    ...escalateLines,
    ...closing,
  ].join("\n");
}

/** Instructions of the review of a planning task: the proposal itself, then the verdicts. */
export function planReviewInstructions(
  who: string,
  proposal: MissionPromptContext["proposal"],
  escalateLines: readonly string[],
  closing: readonly string[],
): string {
  const what =
    proposal?.kind === "complete"
      ? [
          "The planner declares the mission's objective met, with this evidence:",
          "",
          "```text",
          proposal.evidence.trim(),
          "```",
          "",
          "Check the evidence against the repository (run the project's checks where practical). Approve only if the objective is really met: the project then ends `completed`.",
        ]
      : [
          "The planner proposes these tasks (already validated as a task file):",
          "",
          planDigest(proposal?.kind === "plan" ? proposal.tasks : []),
          "",
          "Check that the tasks move the objective forward, are small, correctly scoped and ordered, and have checkable acceptance criteria. Approve to import them all at once.",
        ];
  return [
    `You are an independent reviewer (${who}) of a mission's planning step; you did not write it. Do not modify files.`,
    "",
    ...what,
    "",
    "Finish with exactly one of:",
    "- `overseer-agent approve [--feedback TEXT]`: accept the proposal.",
    "- `overseer-agent reject --feedback TEXT`: a new planner plans again with your feedback; say precisely what must change.",
    ...escalateLines,
    ...closing,
  ].join("\n");
}

/**
 * Most characters of a plan shown to its reviewer: the proposal part of a plan review's prompt
 * stays within this whatever the plan holds (the plan itself is capped by the import bound,
 * OVERSEER_MAX_IMPORT_TASKS).
 */
export const PLAN_REVIEW_MAX_CHARS = 40_000;

/** Most characters of one field of a task in the digest. */
const DIGEST_FIELD_CHARS = 120;
/** Most stages or roles counted by name in the digest's header. */
const DIGEST_GROUPS = 20;

/**
 * The plan as its reviewer sees it: the whole task file as JSON when that fits in `maxChars`;
 * otherwise a digest that does: the task count, tasks per stage and per role, then one line per
 * task (id, role, title, prerequisites, scope, each cut short) for as many tasks as fit, and how
 * many were left out.
 */
export function planDigest(tasks: readonly unknown[], maxChars = PLAN_REVIEW_MAX_CHARS): string {
  const full = ["```json", JSON.stringify(tasks, null, 2), "```"].join("\n");
  if (full.length <= maxChars) return full;
  const cards = tasks.map(digestCard);
  const header = [
    `The plan is too large to show whole (${tasks.length} tasks, ${full.length} characters as JSON); this is a digest of it.`,
    `Tasks per stage: ${groupCounts(cards.map((c) => c.stage))}`,
    `Tasks per role: ${groupCounts(cards.map((c) => c.role))}`,
    "",
  ];
  const lines: string[] = [];
  const reserve = 300; // the closing line
  let used = header.join("\n").length;
  for (const c of cards) {
    const line = `- ${c.id} [${c.role}] ${c.title}${c.prerequisites ? ` — after: ${c.prerequisites}` : ""}${c.scope ? ` — scope: ${c.scope}` : ""}`;
    if (used + line.length + 1 > maxChars - reserve) break;
    lines.push(line);
    used += line.length + 1;
  }
  const left = cards.length - lines.length;
  const closing =
    left > 0
      ? `… and ${left} more tasks not shown. A plan too large to review whole is itself a reason to reject it: ask for the next stage only.`
      : "(every task is listed; bodies and acceptance criteria are left out)";
  return [...header, ...lines, "", closing].join("\n");
}

interface DigestCard {
  readonly id: string;
  readonly role: string;
  readonly stage: string;
  readonly title: string;
  readonly prerequisites: string;
  readonly scope: string;
}

function digestCard(task: unknown): DigestCard {
  const t = (task !== null && typeof task === "object" ? task : {}) as Record<string, unknown>;
  const text = (value: unknown) => cut(typeof value === "string" ? oneLine(value) : "?", DIGEST_FIELD_CHARS);
  const list = (value: unknown) =>
    cut(Array.isArray(value) ? value.map((v) => String(v)).join(", ") : "", DIGEST_FIELD_CHARS);
  return {
    id: cut(text(t.id), 40),
    role: cut(text(t.role), 40),
    stage: cut(text(t.stage), 40),
    title: text(t.title),
    prerequisites: list(t.prerequisites),
    scope: list(t.scope),
  };
}

/** `S01 (12), S02 (3)`: the most frequent names first, at most DIGEST_GROUPS of them. */
function groupCounts(names: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const name of names) counts.set(name, (counts.get(name) ?? 0) + 1);
  const sorted = [...counts].sort((a, b) => b[1] - a[1]);
  const shown = sorted.slice(0, DIGEST_GROUPS).map(([name, n]) => `${name} (${n})`);
  const more = sorted.length - shown.length;
  return `${shown.join(", ")}${more > 0 ? `, and ${more} more` : ""}`;
}

function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** Offered to executors and reviewers of a mission's ordinary tasks. */
export const REPLAN_LINE =
  "- `overseer-agent escalate --replan --reason TEXT`: this task should not be done as planned (the plan is wrong or obsolete). The task is dropped (its work is kept on a checkpoint) and the mission's planner plans again with REASON.";

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > 240 ? `${flat.slice(0, 239)}…` : flat;
}
