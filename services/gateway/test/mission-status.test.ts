/**
 * The mission status on every gateway surface (Argus status and snapshot, native project
 * view), and the operator's plan approval through the Argus resolve route, against real
 * Postgres: one summary (summarizeMission over loadMissionSummaryInput) everywhere.
 */
import { applyTransition, createProject, getTask } from "@overseer/db";
import type { Command } from "@overseer/domain";
import { describe, expect, it } from "vitest";
import { card, statusWhen, useGatewayFixture, useListeningGateway } from "./support/gateway-fixture.ts";
import { openSse } from "./support/sse-client.ts";

const fx = useGatewayFixture();
const gw = useListeningGateway(fx);

/** Claims the project's next run and applies `outcome(runId)` to it. */
async function runOnce(projectId: string, outcome: (runId: string) => Command): Promise<void> {
  const claimed = await applyTransition(fx.scratch.db, projectId, { kind: "claim" });
  const run = claimed.changes.runs.find((r) => claimed.changes.createdRunIds.has(r.id));
  if (!run) throw new Error(`nothing to claim in ${projectId}`);
  await applyTransition(fx.scratch.db, projectId, outcome(run.id));
}

describe("mission status", () => {
  it("shows objective, round, tasks, spend, evidence and a bound pause on the status, snapshot and project view", async () => {
    await createProject(fx.scratch.db, { id: "mi", repo: "/tmp/none", runnerConfig: {} });
    const started = await fx.request("POST", "/api/v1/projects/mi/mission", {
      token: fx.tokens.operate,
      body: { objective: "Ship the parser", stage: "S01", budget_usd: 5, max_rounds: 2 },
    });
    expect(started.status).toBe(200);
    expect(started.body.project.mission).toMatchObject({
      objective: "Ship the parser",
      round: 1,
      max_rounds: 2,
      state: "running",
      tasks: { todo: 1, total: 1 },
      spend: { cost_usd: 0, budget_usd: 5 },
      last_evidence: null,
      bound: null,
    });

    // The planner proposes a plan (with usage); a reviewer approves it with plan_approval operator.
    await runOnce("mi", (runId) => ({
      kind: "propose",
      runId,
      proposal: { kind: "plan", tasks: [card("S01-1"), card("S01-2", ["S01-1"])] },
      summary: "two steps",
      commitSha: null,
      branchHead: null,
      maxAttempts: 3,
      usage: { tokensIn: 1000, tokensOut: 100, costUsd: 0.25 },
    }));
    await runOnce("mi", (runId) => ({
      kind: "approve",
      runId,
      landedSha: null,
      landedBranch: null,
      planApproval: "operator",
    }));
    const waiting = await statusWhen(fx, "mi", (s) => s.pending_count === 1);
    const [cardJson] = waiting.body.pending_questions;
    expect(cardJson).toMatchObject({ id: "decision-MISSION-R1", item_id: "MISSION-R1" });
    expect(cardJson.options.map((o: { id: string }) => o.id)).toEqual([
      "approve_plan",
      "reject_plan",
      "stop",
    ]);
    expect(cardJson.evidence.map((e: { label: string }) => e.label)).toEqual([
      "S01-1: Task S01-1",
      "S01-2: Task S01-2",
    ]);
    expect(waiting.body.mission).toMatchObject({
      state: "running",
      spend: { cost_usd: 0.25, tokens_in: 1000, tokens_cached: 0, tokens_out: 100, budget_usd: 5 },
    });
    expect(waiting.body.text).toContain("mission: Ship the parser");
    expect(waiting.body.text).toContain("round 1 of 2, stage S01; running");

    // The operator approves the plan on the card: the graph is imported as one whole.
    const resolved = await fx.request("POST", "/api/projects/mi/decisions/decision-MISSION-R1/resolve", {
      token: fx.tokens.operate,
      body: { option_id: "approve_plan" },
    });
    expect(resolved.status).toBe(200);
    expect((await getTask(fx.scratch.db, "mi", "MISSION-R1"))?.status).toBe("done");
    expect((await getTask(fx.scratch.db, "mi", "S01-2"))?.status).toBe("todo");

    // S01-1 is submitted with a summary and approved: that summary is the last verified evidence.
    await runOnce("mi", (runId) => ({
      kind: "submit",
      runId,
      message: "parser",
      summary: "parser handles nested lists; 12 tests",
      commitSha: "a".repeat(40),
      branchHead: "a".repeat(40),
    }));
    await runOnce("mi", (runId) => ({ kind: "approve", runId, landedSha: null, landedBranch: null }));
    const progressed = await statusWhen(fx, "mi", (s) => s.mission?.tasks?.done === 2);
    expect(progressed.body.mission.last_evidence).toMatchObject({
      kind: "stage_summary",
      text: "parser handles nested lists; 12 tests",
      task_id: "S01-1",
    });
    expect(progressed.body.text).toContain("last approved (S01-1): parser handles nested lists; 12 tests");

    // The coordinator's budget pause is a bound: shown until the mission is started again.
    await applyTransition(fx.scratch.db, "mi", {
      kind: "set-project-status",
      status: "paused",
      by: "coordinator",
      reason: "budget_usd 5 reached (spent 5.1000)",
      bound: "budget",
    });
    const paused = await statusWhen(fx, "mi", (s) => s.mission?.state === "paused_by_bound");
    expect(paused.body.mission.bound).toMatchObject({ bound: "budget" });
    expect(paused.body.mission.bound.reason).toContain("budget_usd 5 reached");
    expect(paused.body.text).toContain("paused by the budget bound: budget_usd 5 reached");
    expect(paused.body.mission_notice).toMatch(/^mission paused at the budget bound: budget_usd 5 reached/);
    expect(paused.body.text).toContain(paused.body.mission_notice);
    const snapshot = await fx.request("GET", "/api/projects/mi/snapshot?compact=true", {
      token: fx.tokens.read,
    });
    expect(snapshot.body.mission).toEqual(paused.body.mission);
    expect(snapshot.body.mission_notice).toBe(paused.body.mission_notice);
    const full = await fx.request("GET", "/api/projects/mi/snapshot", { token: fx.tokens.read });
    expect(full.body.mission.state).toBe("paused_by_bound");
    const view = await fx.request("GET", "/api/v1/projects/mi", { token: fx.tokens.read });
    expect(view.body.mission).toMatchObject({ state: "paused_by_bound", bound: { bound: "budget" } });
    // The project list keeps the mission without its status.
    const list = await fx.request("GET", "/api/v1/projects", { token: fx.tokens.read });
    const listed = list.body.projects.find((p: { id: string }) => p.id === "mi");
    expect(listed.mission).toMatchObject({ objective: "Ship the parser", round: 1 });
    expect(listed.mission.state).toBeUndefined();

    // Resumed by the operator: no longer paused by the bound.
    await fx.request("POST", "/api/v1/projects/mi/resume", { token: fx.tokens.operate, body: {} });
    const resumed = await statusWhen(fx, "mi", (s) => s.status === "active");
    expect(resumed.body.mission).toMatchObject({ state: "running", bound: null });
    expect(resumed.body.mission_notice).toBeNull();
  });

  it("a project without a mission has mission null", async () => {
    await createProject(fx.scratch.db, { id: "plain", repo: "/tmp/none", runnerConfig: {} });
    const status = await fx.request("GET", "/api/projects/plain/status", { token: fx.tokens.read });
    expect(status.body.mission).toBeNull();
    expect(status.body.text).not.toContain("mission:");
  });

  it("a bound pause and the completion are announced on the project's live event stream", async () => {
    await createProject(fx.scratch.db, { id: "ms", repo: "/tmp/none", runnerConfig: {} });
    await applyTransition(fx.scratch.db, "ms", {
      kind: "start-mission",
      objective: "Announce the end",
      stage: null,
      sessionsLimit: null,
      maxRounds: 2,
      by: "operator",
    });
    const stream = await openSse(`${gw.url}/api/projects/ms/events/stream`, {
      Authorization: `Bearer ${fx.tokens.read}`,
    });
    await stream.waitForComment("connected");
    const typeOf = (e: { data: string }) => JSON.parse(e.data).type as string;

    await applyTransition(fx.scratch.db, "ms", {
      kind: "set-project-status",
      status: "paused",
      by: "coordinator",
      reason: "budget_usd 1 reached (spent 1.0000)",
      bound: "budget",
    });
    const bound = (await stream.waitFor((e) => typeOf(e) === "mission.bound_reached")).find(
      (e) => typeOf(e) === "mission.bound_reached",
    );
    expect(JSON.parse(bound?.data ?? "{}").data).toMatchObject({ bound: "budget" });
    expect(JSON.parse(bound?.data ?? "{}").data.reason).toContain("budget_usd 1 reached");

    await applyTransition(fx.scratch.db, "ms", {
      kind: "set-project-status",
      status: "active",
      by: "operator",
    });
    await runOnce("ms", (runId) => ({
      kind: "propose",
      runId,
      proposal: { kind: "complete", evidence: "announced: 3 checks pass" },
      commitSha: null,
      branchHead: null,
      maxAttempts: 3,
    }));
    await runOnce("ms", (runId) => ({ kind: "approve", runId, landedSha: null, landedBranch: null }));
    const completed = (await stream.waitFor((e) => typeOf(e) === "mission.completed")).find(
      (e) => typeOf(e) === "mission.completed",
    );
    expect(JSON.parse(completed?.data ?? "{}").data).toMatchObject({ evidence: "announced: 3 checks pass" });
    stream.close();
    await stream.ended;

    const status = await statusWhen(fx, "ms", (s) => s.status === "completed");
    expect(status.body.mission_notice).toBe("mission completed: announced: 3 checks pass");
    expect(status.body.mission).toMatchObject({
      state: "completed",
      last_evidence: { kind: "completion", text: "announced: 3 checks pass" },
    });
  });
});
