import {
  createProject,
  createScratchDatabase,
  json,
  requireProject,
  type ScratchDatabase,
} from "@overseer/db";
import { ConfigError } from "@overseer/input-errors";
import { taskCard } from "@overseer/test-support";
import { importTasks, startProject, TransitionApplier, updateProjectConfig } from "@overseer/transitions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ProjectPolicies, projectPolicyOf } from "../src/project-policy.ts";

let scratch: ScratchDatabase;

beforeAll(async () => {
  scratch = await createScratchDatabase();
});
afterAll(async () => {
  await scratch?.drop();
});

describe("projectPolicyOf", () => {
  it("reads attempts and backoff from the stored runner config", async () => {
    await createProject(scratch.db, {
      id: "retry-ok",
      repo: "/tmp/none",
      runnerConfig: { attempts: 5, retry_backoff_seconds: 2 },
    });
    expect(projectPolicyOf(await requireProject(scratch.db, "retry-ok")).retry).toEqual({
      maxAttempts: 5,
      backoffMs: 2000,
    });
  });

  it("refuses an invalid stored config with the fields and the command that replaces it, never a default", async () => {
    await createProject(scratch.db, { id: "retry-bad", repo: "/tmp/none", runnerConfig: {} });
    // A row written before a schema change, or edited by hand: the repository stores what it is given.
    await scratch.db
      .updateTable("projects")
      .set({ runner_config: json({ attempts: "many" }) })
      .where("id", "=", "retry-bad")
      .execute();
    const project = await requireProject(scratch.db, "retry-bad");
    let thrown: unknown;
    try {
      projectPolicyOf(project);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ConfigError);
    const message = (thrown as ConfigError).message;
    expect(message).toContain("runner config of project retry-bad");
    expect(message).toContain("attempts");
    expect(message).toContain("overseer init --project retry-bad --update --config runner.json");
  });

  it("reads plan approval, landing and budgets from the row and its stored config", async () => {
    await createProject(scratch.db, {
      id: "policy-all",
      repo: "/tmp/none",
      branch: "trunk",
      repoKind: "working_copy",
      budgetUsd: 12.5,
      runnerConfig: { plan_approval: "operator", landing: { strategy: "merge" }, budget_tokens: 90000 },
    });
    const policy = projectPolicyOf(await requireProject(scratch.db, "policy-all"));
    expect(policy.planApproval).toBe("operator");
    // A working copy's approved work lands beside the user's branch, never on it.
    expect(policy.landing).toMatchObject({ branch: "overseer/trunk", strategy: "merge", mode: "push" });
    expect(policy.forge).toBeNull();
    expect(policy.budgets).toEqual({ usd: 12.5, tokens: 90000 });
    expect(policy.runnerConfig.plan_approval).toBe("operator");
  });

  it("reads pull_request mode, its settings and the forge (host-side) from the stored config", async () => {
    await createProject(scratch.db, {
      id: "policy-pr",
      repo: "/tmp/none",
      runnerConfig: {
        landing: {
          mode: "pull_request",
          pull_request: { merge: "auto", required_approvals: 2, on_closed: "todo" },
        },
        forge: { kind: "gitea", url: "https://code.example", repository: "team/app", token: "gitea-token-1" },
      },
    });
    const policy = projectPolicyOf(await requireProject(scratch.db, "policy-pr"));
    expect(policy.landing).toMatchObject({
      branch: "main",
      mode: "pull_request",
      pullRequest: {
        merge: "auto",
        requiredApprovals: 2,
        onClosed: "todo",
        mergeMethod: "squash",
        pollSeconds: 120,
      },
    });
    expect(policy.forge).toEqual({
      kind: "gitea",
      url: "https://code.example",
      repository: "team/app",
      token: "gitea-token-1",
      auth: { kind: "token", token: "gitea-token-1" },
    });
  });
});

describe("ProjectPolicies", () => {
  it("parses a project's policy once per project version, and again after its settings change", async () => {
    await createProject(scratch.db, {
      id: "policy-cache",
      repo: "/tmp/none",
      runnerConfig: { attempts: 2, retry_backoff_seconds: 1 },
    });
    const policies = new ProjectPolicies();
    const first = policies.of(await requireProject(scratch.db, "policy-cache"));
    // Every result and every job of this version reads the same parsed policy.
    for (let i = 0; i < 3; i++) {
      expect(policies.of(await requireProject(scratch.db, "policy-cache"))).toBe(first);
    }
    expect(policies.parseCount).toBe(1);

    const applier = new TransitionApplier({ db: scratch.db });
    await applier.apply("policy-cache", {
      kind: "update-project-config",
      by: "test",
      patch: { runnerConfig: { attempts: 4, retry_backoff_seconds: 3 } },
    });
    const changed = policies.of(await requireProject(scratch.db, "policy-cache"));
    expect(changed.retry).toEqual({ maxAttempts: 4, backoffMs: 3000 });
    expect(policies.parseCount).toBe(2);

    policies.forget("policy-cache");
    expect(policies.of(await requireProject(scratch.db, "policy-cache"))).toEqual(changed);
    expect(policies.parseCount).toBe(3);
  });

  it("keeps the parsed policy across version bumps that leave its inputs alone (a start, each claim), not across a budget change", async () => {
    await createProject(scratch.db, {
      id: "policy-bumps",
      repo: "/tmp/none",
      runnerConfig: { argv: ["true"], attempts: 2, budget_tokens: 5000 },
    });
    const policies = new ProjectPolicies();
    const first = policies.of(await requireProject(scratch.db, "policy-bumps"));
    const applier = new TransitionApplier({ db: scratch.db });
    await importTasks(applier, "policy-bumps", [taskCard("S00-001"), taskCard("S00-002")]);
    await startProject(applier, "policy-bumps", { by: "test" });
    const before = await requireProject(scratch.db, "policy-bumps");
    await applier.apply("policy-bumps", { kind: "claim" });
    const claimed = await requireProject(scratch.db, "policy-bumps");
    // The claim counted its sessions: another version, the same inputs, the same policy.
    expect(claimed.version).toBeGreaterThan(before.version);
    expect(policies.of(before)).toBe(first);
    expect(policies.of(claimed)).toBe(first);
    expect(policies.parseCount).toBe(1);

    const budgeted = await updateProjectConfig(applier, "policy-bumps", { budgetUsd: 3 });
    expect(policies.of(budgeted).budgets).toEqual({ usd: 3, tokens: 5000 });
    expect(policies.parseCount).toBe(2);
    const reconfigured = await updateProjectConfig(applier, "policy-bumps", {
      runnerConfig: { argv: ["true"], attempts: 2, budget_tokens: 7000 },
    });
    expect(policies.of(reconfigured).budgets).toEqual({ usd: 3, tokens: 7000 });
    expect(policies.parseCount).toBe(3);
  });

  it("keeps an invalid stored config's error for its version instead of parsing it again", async () => {
    await createProject(scratch.db, { id: "policy-bad", repo: "/tmp/none", runnerConfig: {} });
    await scratch.db
      .updateTable("projects")
      .set({ runner_config: json({ attempts: "many" }) })
      .where("id", "=", "policy-bad")
      .execute();
    const policies = new ProjectPolicies();
    const project = await requireProject(scratch.db, "policy-bad");
    expect(() => policies.of(project)).toThrow(ConfigError);
    expect(() => policies.of(project)).toThrow(/overseer init --project policy-bad --update/);
    expect(policies.parseCount).toBe(1);
  });
});
