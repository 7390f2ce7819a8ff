import { PromptTooLargeError } from "./harness-errors.ts";
import {
  type MissionPromptContext,
  missionSection,
  plannerInstructions,
  planReviewInstructions,
  REPLAN_LINE,
} from "./mission-prompt.ts";

export type PromptAction = "execute" | "review" | "resolve";

export interface PromptInput {
  project: { id: string; objective: string; masterPrompt?: string };
  /** Notes for the task's role (from the runner config), if any. */
  roleNotes?: string;
  task: {
    id: string;
    stage: string;
    title: string;
    body: string;
    role: string;
    scope: string[];
    acceptance: string[];
    kind: "work" | "resolver" | "plan";
    parentId: string | null;
  };
  /** The project's open mission, if any (planning tasks always have one). */
  mission?: MissionPromptContext | null;
  action: PromptAction;
  agentId: string;
  /** Reviewer feedback for the next executor, or a handoff/checkpoint note; oldest text first. */
  feedback?: string | null;
  /** For resolvers: the task they unblock and why it is blocked. */
  parentContext?: { id: string; title: string; reason: string } | null;
  /** Operator answers, oldest first. */
  answers: { question: string; answer: string }[];
  /** `max_prompt_chars` of the runner config, in UTF-16 code units. */
  maxChars: number;
  /** For reviews: the base revision of `git diff <base>...HEAD`. */
  reviewBase?: string;
  /**
   * Which run of this action on this task this is, 1-based (2 = the second executor after a
   * reject). Default 1. Shown in the task card as `- Attempt: N`; the fake harness reads it.
   */
  attempt?: number;
  /**
   * Execute and resolve runs after an approved landing failed (docs/state-machine.md rule 3):
   * the checkout has `branch` merged in, with conflict markers committed in `files`. Part of
   * the instructions, so it is never cut.
   */
  landing?: {
    reason: "conflict" | "check_failed";
    files: readonly string[];
    branch: string;
    /**
     * pull_request mode: the task's open pull request, whose base (`branch`) moved so that the
     * approved head no longer merges (rule 18); its files are unknown until the worker merges.
     */
    pullRequest?: { number: number | null; url: string | null } | null;
  } | null;
}

/** Sections of a prompt, in the order they appear. */
export type PromptSectionName =
  | "project"
  | "role_notes"
  | "task_card"
  | "mission"
  | "instructions"
  | "feedback"
  | "answers";

export interface PromptAdjustment {
  section: PromptSectionName;
  action: "trimmed" | "dropped";
  /** Characters removed from the section's text (UTF-16 code units). */
  removedChars: number;
}

export type PromptRenderResult =
  | { ok: true; prompt: string; chars: number; adjustments: PromptAdjustment[] }
  | { ok: false; error: PromptTooLargeError };

/** Feedback kept (its most recent end) before anything else is trimmed: 2000 chars. */
export const FEEDBACK_KEEP_CHARS = 2000;
/** A trimmed optional section keeps at least this much text, or is dropped entirely: 200 chars. */
export const MIN_SECTION_CHARS = 200;

interface Section {
  name: PromptSectionName;
  heading: string;
  body: string;
}

/**
 * Renders the full, fresh prompt of one run (pure: no I/O, no clock).
 *
 * Order: project (objective + master prompt), role notes, task card, action instructions,
 * prior feedback/handoff, operator answers. Sizes are UTF-16 code units (`string.length`),
 * which is what `max_prompt_chars` counts.
 *
 * The task card and the action instructions are mandatory and never cut. When the prompt is
 * longer than `maxChars`, optional sections give way in this order, each step stopping as
 * soon as the prompt fits:
 *   1. feedback: its oldest text (the start) is cut down to the last {@link FEEDBACK_KEEP_CHARS};
 *   2. role notes: cut from the end, dropped when less than {@link MIN_SECTION_CHARS} would remain;
 *   3. project: master prompt then objective cut from the end, dropped likewise;
 *   4. operator answers: dropped one by one, oldest first;
 *   5. feedback: the rest of its older text is cut, then it is dropped.
 * Every cut leaves a visible marker such as `[… 1234 chars trimmed to fit max_prompt_chars]`.
 * If the mandatory part alone does not fit, the result is a {@link PromptTooLargeError}
 * naming both sizes.
 */
