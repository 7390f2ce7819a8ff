import { newTask } from "@overseer/domain";
import { describe, expect, it } from "vitest";
import { approvedHeadLabel, pullRequestText } from "../src/forge/pull-request-body.ts";

const task = newTask({ projectId: "web", id: "T-7", title: "Bump v", acceptance: ["v is bumped"] });
const runs = [
  { id: "run-1", action: "execute", agentId: "exec-1", status: "finished" },
  { id: "run-2", action: "review", agentId: "rev-1", status: "finished" },
];
const facts = {
  summary: "Bumped v.",
  verdict: "Looks right",
  reviewer: "rev-1",
  runs,
  headSha: "0123456789abcdef0123",
};

describe("pullRequestText", () => {
  it("links the task and every run on the dashboard when OVERSEER_DASHBOARD_URL is set", () => {
    const text = pullRequestText("web", task, { ...facts, dashboardUrl: "https://overseer.example.com" });
    expect(text.title).toBe("T-7: Bump v");
    expect(text.marker).toBe("task:T-7");
    expect(text.body).toContain("[T-7](https://overseer.example.com/#/project/web/task/T-7)");
    expect(text.body).toContain("- [run-1](https://overseer.example.com/#/run/run-1): execute by `exec-1`");
    expect(text.body).toContain("- [run-2](https://overseer.example.com/#/run/run-2): review by `rev-1`");
    expect(text.body).toContain(approvedHeadLabel(facts.headSha));
    expect(text.body).toContain("- [x] v is bumped");
    expect(text.body).toContain("Approved by `rev-1`: Looks right");
  });

  it("names the runs by id, without links, when no dashboard URL is known", () => {
    const text = pullRequestText("web", task, { ...facts, dashboardUrl: null });
    expect(text.body).not.toContain("](");
    expect(text.body).toContain("**Overseer task T-7**");
    expect(text.body).toContain("- `run-1`: execute by `exec-1` (finished)");
  });

  it("names the tracker issue an intake task came from, without closing keywords", () => {
    const text = pullRequestText("web", task, { ...facts, dashboardUrl: null, issueKey: "acme/app#12" });
    expect(text.body).toContain("From issue acme/app#12; its status is reported there.");
    expect(text.body).not.toMatch(/\b(close[sd]?|fix(e[sd])?|resolve[sd]?)\s+acme\/app#12/i);
    expect(pullRequestText("web", task, { ...facts, dashboardUrl: null }).body).not.toContain("From issue");
  });
});
