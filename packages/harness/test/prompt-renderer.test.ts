import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { FEEDBACK_KEEP_CHARS, type PromptInput, PromptTooLargeError, renderPrompt } from "../src/index.ts";
import { isWellFormed } from "./support/harness-fixtures.ts";

function input(overrides: Partial<PromptInput> = {}): PromptInput {
  return {
    project: { id: "shop", objective: "Sell socks online.", masterPrompt: "MASTER: follow the house style." },
    roleNotes: "ROLE NOTES: security reviewers check secrets.",
    task: {
      id: "S00-028",
      stage: "S00",
      title: "Add the login form",
      body: "TASK BODY: build the form.",
      role: "security",
      scope: ["src/login/**", "test/login/**"],
      acceptance: ["form validates email", "tests pass"],
      kind: "work",
      parentId: null,
    },
    action: "execute",
    agentId: "execute-security-0123456789ab",
    feedback: "FEEDBACK: tests were missing.",
    answers: [{ question: "Which provider?", answer: "ANSWER: Use Stripe." }],
    maxChars: 80_000,
    ...overrides,
  };
}

function render(overrides: Partial<PromptInput> = {}) {
  const result = renderPrompt(input(overrides));
  if (!result.ok) throw result.error;
  return result;
}

/** The mandatory part (card + instructions) as rendered without any optional section. */
function mandatoryPart(base: PromptInput): string {
  const bare = renderPrompt({
    ...base,
    project: { id: base.project.id, objective: "" },
    roleNotes: undefined,
    feedback: null,
    answers: [],
    maxChars: 10_000_000,
  });
  if (!bare.ok) throw bare.error;
  const start = bare.prompt.indexOf(`# Task ${base.task.id}`);
  return bare.prompt.slice(start).trimEnd();
}

