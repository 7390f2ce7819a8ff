import path from "node:path";
import { applyTransition, createProject } from "@overseer/db";
import { initBareRepo } from "@overseer/git";
import { importTasks, startProject, TransitionApplier } from "@overseer/transitions";
import { describe, expect, it } from "vitest";
import { card, raiseQuestion, seedProject, useGatewayFixture } from "./support/gateway-fixture.ts";

const fx = useGatewayFixture();

describe("web app read models and controls", () => {
  it("tells the caller its token's name and scope", async () => {
    const read = await fx.request("GET", "/api/v1/session", { token: fx.tokens.read });
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ scope: "read", can_operate: false, can_admin: false });
    const admin = await fx.request("GET", "/api/v1/session", { token: fx.tokens.admin });
    expect(admin.body).toMatchObject({ scope: "admin", can_operate: true, can_admin: true });
    expect((await fx.request("GET", "/api/v1/session", { token: null })).status).toBe(401);
  });

  it("lists the fleet with counts, running runs, pending cards, spend and throughput; all pending cards", async () => {
    await seedProject(fx, "fa", [card("S00-001"), card("S00-002", ["S00-001"])]);
    await seedProject(fx, "fb", [card("S00-001")]);
    const q = await raiseQuestion(fx, "fa");
    await applyTransition(fx.scratch.db, "fb", { kind: "claim" });
    // A run of fb spent tokens no price covers (a model without prices): unpriced, never $0.00.
    await seedProject(fx, "fc", [card("S00-001")]);
    const fcRun = (await applyTransition(fx.scratch.db, "fc", { kind: "claim" })).changes.runs[0]?.id ?? "";
    await applyTransition(fx.scratch.db, "fc", {
      kind: "submit",
      runId: fcRun,
      message: "feat: done",
      commitSha: "abc",
      branchHead: "abc",
      usage: { tokensIn: 1000, tokensOut: 240, source: "codex --json turn.completed" },
    });
    const res = await fx.request("GET", "/api/v1/fleet", { token: fx.tokens.read });
    expect(res.status).toBe(200);
    expect(res.body.window_seconds / res.body.bucket_seconds).toBe(12);
    const fa = res.body.projects.find((p: { id: string }) => p.id === "fa");
    const fb = res.body.projects.find((p: { id: string }) => p.id === "fb");
    expect(fa).toMatchObject({ status: "active", pending_decisions: 1, running: 0 });
    expect(fa.counts).toMatchObject({ blocked: 1, awaiting_input: 1, todo: 1, total: 3 });
    expect(fb).toMatchObject({ running: 1, pending_decisions: 0 });
    expect(fb.throughput).toHaveLength(12);
    expect(fa).toMatchObject({ cost_usd: 0, tokens_unpriced: 0, cost: "$0.0000" });
    const fc = res.body.projects.find((p: { id: string }) => p.id === "fc");
    expect(fc).toMatchObject({ cost_usd: 0, tokens_unpriced: 1240, cost: "unpriced (1,240 tokens)" });
    // `overseer status` (every project) prints each project's status text.
    const status = await fx.request("GET", "/api/projects/fc/status", { token: fx.tokens.read });
    expect(status.body.text).toContain("1,240 tokens");
    expect(status.body.text).toContain("unpriced (1,240 tokens) no budget");
    expect(status.body.text).not.toContain("$0.00");
    const decisions = await fx.request("GET", "/api/v1/decisions", { token: fx.tokens.read });
    expect(decisions.status).toBe(200);
    expect(decisions.body.decisions).toEqual([
      expect.objectContaining({ project_id: "fa", id: q.decisionId, status: "pending" }),
    ]);
  });

  it("answers run statistics from stored runs, and refuses a bad range", async () => {
    await seedProject(fx, "fs", [card("S00-001")]);
    const claimed = await applyTransition(fx.scratch.db, "fs", { kind: "claim" });
    const runId = claimed.changes.runs[0]?.id ?? "";
    await applyTransition(
      fx.scratch.db,
      "fs",
      { kind: "submit", runId, message: "feat", commitSha: null, branchHead: null },
      { runReport: { exitCode: 0, durationMs: 2000 } },
    );
    const res = await fx.request("GET", "/api/v1/stats/runs?minutes=60&bucket_seconds=60&project=fs", {
      token: fx.tokens.read,
    });
    expect(res.status).toBe(200);
    expect(res.body.buckets.reduce((a: number, b: { runs: number }) => a + b.runs, 0)).toBe(1);
    expect(res.body.buckets[0].p50_ms).toBe(2000);
    const bad = await fx.request("GET", "/api/v1/stats/runs?minutes=0", { token: fx.tokens.read });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain("minutes");
    const incidents = await fx.request("GET", "/api/v1/incidents", { token: fx.tokens.read });
    expect(incidents.status).toBe(200);
    expect(Array.isArray(incidents.body.incidents)).toBe(true);
  });

  it("starts a project with a stage and a session budget (operate scope), refusing unknown keys", async () => {
    await seedProject(fx, "fstart", [card("S00-001")]);
    await fx.request("POST", "/api/v1/projects/fstart/pause", { token: fx.tokens.operate, body: {} });
    const denied = await fx.request("POST", "/api/v1/projects/fstart/start", {
      token: fx.tokens.read,
      body: {},
    });
    expect(denied.status).toBe(403);
    const unknown = await fx.request("POST", "/api/v1/projects/fstart/start", {
      token: fx.tokens.operate,
      body: { budget: 3 },
    });
    expect(unknown.status).toBe(400);
    const res = await fx.request("POST", "/api/v1/projects/fstart/start", {
      token: fx.tokens.operate,
      body: { stage: "S00", max_sessions: 7 },
    });
    expect(res.status).toBe(200);
    expect(res.body.project).toMatchObject({
      status: "active",
      stage: "S00",
      sessions_limit: 7,
      sessions_used: 0,
    });
    const missing = await fx.request("POST", "/api/v1/projects/nope/start", {
      token: fx.tokens.operate,
      body: {},
    });
    expect(missing.status).toBe(404);
  });

  it("refuses a stage with escape sequences or spaces on /start and /mission with the one stage schema", async () => {
    await seedProject(fx, "fstage", [card("S00-001")]);
    for (const stage of ["\u001b[2J\u001b]0;owned\u0007", "S01 extra", "S01\n", "x".repeat(40)]) {
      for (const route of ["start", "mission"]) {
        const res = await fx.request("POST", `/api/v1/projects/fstage/${route}`, {
          token: fx.tokens.operate,
          body: route === "start" ? { stage } : { objective: "o", stage },
        });
        expect(res.status, `${route} ${JSON.stringify(stage)}`).toBe(400);
        expect(res.body.error.message).toContain("a stage name such as S01");
      }
    }
    const project = await fx.request("GET", "/api/v1/projects/fstage", { token: fx.tokens.read });
    expect(project.body.stage).toBeNull();
  });

  it("answers the diff of a run's commit from the gateway's mirror, and says why when there is none", async () => {
    const repo = path.join(fx.tempDir, "repo.git");
    const sha = await initBareRepo(repo, {
      initialFiles: { "src/app.ts": "export const answer = 42;\n" },
      branch: "main",
    });
    await createProject(fx.scratch.db, { id: "fdiff", repo, runnerConfig: {}, objective: "diffs" });
    const applier = new TransitionApplier({ db: fx.scratch.db });
    await importTasks(applier, "fdiff", [card("S00-001"), card("S00-002")]);
    await startProject(applier, "fdiff");
    const first = await applyTransition(fx.scratch.db, "fdiff", { kind: "claim" });
    const withCommit = first.changes.runs[0]?.id ?? "";
    await applyTransition(
      fx.scratch.db,
      "fdiff",
      { kind: "submit", runId: withCommit, message: "feat", commitSha: sha, branchHead: sha },
      { runReport: { exitCode: 0, commitSha: sha } },
    );
    const res = await fx.request("GET", `/api/v1/runs/${withCommit}/diff`, { token: fx.tokens.read });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ available: true, commit_sha: sha, truncated: false });
    expect(res.body.files).toEqual([{ path: "src/app.ts", additions: 1, deletions: 0, binary: false }]);
    expect(res.body.patch).toContain("+export const answer = 42;");

    const second = await applyTransition(fx.scratch.db, "fdiff", { kind: "claim" });
    const noCommit = second.changes.runs[0]?.id ?? "";
    const none = await fx.request("GET", `/api/v1/runs/${noCommit}/diff`, { token: fx.tokens.read });
    expect(none.body).toMatchObject({ available: false, reason: "this run made no commit" });
    expect((await fx.request("GET", "/api/v1/runs/missing-run/diff", { token: fx.tokens.read })).status).toBe(
      404,
    );
  });
});