export function renderPrompt(input: PromptInput): PromptRenderResult {
  if (!Number.isInteger(input.maxChars) || input.maxChars <= 0) {
    throw new RangeError(`maxChars must be a positive integer, received ${String(input.maxChars)}`);
  }
  const sections = buildSections(input);
  const mandatoryChars = render(sections.filter((s) => isMandatory(s.name))).length;
  if (mandatoryChars > input.maxChars) {
    return { ok: false, error: new PromptTooLargeError(mandatoryChars, input.maxChars) };
  }

  const adjustments: PromptAdjustment[] = [];
  const overflow = () => render(sections).length - input.maxChars;
  const find = (name: PromptSectionName) => sections.find((s) => s.name === name);

  const trim = (name: PromptSectionName, from: "head" | "tail", floor: number) => {
    const section = find(name);
    if (!section || overflow() <= 0) return;
    const original = section.body;
    const fitted = cutToFit(original, original.length - overflow(), from, floor);
    if (fitted === null) {
      sections.splice(sections.indexOf(section), 1);
      adjustments.push({ section: name, action: "dropped", removedChars: original.length });
      return;
    }
    if (fitted.removed > 0) {
      section.body = fitted.text;
      adjustments.push({ section: name, action: "trimmed", removedChars: fitted.removed });
    }
  };

  trim("feedback", "head", FEEDBACK_KEEP_CHARS);
  trim("role_notes", "tail", 0);
  trim("mission", "tail", 0);
  trim("project", "tail", 0);
  dropOldestAnswers(input, sections, overflow, adjustments);
  trim("feedback", "head", 0);

  const prompt = render(sections);
  return { ok: true, prompt, chars: prompt.length, adjustments };
}

function isMandatory(name: PromptSectionName): boolean {
  return name === "task_card" || name === "instructions";
}

function render(sections: readonly Section[]): string {
  return `${sections.map((s) => `${s.heading}\n\n${s.body}`).join("\n\n")}\n`;
}

/**
 * Shortens `text` to at most `target` chars including a marker, cutting at the head (oldest
 * text) or the tail. `floor` > 0 (a partial step): at least `floor` chars of text are kept
 * even if the result is then longer than `target`; text within the floor is left alone.
 * `floor` = 0: returns null when less than MIN_SECTION_CHARS of text would remain, and the
 * caller drops the whole section.
 */
function cutToFit(
  text: string,
  target: number,
  from: "head" | "tail",
  floor: number,
): { text: string; removed: number } | null {
  let keep = Math.max(0, target);
  while (keep > 0 && keep + marker(text.length - keep, from).length > target) {
    keep -= keep + marker(text.length - keep, from).length - target;
  }
  keep = Math.max(keep, floor, 0);
  if (keep >= text.length) return { text, removed: 0 };
  if (floor === 0 && keep < MIN_SECTION_CHARS) return null;
  const kept = from === "head" ? sliceTail(text, keep) : sliceHead(text, keep);
  const removed = text.length - kept.length;
  return { text: from === "head" ? marker(removed, from) + kept : kept + marker(removed, from), removed };
}

function marker(removed: number, from: "head" | "tail"): string {
  return from === "head"
    ? `[… ${removed} older chars trimmed to fit max_prompt_chars]\n`
    : `\n[… ${removed} chars trimmed to fit max_prompt_chars]`;
}

/** The first `n` code units, never splitting a surrogate pair. */
function sliceHead(text: string, n: number): string {
  let end = Math.min(n, text.length);
  if (end > 0 && end < text.length && isHighSurrogate(text.charCodeAt(end - 1))) end -= 1;
  return text.slice(0, end);
}

