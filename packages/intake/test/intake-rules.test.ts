import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { intakeConfigOf } from "../src/intake-config.ts";
import { statusUpdateOf } from "../src/status-update.ts";
import { checklistOf, intakeAsOf, taskDraftOf, taskIdOf } from "../src/task-draft.ts";
import type { TrackerComment, TrackerIssue } from "../src/tracker-adapter.ts";
import { commentActionOf, issueVerdictOf, matchesQuery } from "../src/tracker-change.ts";

const TASK_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

function issue(over: Partial<TrackerIssue> = {}): TrackerIssue {
  return {
    id: "12",
    key: "acme/app#12",
    url: "https://github.example/acme/app/issues/12",
    title: "Add a health route",
    body: "GET /health answers 200.\n\n- [ ] returns ok\n- [x] has a test\n* [ ] documented",
    state: "open",
    terminal: false,
    labels: ["overseer"],
    assignees: ["overseer-bot"],
    blockedBy: [],
    updatedAt: "2026-12-04T10:00:00Z",
    ...over,
  };
}

const comment = (over: Partial<TrackerComment> = {}): TrackerComment => ({
  id: "c1",
  author: "alice",
  body: "Use port 8080.",
  createdAt: "2026-12-04T11:00:00Z",
  byBot: false,
  ...over,
});

