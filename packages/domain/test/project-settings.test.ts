/**
 * Project creation and settings changes are domain commands like every other state change:
 * checked here, then applied by the TransitionApplier in one transaction with their event.
 */
import { describe, expect, it } from "vitest";
import {
  applyCommand,
  applyProjectCreation,
  DomainError,
  landingBranch,
  landingHint,
  type NewProject,
  PROJECT_DEFAULTS,
} from "../src/index.ts";
import { buildState, project, testContext } from "./support/state-builder.ts";

function newProject(fields: Partial<NewProject> = {}): NewProject {
  return {
    id: "parser",
    name: "Parser",
    repo: "/srv/git/parser.git",
    branch: PROJECT_DEFAULTS.branch,
    repoKind: "bare",
    objective: "Parse everything",
    runnerConfig: { argv: ["agent"], env: { TOKEN: "secret-value" } },
    concurrency: 2,
    budgetUsd: 5,
    status: PROJECT_DEFAULTS.status,
    continuous: PROJECT_DEFAULTS.continuous,
    ...fields,
  };
}

function refusal(run: () => unknown): DomainError {
  try {
    run();
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  throw new Error("expected a DomainError");
}

describe("create-project", () => {
  it("creates the project row and records project.created with the config's keys, never its values", () => {
    const result = applyProjectCreation(
      { kind: "create-project", project: newProject(), by: "alice" },
      testContext(),
    );
    expect(result.outcome).toBe("applied");
    expect(result.changes.createdProject).toMatchObject({ id: "parser", concurrency: 2, status: "paused" });
    expect(result.state.project).toMatchObject({
      id: "parser",
      status: "paused",
      concurrency: 2,
      version: 0,
    });
    expect(result.state.tasks.size).toBe(0);
    expect(result.events).toEqual([
      {
        type: "project.created",
        taskId: null,
        runId: null,
        data: {
          name: "Parser",
          repo: "/srv/git/parser.git",
          branch: "main",
          repoKind: "bare",
          status: "paused",
          concurrency: 2,
          runnerConfigKeys: ["argv", "env"],
          by: "alice",
        },
      },
    ]);
    expect(JSON.stringify(result.events)).not.toContain("secret-value");
  });

  it("refuses an id that is not a slug, a concurrency below 1 and a negative budget", () => {
    const ctx = testContext();
    const create = (fields: Partial<NewProject>) => () =>
      applyProjectCreation({ kind: "create-project", project: newProject(fields), by: "op" }, ctx);
    expect(refusal(create({ id: "../etc" })).code).toBe("invalid_settings");
    expect(refusal(create({ concurrency: 0 })).message).toContain(
      "concurrency must be an integer of at least 1",
    );
    expect(refusal(create({ concurrency: 1.5 })).code).toBe("invalid_settings");
    expect(refusal(create({ budgetUsd: -1 })).message).toContain("budget_usd must be a non-negative number");
  });

  it("is refused against a project that exists (already_exists), changing nothing", () => {
    const state = buildState({ project: project({ id: "parser" }) });
    const error = refusal(() =>
      applyCommand(state, { kind: "create-project", project: newProject(), by: "op" }, testContext()),
    );
    expect(error.code).toBe("already_exists");
    expect(error.message).toContain("Project parser already exists");
  });
});

describe("update-project-config", () => {
  it("writes the given settings, sets the concurrency and names the changed keys", () => {
    const state = buildState({ project: project({ concurrency: 1 }) });
    const patch = { concurrency: 3, runnerConfig: { argv: ["other"] }, objective: "New goal" };
    const result = applyCommand(state, { kind: "update-project-config", patch, by: "bob" }, testContext());
    expect(result.outcome).toBe("applied");
    expect(result.state.project.concurrency).toBe(3);
    expect(result.changes.settings).toEqual(patch);
    expect(result.changes.project?.concurrency).toBe(3);
    expect(result.changes.tasks).toEqual([]);
    expect(result.events.map((e) => [e.type, e.data])).toEqual([
      ["project.config_updated", { changed: ["runnerConfig", "objective", "concurrency"], by: "bob" }],
    ]);
  });

  it("an empty patch changes nothing and records nothing", () => {
    const state = buildState();
    const result = applyCommand(
      state,
      { kind: "update-project-config", patch: {}, by: "bob" },
      testContext(),
    );
    expect(result.changes.project).toBeNull();
    expect(result.changes.settings).toBeNull();
    expect(result.events).toEqual([]);
  });

  it("refuses a concurrency below 1 and a negative budget", () => {
    const state = buildState();
    const update = (patch: { concurrency?: number; budgetUsd?: number }) => () =>
      applyCommand(state, { kind: "update-project-config", patch, by: "op" }, testContext());
    expect(refusal(update({ concurrency: 0 })).code).toBe("invalid_settings");
    expect(refusal(update({ budgetUsd: -0.5 })).code).toBe("invalid_settings");
  });
});

describe("landingBranch", () => {
  it("is the project's branch for a remote or a bare repository, overseer/<branch> for a working copy", () => {
    expect(landingBranch({ repoKind: "remote", branch: "main" })).toBe("main");
    expect(landingBranch({ repoKind: "bare", branch: "release/2" })).toBe("release/2");
    expect(landingBranch({ repoKind: "working_copy", branch: "main" })).toBe("overseer/main");
  });

  it("hints how to bring an integration branch into one's own branch, and only then", () => {
    expect(landingHint({ repoKind: "bare", branch: "main" })).toBeNull();
    expect(landingHint({ repoKind: "working_copy", branch: "dev" })).toBe(
      "approved work lands on overseer/dev; bring it into your branch with `git merge overseer/dev`",
    );
  });
});