describe("renderPrompt", () => {
  it("after a landing conflict, the executor's instructions list the files and are never cut", () => {
    const landing = {
      reason: "conflict" as const,
      files: ["src/login/form.ts", "test/login/form.test.ts"],
      branch: "trunk",
    };
    const { prompt } = render({
      landing,
      feedback: `${"old ".repeat(5000)}CONFLICT (content)`,
      maxChars: 6000,
    });
    const section = prompt.slice(prompt.indexOf("## Resolve the merge conflict"));
    expect(section).toContain("conflicts with the current `trunk`");
    expect(section).toContain("- src/login/form.ts\n- test/login/form.test.ts\n");
    expect(section).toContain("`<<<<<<<` task branch, `|||||||` common base");
    expect(prompt.indexOf("## Resolve the merge conflict")).toBeLessThan(
      prompt.indexOf("Finish with exactly one of:"),
    );
    // A failed check asks for a passing check instead; a review never sees either.
    expect(render({ landing: { ...landing, reason: "check_failed", files: [] } }).prompt).toContain(
      "## Integrate the main branch",
    );
    const review = render({ landing, action: "review" }).prompt;
    expect(review).not.toContain("## Resolve the merge conflict");
  });

  it("a pull request whose base moved names the pull request and its base, not the landing branch", () => {
    const { prompt } = render({
      landing: {
        reason: "conflict",
        files: [],
        branch: "overseer/pr/S00-001",
        pullRequest: { number: 12, url: "https://forge.test/acme/app/pull/12" },
      },
    });
    const section = prompt.slice(prompt.indexOf("## Resolve the merge conflict"));
    expect(section).toContain(
      "its pull request #12 (https://forge.test/acme/app/pull/12) was opened against `overseer/pr/S00-001`",
    );
    expect(section).toContain("conflicts with the current `overseer/pr/S00-001`");
    expect(section).toContain("- (the files are listed below, as the merge found them)");
    expect(section).not.toContain("`main`");
  });

  it("renders the sections in order", () => {
    const { prompt, chars, adjustments } = render();
    const order = [
      "# Project shop",
      "Sell socks online.",
      "MASTER:",
      "# Role notes (security)",
      "ROLE NOTES:",
      "# Task S00-028: Add the login form",
      "- Attempt: 1",
      "- src/login/**",
      "- form validates email",
      "TASK BODY:",
      "# Your job: execute",
      "overseer-agent submit --message-file",
      "# Prior feedback and handoff notes",
      "FEEDBACK:",
      "# Operator answers",
      "Q: Which provider?",
      "ANSWER:",
    ];
    const positions = order.map((marker) => prompt.indexOf(marker));
    expect(
      positions.every((p) => p >= 0),
      JSON.stringify(positions),
    ).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
    expect(chars).toBe(prompt.length);
    expect(adjustments).toEqual([]);
  });

  it("gives each action its own instructions", () => {
    const review = render({ action: "review", reviewBase: "origin/main" }).prompt;
    expect(review).toContain("# Your job: review");
    expect(review).toContain("git diff origin/main...HEAD");
    expect(review).toContain("overseer-agent approve");
    expect(review).toContain("overseer-agent reject --feedback TEXT");
    expect(review).not.toContain("overseer-agent submit");

    const resolve = render({
      action: "resolve",
      task: { ...input().task, kind: "resolver", parentId: "S00-027" },
      parentContext: { id: "S00-027", title: "Deploy", reason: "PARENT REASON: the CI token expired" },
    }).prompt;
    expect(resolve).toContain("# Your job: resolve");
    expect(resolve).toContain("- Parent task: S00-027");
    expect(resolve).toContain('unblock task S00-027 "Deploy"');
    expect(resolve).toContain("PARENT REASON: the CI token expired");
    expect(resolve).toContain("overseer-agent submit");
    expect(render({ attempt: 3 }).prompt).toContain("- Attempt: 3");
  });

  it("omits empty optional sections", () => {
    const { prompt } = render({
      roleNotes: "  ",
      feedback: null,
      answers: [],
      project: { id: "p", objective: "o" },
    });
    expect(prompt).not.toContain("# Role notes");
    expect(prompt).not.toContain("# Prior feedback");
    expect(prompt).not.toContain("# Operator answers");
  });

  describe("when too long", () => {
    const feedback = `OLDEST ${"old feedback. ".repeat(400)} NEWEST verdict: add tests.`;
    const roleNotes = `ROLE START ${"role note. ".repeat(300)} ROLE END`;
    const masterPrompt = `MASTER START ${"master rule. ".repeat(300)} MASTER END`;
    const answers = [
      { question: "first?", answer: `FIRST ANSWER ${"a".repeat(500)}` },
      { question: "second?", answer: "SECOND ANSWER" },
    ];
    const big = { feedback, roleNotes, project: { id: "shop", objective: "OBJ", masterPrompt }, answers };
    const full = render(big).chars;

    it("first cuts the oldest feedback, down to its most recent part", () => {
      const result = render({ ...big, maxChars: full - 1000 });
      expect(result.chars).toBeLessThanOrEqual(full - 1000);
      expect(result.adjustments).toEqual([
        { section: "feedback", action: "trimmed", removedChars: expect.any(Number) },
      ]);
      expect(result.prompt).toContain("NEWEST verdict: add tests.");
      expect(result.prompt).not.toContain("OLDEST");
      expect(result.prompt).toMatch(/\[… \d+ older chars trimmed to fit max_prompt_chars\]/);
      expect(result.prompt).toContain("ROLE END");
    });

    it("then role notes, then the project text, then old answers, then the rest of the feedback", () => {
      const steps = [
        {
          max: full - feedback.length + FEEDBACK_KEEP_CHARS - 100,
          gone: ["OLDEST", "ROLE END"],
          kept: ["ROLE START", "MASTER END"],
        },
        {
          max: full - feedback.length - roleNotes.length + FEEDBACK_KEEP_CHARS,
          gone: ["ROLE START", "MASTER END"],
          kept: ["MASTER START", "FIRST ANSWER"],
        },
        {
          max: mandatoryPart(input()).length + FEEDBACK_KEEP_CHARS + 400,
          gone: ["MASTER START", "FIRST ANSWER", "OBJ"],
          kept: ["NEWEST verdict", "SECOND ANSWER"],
        },
        { max: mandatoryPart(input()).length + 300, gone: ["SECOND ANSWER"], kept: ["NEWEST verdict"] },
        {
          max: mandatoryPart(input()).length + 5,
          gone: ["NEWEST verdict", "# Operator answers", "# Project"],
          kept: [],
        },
      ];
      for (const step of steps) {
        const result = render({ ...big, maxChars: step.max });
        expect(result.chars, `max ${step.max}`).toBeLessThanOrEqual(step.max);
        for (const text of step.gone) expect(result.prompt, `max ${step.max}: ${text}`).not.toContain(text);
        for (const text of step.kept) expect(result.prompt, `max ${step.max}: ${text}`).toContain(text);
        expect(result.prompt).toContain(mandatoryPart(input()));
      }
    });

    it("records what it dropped, in the documented order", () => {
      const result = render({ ...big, maxChars: mandatoryPart(input()).length + 5 });
      expect(result.adjustments.map((a) => `${a.section}:${a.action}`)).toEqual([
        "feedback:trimmed",
        "role_notes:dropped",
        "project:dropped",
        "answers:dropped",
        "feedback:dropped",
      ]);
    });

    it("fails with both sizes when the card and instructions alone do not fit", () => {
      const body = "B".repeat(5000);
      const base = input({ task: { ...input().task, body } });
      const needed = mandatoryPart(base).length + 1;
      const result = renderPrompt({ ...base, maxChars: 3000 });
      expect(result.ok).toBe(false);
      if (result.ok) return;
      expect(result.error).toBeInstanceOf(PromptTooLargeError);
      expect(result.error.name).toBe("PromptTooLargeError");
      expect(result.error.needed).toBe(needed);
      expect(result.error.max).toBe(3000);
      expect(result.error.message).toBe(
        `prompt needs ${needed} chars but max_prompt_chars is 3000; raise max_prompt_chars in the runner config or shorten the task body`,
      );
      expect(renderPrompt({ ...base, maxChars: needed }).ok).toBe(true);
    });

    it("never splits a surrogate pair", () => {
      const emojiFeedback = "🚀".repeat(3000);
      const result = render({
        feedback: emojiFeedback,
        roleNotes: "🚀".repeat(500),
        maxChars: mandatoryPart(input()).length + 1500,
      });
      expect(isWellFormed(result.prompt)).toBe(true);
    });
  });

  it("always fits or fails, and never cuts the card or the instructions (property)", () => {
    const text = fc.string({ unit: "grapheme", maxLength: 3000 });
    fc.assert(
      fc.property(
        text,
        text,
        text,
        fc.array(fc.record({ question: fc.string({ maxLength: 100 }), answer: text }), { maxLength: 4 }),
        fc.string({ maxLength: 2000 }),
        fc.integer({ min: 1, max: 12_000 }),
        (master, notes, feedback, answers, body, maxChars) => {
          const base = input({
            project: { id: "p", objective: "o", masterPrompt: master },
            roleNotes: notes,
            feedback,
            answers,
            task: { ...input().task, body },
          });
          const result = renderPrompt({ ...base, maxChars });
          const mandatory = mandatoryPart(base);
          if (result.ok) {
            expect(result.chars).toBeLessThanOrEqual(maxChars);
            expect(result.prompt.length).toBe(result.chars);
            expect(result.prompt).toContain(mandatory);
          } else {
            expect(result.error.needed).toBeGreaterThan(maxChars);
            expect(result.error.max).toBe(maxChars);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it("is pure: the same input gives the same prompt and the input is untouched", () => {
    const frozen = input();
    const copy = structuredClone(frozen);
    expect(render(frozen).prompt).toBe(render(frozen).prompt);
    expect(frozen).toEqual(copy);
  });
});