describe("issue → task draft", () => {
  const config = intakeConfigOf();

  it("takes the title, the body with a link back, and acceptance from the checklist", () => {
    const draft = taskDraftOf(issue(), config, new Map());
    expect(draft.title).toBe("Add a health route");
    expect(draft.body).toMatch(/^From acme\/app#12 \(https:\/\/github\.example\/acme\/app\/issues\/12\)\./);
    expect(draft.body).toContain("GET /health answers 200.");
    expect(draft.acceptance).toEqual(["returns ok", "has a test", "documented"]);
    expect(draft.id).toBe("acme-app-12");
  });

  it("reads scope and role from labels, else the source's defaults", () => {
    const labelled = taskDraftOf(
      issue({ labels: ["overseer", "scope:src/**", "scope:test/**", "role:backend"] }),
      config,
      new Map(),
    );
    expect(labelled.scope).toEqual(["src/**", "test/**"]);
    expect(labelled.role).toBe("backend");
    const plain = taskDraftOf(issue(), intakeConfigOf({ role: "web", scope: ["apps/**"] }), new Map());
    expect(plain.scope).toEqual(["apps/**"]);
    expect(plain.role).toBe("web");
  });

  it("makes taken blockers prerequisites and keeps the others aside", () => {
    const draft = taskDraftOf(issue({ blockedBy: ["7", "9"] }), config, new Map([["7", "acme-app-7"]]));
    expect(draft.prerequisites).toEqual(["acme-app-7"]);
    expect(draft.outsideBlockers).toEqual(["9"]);
  });

  it("starts a mission when the source or the issue's label says so", () => {
    expect(intakeAsOf(issue(), config)).toBe("task");
    expect(intakeAsOf(issue({ labels: ["overseer:mission"] }), config)).toBe("mission");
    expect(intakeAsOf(issue(), intakeConfigOf({ as: "mission" }))).toBe("mission");
    expect(intakeAsOf(issue({ labels: ["overseer:task"] }), intakeConfigOf({ as: "mission" }))).toBe("task");
  });

  it("reads no checklist from prose or code without a box", () => {
    expect(checklistOf("- plain item\n- [] not a box\ntext [ ] inside")).toEqual([]);
  });
});

describe("what a tracker change means", () => {
  const query = { container: "acme/app", labels: ["Overseer"], assignee: "overseer-bot" };

  it("takes a matching open issue, labels compared without case", () => {
    expect(issueVerdictOf(issue(), query, "none")).toEqual({ kind: "take" });
    expect(issueVerdictOf(issue({ labels: [] }), query, "none")).toEqual({ kind: "keep" });
    expect(issueVerdictOf(issue({ terminal: true, state: "closed" }), query, "none")).toEqual({
      kind: "keep",
    });
  });

  it("honours the query's active states instead of the open ones", () => {
    const byState = { container: "ENG", states: ["Todo", "In Progress"] };
    expect(matchesQuery(issue({ state: "todo" }), byState)).toBe(true);
    expect(matchesQuery(issue({ state: "Backlog" }), byState)).toBe(false);
  });

  it("cancels a live task when the issue goes terminal or is unassigned", () => {
    expect(issueVerdictOf(issue({ terminal: true, state: "closed" }), query, "live")).toEqual({
      kind: "cancel",
      reason: "acme/app#12 is closed in the tracker",
    });
    expect(issueVerdictOf(issue({ assignees: ["bob"] }), query, "live").kind).toBe("cancel");
    expect(issueVerdictOf(issue({ labels: [] }), query, "live")).toEqual({ kind: "keep" });
    expect(issueVerdictOf(issue({ terminal: true }), query, "over")).toEqual({ kind: "keep" });
  });

  it("answers a pending card with a person's comment, else feeds it to the next run", () => {
    expect(commentActionOf(comment(), "dec-1")).toEqual({
      kind: "resolve",
      decisionId: "dec-1",
      optionId: "custom",
      note: "Use port 8080.\n\n— alice on the tracker",
    });
    expect(commentActionOf(comment(), null)).toEqual({
      kind: "answer",
      text: "Use port 8080.\n\n— alice on the tracker",
    });
  });

  it("ignores Overseer's own comments, marked ones and empty ones", () => {
    expect(commentActionOf(comment({ byBot: true }), "dec-1")).toEqual({ kind: "ignore" });
    expect(commentActionOf(comment({ body: "x <!-- overseer:intake:t:started:1 -->" }), null)).toEqual({
      kind: "ignore",
    });
    expect(commentActionOf(comment({ body: "  " }), null)).toEqual({ kind: "ignore" });
  });
});

describe("the status map", () => {
  const context = { taskId: "acme-app-12", occurrence: "41", pullRequestUrl: "https://pr/5" };

  it("comments with a marker and moves labels per the map", () => {
    const started = statusUpdateOf("github", "started", intakeConfigOf(), context);
    expect(started.comment?.body).toContain("acme-app-12");
    expect(started.comment?.marker).toBe("<!-- overseer:intake:acme-app-12:started:41 -->");
    expect(started.addLabels).toEqual(["overseer:working"]);
    expect(started.state).toBeNull();
    expect(statusUpdateOf("github", "pr_opened", intakeConfigOf(), context).comment?.body).toContain(
      "https://pr/5",
    );
  });

  it("closes on merge where states are open/closed, and follows the map elsewhere", () => {
    expect(statusUpdateOf("github", "merged", intakeConfigOf(), context).state).toBe("closed");
    expect(
      statusUpdateOf("gitlab", "merged", intakeConfigOf({ closeOnMerge: false }), context).state,
    ).toBeNull();
    expect(statusUpdateOf("linear", "merged", intakeConfigOf(), context).state).toBeNull();
    const jira = intakeConfigOf({ statusMap: { merged: { state: "Done" }, done: { comment: false } } });
    expect(statusUpdateOf("jira", "merged", jira, context).state).toBe("Done");
    expect(statusUpdateOf("jira", "done", jira, context).comment).toBeNull();
    // A moment the map leaves out keeps its default.
    expect(statusUpdateOf("jira", "started", jira, context).addLabels).toEqual(["overseer:working"]);
  });

  it("a question asks for a reply; a pause at a bound says what an operator can do instead", () => {
    const question = statusUpdateOf("github", "blocked", intakeConfigOf(), {
      ...context,
      detail: "Which database?",
    });
    expect(question.comment?.body).toBe(
      "Task `acme-app-12` needs a person: Which database?\n\nReply here to answer; the reply goes to the task.",
    );
    const paused = statusUpdateOf("github", "blocked", intakeConfigOf(), {
      ...context,
      detail: "budget_usd 5 reached",
      bound: "budget",
      dashboardUrl: "https://overseer.example.com/#/project/p/task/acme-app-12",
    });
    expect(paused.comment?.body).toBe(
      [
        "Task `acme-app-12` is paused: its project stopped at its budget bound (budget_usd 5 reached).",
        "",
        "Nothing to answer here. An operator can raise the budget bound and start the project again (`overseer start`) ([dashboard](https://overseer.example.com/#/project/p/task/acme-app-12)); the work then goes on.",
      ].join("\n"),
    );
    expect(paused.comment?.body).not.toContain("Reply here");
    expect(paused.addLabels).toEqual(["overseer:blocked"]);
  });

  it("never adds and removes the same label", () => {
    const config = intakeConfigOf({ statusMap: { blocked: { addLabels: ["x"], removeLabels: ["x", "y"] } } });
    const update = statusUpdateOf("github", "blocked", config, context);
    expect(update.addLabels).toEqual(["x"]);
    expect(update.removeLabels).toEqual(["y"]);
  });
});

describe("properties", () => {
  it("every issue key gives a valid, stable task id", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 120 }), (key) => {
        const id = taskIdOf({ key });
        expect(id).toMatch(TASK_ID);
        expect(taskIdOf({ key })).toBe(id);
      }),
    );
  });

  it("a terminal issue is never taken under the default open states, and a draft's acceptance comes from its body", () => {
    const arbitraryIssue = fc.record({
      title: fc.string(),
      body: fc.array(
        fc.oneof(
          fc.string(),
          fc.string().map((s) => `- [ ] ${s}`),
        ),
        { maxLength: 8 },
      ),
      labels: fc.array(fc.constantFrom("a", "b", "scope:src/**", "role:x", "overseer:mission")),
      terminal: fc.boolean(),
    });
    fc.assert(
      fc.property(arbitraryIssue, (shape) => {
        const subject = issue({ ...shape, body: shape.body.join("\n") });
        const verdict = issueVerdictOf(subject, { container: "acme/app" }, "none");
        if (shape.terminal) expect(verdict.kind).toBe("keep");
        const draft = taskDraftOf(subject, intakeConfigOf(), new Map());
        for (const item of draft.acceptance) expect(subject.body).toContain(item);
        expect(draft.scope.length).toBeGreaterThan(0);
      }),
    );
  });
});