/** The last `n` code units, never splitting a surrogate pair. */
function sliceTail(text: string, n: number): string {
  let start = Math.max(0, text.length - n);
  if (start > 0 && start < text.length && isLowSurrogate(text.charCodeAt(start))) start += 1;
  return text.slice(start);
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

function dropOldestAnswers(
  input: PromptInput,
  sections: Section[],
  overflow: () => number,
  adjustments: PromptAdjustment[],
): void {
  const section = sections.find((s) => s.name === "answers");
  if (!section || overflow() <= 0) return;
  const remaining = [...input.answers];
  let removedChars = 0;
  while (remaining.length > 0 && overflow() > 0) {
    const before = section.body.length;
    remaining.shift();
    if (remaining.length === 0) {
      sections.splice(sections.indexOf(section), 1);
      adjustments.push({ section: "answers", action: "dropped", removedChars: removedChars + before });
      return;
    }
    section.body = renderAnswers(remaining, input.answers.length - remaining.length);
    removedChars += before - section.body.length;
  }
  adjustments.push({ section: "answers", action: "trimmed", removedChars });
}

function buildSections(input: PromptInput): Section[] {
  const sections: Section[] = [];
  const projectParts = [`Objective: ${input.project.objective.trim()}`];
  if (input.project.masterPrompt?.trim()) projectParts.push(input.project.masterPrompt.trim());
  sections.push({
    name: "project",
    heading: `# Project ${input.project.id}`,
    body: projectParts.join("\n\n"),
  });

  if (input.roleNotes?.trim()) {
    sections.push({
      name: "role_notes",
      heading: `# Role notes (${input.task.role})`,
      body: input.roleNotes.trim(),
    });
  }

  sections.push({
    name: "task_card",
    heading: `# Task ${input.task.id}: ${input.task.title}`,
    body: taskCard(input),
  });
  if (input.mission && input.task.kind === "plan") {
    sections.push({ name: "mission", heading: "# Mission", body: missionSection(input.mission) });
  }
  sections.push({ name: "instructions", heading: `# Your job: ${input.action}`, body: instructions(input) });

  if (input.feedback?.trim()) {
    sections.push({
      name: "feedback",
      heading: "# Prior feedback and handoff notes",
      body: input.feedback.trim(),
    });
  }
  if (input.answers.length > 0) {
    sections.push({ name: "answers", heading: "# Operator answers", body: renderAnswers(input.answers, 0) });
  }
  return sections;
}

function renderAnswers(answers: readonly { question: string; answer: string }[], omitted: number): string {
  const intro =
    omitted > 0
      ? `A human operator answered these questions (${omitted} older answer(s) omitted to fit max_prompt_chars); treat the answers as decisions:`
      : "A human operator answered these questions; treat the answers as decisions:";
  return [intro, ...answers.map((a) => `Q: ${a.question.trim()}\nA: ${a.answer.trim()}`)].join("\n\n");
}

function taskCard(input: PromptInput): string {
  const { task } = input;
  const lines = [
    `- Stage: ${task.stage}`,
    `- Role: ${task.role}`,
    `- Kind: ${task.kind}`,
    ...(task.parentId ? [`- Parent task: ${task.parentId}`] : []),
    `- Attempt: ${input.attempt ?? 1}`,
    `- Your agent id: ${input.agentId}`,
  ];
  const parts = [lines.join("\n")];
  parts.push(
    [
      "## Scope",
      "",
      task.scope.length > 0
        ? "Change only files matching these paths (globs); `.overseer/**` is workflow metadata and always allowed:"
        : "No paths are in scope: change no files outside `.overseer/**` (workflow metadata).",
      ...task.scope.map((glob) => `- ${glob}`),
    ].join("\n"),
  );
  parts.push(
    [
      "## Acceptance criteria",
      "",
      ...(task.acceptance.length > 0
        ? task.acceptance.map((c) => `- ${c}`)
        : ["(none listed; the task body is the reference)"]),
    ].join("\n"),
  );
  if (input.parentContext) {
    const parent = input.parentContext;
    parts.push(
      [
        "## Blocked original",
        "",
        `This resolver exists to unblock task ${parent.id} "${parent.title}", which is blocked because:`,
        "",
        parent.reason.trim(),
      ].join("\n"),
    );
  }
  parts.push(["## Task body", "", task.body.trim()].join("\n"));
  return parts.join("\n\n");
}

const ESCALATE_LINES = [
  "- `overseer-agent escalate --reason TEXT`: you are blocked by something outside this task (a missing prerequisite, a broken tool, a bug elsewhere). Your unfinished work is kept as a checkpoint and a resolver task is created for REASON.",
  "- `overseer-agent escalate --reason TEXT --needs-user --category credentials|payment|product_question|external_admin|other --question TEXT [--option id:label[:description]]...`: only a human can unblock you. The question goes to the operator; offer up to 8 options when the answer is a choice (`custom` = free-text answer).",
];

const CLOSING_LINES = [
  "",
  "Every verb also accepts `--tokens-in N --tokens-out N --cost-usd X` to report this run's usage.",
  "A run ends with exactly one transition: as soon as it is recorded, Overseer stops this run, so call it last. A run that exits without a transition fails and is retried.",
];

/** What an executor must do after its task's approved work failed to land. */
function landingLines(landing: PromptInput["landing"]): string[] {
  if (!landing) return [];
  const branch = `\`${landing.branch}\``;
  if (landing.reason === "check_failed") {
    return [
      "",
      "## Integrate the main branch",
      "",
      `This task was approved, but the project's check command failed once it was combined with the current ${branch}. Your checkout is the task branch with ${branch} merged in (the last commit, \`HEAD\`, is that merge). Make the check pass on this combined tree, then submit; the prior feedback holds the check's output.`,
    ];
  }
  const pr = landing.pullRequest;
  const what = pr
    ? `This task was approved and its pull request ${pr.number !== null ? `#${pr.number}` : "from its PR branch"}${pr.url ? ` (${pr.url})` : ""} was opened against ${branch}, but ${branch} moved since and the pull request no longer merges: it conflicts with the current ${branch}.`
    : `This task was approved, but it conflicts with the current ${branch}.`;
  const files =
    landing.files.length > 0
      ? landing.files.map((file) => `- ${file}`)
      : ["- (the files are listed below, as the merge found them)"];
  return [
    "",
    "## Resolve the merge conflict",
    "",
    `${what} Your checkout is the task branch with ${branch} merged in (the last commit, \`HEAD\`, is that merge), and these files contain conflict markers (\`<<<<<<<\` task branch, \`|||||||\` common base, \`=======\`, \`>>>>>>>\` ${branch}):`,
    ...files,
    `Edit each file so no marker remains and both sides' intent is kept (\`git diff HEAD^1 HEAD\` shows what ${branch} brought in), check the result, then submit. \`git status\` shows no conflict: the markers are committed in the merge, and Overseer records your resolution in that merge commit.`,
  ];
}

function instructions(input: PromptInput): string {
  const who = `agent \`${input.agentId}\``;
  if (input.task.kind === "plan") {
    return input.action === "review"
      ? planReviewInstructions(who, input.mission?.proposal ?? null, ESCALATE_LINES, CLOSING_LINES)
      : plannerInstructions(who, ESCALATE_LINES, CLOSING_LINES);
  }
  const escalateLines =
    input.mission && input.task.kind === "work" ? [...ESCALATE_LINES, REPLAN_LINE] : ESCALATE_LINES;
  if (input.action === "review") {
    const diff = input.reviewBase
      ? `Run \`git diff ${input.reviewBase}...HEAD\` (and \`git log ${input.reviewBase}..HEAD\`) to see exactly what changed.`
      : "Use `git log` and `git show` on the task branch's commits to see exactly what changed.";
    return [
      `You are an independent reviewer (${who}); you did not write this change. The current directory is a checkout of the task branch. ${diff}`,
      "Check the change against the task body and the acceptance criteria, check that only files in scope changed, and run the project's checks where practical. Do not modify files.",
      "",
      "Finish with exactly one of:",
      "- `overseer-agent approve [--feedback TEXT]`: the change meets the task; it lands on the main branch.",
      "- `overseer-agent reject --feedback TEXT`: the change must be redone. A new executor gets your feedback, so say precisely what is wrong and what must change.",
      ...escalateLines,
      ...CLOSING_LINES,
    ].join("\n");
  }
  const role =
    input.action === "resolve"
      ? `You are a resolver (${who}): this task exists to remove a blocker (see "Blocked original"). Fix it within this task's scope so the original task can continue.`
      : `You are a fresh executor (${who}). Do the task described above.`;
  return [
    role,
    "The current directory is a fresh git checkout of the task branch. Keep your changes inside the scope. Overseer commits your changes with your message: you need not commit, and do not push.",
    ...landingLines(input.landing),
    "",
    "Finish with exactly one of:",
    '- `overseer-agent submit --message-file FILE [--summary TEXT]`: the work is ready for an independent review. FILE holds the commit message (first line: a short subject), e.g. `f=$(mktemp) && printf \'%s\\n\' "Add login form" "" "Why and how." >"$f" && overseer-agent submit --message-file "$f"`.',
    ...escalateLines,
    ...CLOSING_LINES,
  ].join("\n");
}
