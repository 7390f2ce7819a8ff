// Run routes (list, one run, prompt, log, numbering, usage) and a project's events, decisions and incidents.
import { applyTransition } from "@overseer/db";
import { describe, expect, it } from "vitest";
import { card, raiseQuestion, seedProject, useGatewayFixture } from "./support/gateway-fixture.ts";

const fx = useGatewayFixture();

describe("runs, events, decisions, incidents", () => {
  it("lists runs and answers one run, its prompt and its stored log with secrets redacted", async () => {
    await seedProject(fx, "rn", [card("S00-001")], { secrets: { DB_PASSWORD: "hunter2-very-secret" } });
    const claimed = await applyTransition(fx.scratch.db, "rn", { kind: "claim" });
    const runId = claimed.changes.runs[0]?.id ?? "";
    await applyTransition(
      fx.scratch.db,
      "rn",
      { kind: "submit", runId, message: "feat: done", commitSha: "abc", branchHead: "abc" },
      {
        runReport: {
          prompt: "Connect with hunter2-very-secret please",
          promptChars: 39,
          output: "password=hunter2-very-secret token ovr_abcdefghijklmnopqrstuvwxyz012345\nok\n",
          exitCode: 0,
          durationMs: 1234,
          imageDigest: `sha256:${"a".repeat(64)}`,
          sandboxDriver: "gvisor",
        },
      },
    );
    const list = await fx.request("GET", "/api/v1/projects/rn/runs?task=S00-001", { token: fx.tokens.read });
    expect(list.status).toBe(200);
    expect(list.body.runs).toEqual([
      expect.objectContaining({
        id: runId,
        status: "finished",
        transition: "submit",
        duration_ms: 1234,
        image_digest: `sha256:${"a".repeat(64)}`,
        sandbox_driver: "gvisor",
      }),
    ]);
    expect(list.body.runs[0].output).toBeUndefined();
    const run = await fx.request("GET", `/api/v1/runs/${runId}`);
    expect(run.body).toMatchObject({ image_digest: `sha256:${"a".repeat(64)}`, sandbox_driver: "gvisor" });
    expect(run.body.output).toContain("password=[REDACTED]");
    expect(run.text).not.toContain("hunter2-very-secret");
    expect(run.text).not.toContain("ovr_abcdefghijklmnopqrstuvwxyz012345");
    const prompt = await fx.request("GET", `/api/v1/runs/${runId}/prompt`);
    expect(prompt.body).toEqual({
      run_id: runId,
      prompt: "Connect with [REDACTED] please",
      prompt_chars: 39,
    });
    const log = await fx.request("GET", `/api/v1/runs/${runId}/log`);
    expect(log.body).toMatchObject({ run_id: runId, status: "finished", truncated: false });
    expect(log.body.output).toContain("ok");
    expect(log.text).not.toContain("hunter2-very-secret");
    const missing = await fx.request("GET", "/api/v1/runs/00000000-0000-0000-0000-000000000000");
    expect(missing.status).toBe(404);
  });

  it("numbers each run among its task's runs of the same action (not the failure-retry attempt), in the list, the run and the status", async () => {
    await seedProject(fx, "numbered", [card("S00-001")]);
    const claim = async () =>
      (await applyTransition(fx.scratch.db, "numbered", { kind: "claim" })).changes.runs[0]?.id ?? "";
    const execute1 = await claim();
    await applyTransition(fx.scratch.db, "numbered", {
      kind: "submit",
      runId: execute1,
      message: "feat: first try",
      commitSha: "abc",
      branchHead: "abc",
    });
    const review1 = await claim();
    await applyTransition(fx.scratch.db, "numbered", {
      kind: "reject",
      runId: review1,
      feedback: "add a test",
    });
    // The second executor run after the reject is attempt 1 again (a new round), and its
    // failure's retry is attempt 2: "execute run #1" twice was the attempt, not the run.
    const execute2 = await claim();
    await applyTransition(fx.scratch.db, "numbered", {
      kind: "no-transition",
      runId: execute2,
      detail: "exit 1",
      crashed: false,
      maxAttempts: 3,
      backoffMs: 0,
    });
    const execute3 = await claim();

    const list = await fx.request("GET", "/api/v1/projects/numbered/runs?task=S00-001", {
      token: fx.tokens.read,
    });
    const shown = (list.body.runs as { id: string; action: string; number: number; attempt: number }[])
      .map((r) => ({ id: r.id, action: r.action, number: r.number, attempt: r.attempt }))
      .reverse();
    expect(shown).toEqual([
      { id: execute1, action: "execute", number: 1, attempt: 1 },
      { id: review1, action: "review", number: 1, attempt: 1 },
      { id: execute2, action: "execute", number: 2, attempt: 1 },
      { id: execute3, action: "execute", number: 3, attempt: 2 },
    ]);
    // One page of one run still counts the runs before it.
    const page = await fx.request("GET", "/api/v1/projects/numbered/runs?task=S00-001&limit=1", {
      token: fx.tokens.read,
    });
    expect(page.body.runs[0]).toMatchObject({ id: execute3, number: 3 });
    expect((await fx.request("GET", `/api/v1/runs/${execute2}`)).body).toMatchObject({
      number: 2,
      attempt: 1,
    });
    const status = await fx.request("GET", "/api/projects/numbered/status", { token: fx.tokens.read });
    expect(status.body.running).toEqual([
      expect.objectContaining({ run_id: execute3, number: 3, attempt: 2 }),
    ]);
    expect(status.body.text).toContain("running: execute #3 of S00-001");
  });

  it("answers usage per run (cached tokens, source), per task and per project, failed runs included", async () => {
    await seedProject(fx, "us", [card("S00-001")]);
    await fx.scratch.db.updateTable("projects").set({ budget_usd: 5 }).where("id", "=", "us").execute();
    const first = (await applyTransition(fx.scratch.db, "us", { kind: "claim" })).changes.runs[0]?.id ?? "";
    await applyTransition(fx.scratch.db, "us", {
      kind: "no-transition",
      runId: first,
      detail: "exit 1",
      crashed: false,
      maxAttempts: 3,
      backoffMs: 0,
      usage: {
        tokensIn: 3000,
        tokensOut: 100,
        tokensCached: 2000,
        costUsd: 0.5,
        source: "codex --json turn.completed",
      },
    });
    const second = (await applyTransition(fx.scratch.db, "us", { kind: "claim" })).changes.runs[0]?.id ?? "";
    await applyTransition(fx.scratch.db, "us", {
      kind: "submit",
      runId: second,
      message: "feat: done",
      commitSha: "abc",
      branchHead: "abc",
      usage: {
        tokensIn: 1000,
        tokensOut: 50,
        tokensCached: 0,
        costUsd: 0.25,
        source: "claude stream-json result",
      },
    });
    const runs = await fx.request("GET", "/api/v1/projects/us/runs?task=S00-001", { token: fx.tokens.read });
    expect(runs.body.runs).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          id: first,
          status: "failed",
          tokens_in: 3000,
          tokens_cached: 2000,
          usage_source: "codex --json turn.completed",
        }),
        expect.objectContaining({ id: second, tokens_in: 1000, usage_source: "claude stream-json result" }),
      ]),
    );
    const task = await fx.request("GET", "/api/v1/projects/us/tasks/S00-001", { token: fx.tokens.read });
    expect(task.body.usage).toEqual({
      runs: 2,
      tokens_in: 4000,
      tokens_out: 150,
      tokens_cached: 2000,
      cost_usd: 0.75,
      tokens_unpriced: 0,
      cost: "$0.7500",
    });
    const project = await fx.request("GET", "/api/v1/projects/us", { token: fx.tokens.read });
    expect(project.body).toMatchObject({
      tokens_in: 4000,
      tokens_out: 150,
      tokens_cached: 2000,
      cost_usd: 0.75,
    });
    const status = await fx.request("GET", "/api/projects/us/status", { token: fx.tokens.read });
    expect(status.body.usage).toEqual({
      tokens_in: 4000,
      tokens_out: 150,
      tokens_cached: 2000,
      cost_usd: 0.75,
      tokens_unpriced: 0,
      cost: "$0.7500",
      budget_usd: 5,
    });
    expect(status.body.text).toContain(
      "usage: 4,000 tokens in (2,000 cached), 150 out, $0.7500 of budget $5.00",
    );
  });

  it("pages events with the after cursor and lists decisions and incidents", async () => {
    await seedProject(fx, "ev", [card("S00-001")]);
    const q = await raiseQuestion(fx, "ev");
    const all = await fx.request("GET", "/api/v1/projects/ev/events?limit=1000");
    expect(all.body.events.length).toBeGreaterThan(3);
    const first = await fx.request("GET", "/api/v1/projects/ev/events?limit=2");
    expect(first.body.events).toHaveLength(2);
    const rest = await fx.request("GET", `/api/v1/projects/ev/events?after=${first.body.next_after}`);
    expect([...first.body.events, ...rest.body.events].map((e: { id: string }) => e.id)).toEqual(
      all.body.events.map((e: { id: string }) => e.id),
    );
    const typed = await fx.request(
      "GET",
      "/api/v1/projects/ev/events?type=decision.created,resolver.created",
    );
    expect(typed.body.events.map((e: { type: string }) => e.type).sort()).toEqual([
      "decision.created",
      "resolver.created",
    ]);

    const decisions = await fx.request("GET", "/api/v1/projects/ev/decisions?status=pending");
    expect(decisions.body.decisions.map((d: { id: string }) => d.id)).toEqual([q.decisionId]);
    const one = await fx.request("GET", `/api/v1/projects/ev/decisions/${q.decisionId}`);
    expect(one.body).toMatchObject({ id: q.decisionId, status: "pending" });
    const noCard = await fx.request("GET", "/api/v1/projects/ev/decisions/decision-S00-404");
    expect(noCard.status).toBe(404);

    const claimed = await applyTransition(fx.scratch.db, "ev", { kind: "claim" });
    expect(claimed.changes.runs).toHaveLength(0);
    await applyTransition(fx.scratch.db, "ev", {
      kind: "answer",
      taskId: q.resolverId,
      text: "go",
      by: "test",
    });
    const next = await applyTransition(fx.scratch.db, "ev", { kind: "claim" });
    const runId = next.changes.runs[0]?.id ?? "";
    await applyTransition(fx.scratch.db, "ev", { kind: "timeout", runId, stalled: false, seconds: 30 });
    const incidents = await fx.request("GET", "/api/v1/projects/ev/incidents", { token: fx.tokens.read });
    expect(incidents.body.incidents).toEqual([
      expect.objectContaining({ kind: "timeout", run_id: runId, task_id: q.resolverId }),
    ]);
  });
});
