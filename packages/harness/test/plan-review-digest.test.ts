import { describe, expect, it } from "vitest";
import { PLAN_REVIEW_MAX_CHARS, type PromptInput, planDigest, renderPrompt } from "../src/index.ts";

/** A planner's plan of `count` tasks, shaped as the task-file validator hands it on. */
function plan(count: number, titleChars = 20): Record<string, unknown>[] {
  return Array.from({ length: count }, (_, i) => ({
    id: `S${String(1 + (i % 7)).padStart(2, "0")}-${String(i + 1).padStart(4, "0")}`,
    stage: `S${String(1 + (i % 7)).padStart(2, "0")}`,
    title: `Step ${i + 1} ${"t".repeat(titleChars)}`,
    role: i % 3 === 0 ? "backend" : "frontend",
    scope: [`src/part-${i}/**`],
    prerequisites: i > 0 ? [`S01-${String(i).padStart(4, "0")}`] : [],
    acceptance: ["it works"],
    body: "What to do and why. ".repeat(5),
  }));
}

function planReview(tasks: unknown[]): PromptInput {
  return {
    project: { id: "shop", objective: "Sell socks online." },
    task: {
      id: "MISSION-R1",
      stage: "S00",
      title: "Mission round 1: plan",
      body: "Plan the mission.",
      role: "planner",
      scope: [],
      acceptance: [],
      kind: "plan",
      parentId: null,
    },
    mission: {
      objective: "Sell socks online.",
      stage: null,
      round: 1,
      maxRounds: 3,
      doneTasks: [],
      cancelledTasks: [],
      openIncidents: [],
      proposal: { kind: "plan", tasks },
    },
    action: "review",
    agentId: "review-planner-0123456789ab",
    answers: [],
    maxChars: 200_000,
  };
}

describe("the reviewer's digest of a plan (issue 19, breach 6)", () => {
  it("shows a small plan whole, as JSON", () => {
    const tasks = plan(3);
    const digest = planDigest(tasks);
    expect(digest).toBe(["```json", JSON.stringify(tasks, null, 2), "```"].join("\n"));
  });

  it("stays within its bound whatever the plan: counts, a line per task that fits, how many were left out", () => {
    for (const [count, titleChars] of [
      [9008, 20],
      [2000, 5000],
      [50_000, 1],
    ] as const) {
      const tasks = plan(count, titleChars);
      const digest = planDigest(tasks);
      expect(digest.length, `${count} tasks`).toBeLessThanOrEqual(PLAN_REVIEW_MAX_CHARS);
      expect(digest).toContain(`${count} tasks`);
      expect(digest).toMatch(/Tasks per stage: S\d\d \(\d+\)/);
      expect(digest).toMatch(/Tasks per role: (backend|frontend) \(\d+\)/);
      expect(digest).toContain(`- ${String(tasks[0]?.id)} [backend] Step 1`);
      expect(digest).toMatch(/… and \d+ more tasks not shown/);
    }
  });

  it("lists every task of a plan just too large to show whole", () => {
    const tasks = plan(60);
    const digest = planDigest(tasks, 20_000);
    expect(JSON.stringify(tasks, null, 2).length).toBeGreaterThan(20_000);
    expect(digest.length).toBeLessThanOrEqual(20_000);
    for (const t of tasks) expect(digest).toContain(`- ${String(t.id)} `);
    expect(digest).toContain("every task is listed");
  });

  it("keeps the plan review's whole prompt bounded: a 9,008-task plan renders within max_prompt_chars", () => {
    const tasks = plan(9008);
    expect(JSON.stringify(tasks, null, 2).length).toBeGreaterThan(1_000_000);
    const result = renderPrompt(planReview(tasks));
    if (!result.ok) throw result.error;
    expect(result.prompt.length).toBeLessThan(PLAN_REVIEW_MAX_CHARS + 10_000);
    expect(result.prompt).toContain("9008 tasks");
    expect(result.prompt).toContain("overseer-agent approve");
  });
});
