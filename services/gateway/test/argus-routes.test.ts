import { getTask, listEvents } from "@overseer/db";
import { subscribeWhenReady } from "@overseer/queue";
import { describe, expect, it } from "vitest";
import {
  card,
  raiseQuestion,
  seedProject,
  statusWhen,
  useGatewayFixture,
} from "./support/gateway-fixture.ts";
import { stateSignature } from "./support/state-signature.ts";

const fx = useGatewayFixture();

describe("GET /api/projects/{id}/status", () => {
  it("reports objective, counts, running runs and the pending cards with the stop signal", async () => {
    await seedProject(fx, "st", [card("S00-001"), card("S00-002")]);
    const quiet = await fx.request("GET", "/api/projects/st/status", { token: fx.tokens.read });
    expect(quiet.status).toBe(200);
    expect(quiet.body).toMatchObject({
      project_id: "st",
      objective: "Objective of st",
      status: "active",
      pending_questions: [],
      pending_count: 0,
      waiting_for_you: null,
    });
    expect(quiet.body.counts).toMatchObject({ todo: 2, done: 0, total: 2 });
    expect(quiet.body.text).toContain("no unanswered questions");

    // Changes made by another process (here: directly in Postgres) show once their NOTIFY arrives.
    const q = await raiseQuestion(fx, "st");
    const status = await statusWhen(fx, "st", (s) => s.pending_count === 1);
    expect(status.body.waiting_for_you).toBe("waiting for you: 1 unanswered question(s)");
    expect(status.body.text).toContain("waiting for you: 1 unanswered question(s)");
    expect(status.body.counts).toMatchObject({ blocked: 1, awaiting_input: 1, todo: 1, total: 3 });
    const [pending] = status.body.pending_questions;
    expect(pending).toMatchObject({
      id: q.decisionId,
      item_id: q.resolverId,
      revision: 1,
      status: "pending",
      question: "Which database should we use?",
      options_source: "agent",
      selected_option: null,
      note: null,
      evidence: [],
    });
    expect(pending.options.map((o: { id: string }) => o.id)).toEqual(["use_postgres", "use_sqlite"]);
    expect(pending.options[1]).toEqual({
      id: "use_sqlite",
      label: "Use SQLite",
      description: "",
      requires_note: true,
    });

    // A claimed run shows as running.
    const { applyTransition } = await import("@overseer/db");
    const claimed = await applyTransition(fx.scratch.db, "st", { kind: "claim" });
    const after = await statusWhen(fx, "st", (s) => s.running.length === 1);
    expect(after.body.running).toEqual([
      expect.objectContaining({
        run_id: claimed.changes.runs[0]?.id,
        task_id: "S00-002",
        status: "queued",
        action: "execute",
      }),
    ]);
  });

  it("answers 404 for an unknown project", async () => {
    const res = await fx.request("GET", "/api/projects/nope/status");
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe("not_found");
  });
});

describe("GET /api/projects/{id}/snapshot", () => {
  it("compact: counts and pending_questions only; full: backlog rows with pending_question and operator_decision", async () => {
    await seedProject(fx, "snap", [card("S00-001"), card("S00-002")]);
    const q = await raiseQuestion(fx, "snap");
    const compact = await fx.request("GET", "/api/projects/snap/snapshot?compact=true", {
      token: fx.tokens.read,
    });
    expect(compact.status).toBe(200);
    expect(compact.body.compact).toBe(true);
    expect(compact.body.pending_questions).toHaveLength(1);
    expect(compact.body.backlog).toBeUndefined();
    expect(compact.body.waiting_for_you).toBe("waiting for you: 1 unanswered question(s)");

    const full = await fx.request("GET", "/api/projects/snap/snapshot", { token: fx.tokens.read });
    expect(full.body.compact).toBe(false);
    const rows = new Map<
      string,
      { pending_question: string | null; operator_decision: { status: string } | null }
    >(full.body.backlog.map((r: { id: string }) => [r.id, r]));
    expect([...rows.keys()].sort()).toEqual(["S00-001", "S00-001.R1", "S00-002"]);
    expect(rows.get(q.resolverId)).toMatchObject({
      pending_question: "Which database should we use?",
      operator_decision: { id: q.decisionId, status: "pending" },
    });
    expect(rows.get("S00-002")).toMatchObject({ pending_question: null, operator_decision: null });

    await fx.request("POST", `/api/projects/snap/decisions/${q.decisionId}/resolve`, {
      body: { option_id: "use_postgres" },
    });
    const resolved = await fx.request("GET", "/api/projects/snap/snapshot?compact=false", {
      token: fx.tokens.read,
    });
    const row = resolved.body.backlog.find((r: { id: string }) => r.id === q.resolverId);
    expect(row.pending_question).toBeNull();
    expect(row.operator_decision).toMatchObject({ status: "resolved", selected_option: "use_postgres" });
    expect(resolved.body.pending_questions).toEqual([]);
  });
});

describe("POST /api/projects/{id}/decisions/{decision_id}/resolve", () => {
  it("resolves once; the same option again is already_applied with the same resolution_id; another option is 409 stale", async () => {
    await seedProject(fx, "res", [card("S00-001")]);
    const q = await raiseQuestion(fx, "res");
    const path = `/api/projects/res/decisions/${q.decisionId}/resolve`;
    const subscriber = fx.redis.duplicate();
    const published: string[] = [];
    await subscribeWhenReady(subscriber, fx.deps.live.eventsChannel("res"));
    subscriber.on("message", (_channel, message) => published.push(message));

    const first = await fx.request("POST", path, {
      token: fx.tokens.operate,
      body: { option_id: "use_postgres", note: "Version 16." },
    });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      resolved: true,
      application_status: "applied",
      decision: {
        id: q.decisionId,
        status: "resolved",
        selected_option: "use_postgres",
        note: "Version 16.",
      },
    });
    expect(first.body.resolution_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(first.body.decision.resolution_id).toBe(first.body.resolution_id);
    expect(first.body.decision.resolved_by).toBe("api:operator");

    // The resolver is runnable again with the answer for its next prompt.
    const resolver = await getTask(fx.scratch.db, "res", q.resolverId);
    expect(resolver?.status).toBe("todo");
    expect(resolver?.answers.at(-1)?.answer).toBe("Use Postgres: Version 16.");

    // The transition's events were published live.
    const stored = await listEvents(fx.scratch.db, { projectId: "res", types: ["decision.resolved"] });
    await expect.poll(() => published.length, { timeout: 5000 }).toBeGreaterThan(0);
    expect(published.flatMap((m) => (JSON.parse(m) as { id: string }[]).map((e) => e.id))).toContain(
      String(stored[0]?.id),
    );
    subscriber.disconnect();

    const again = await fx.request("POST", path, {
      token: fx.tokens.operate,
      body: { option_id: "use_postgres" },
    });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({
      resolved: true,
      application_status: "already_applied",
      resolution_id: first.body.resolution_id,
    });

    const before = await stateSignature(fx);
    const stale = await fx.request("POST", path, {
      token: fx.tokens.operate,
      body: { option_id: "use_sqlite", note: "no" },
    });
    expect(stale.status).toBe(409);
    expect(stale.body).toMatchObject({
      error: { code: "stale" },
      resolved: false,
      application_status: "stale",
      resolution: {
        resolution_id: first.body.resolution_id,
        selected_option: "use_postgres",
        note: "Version 16.",
      },
    });
    expect(await stateSignature(fx)).toEqual(before);
  });

  it("refuses an option the card does not offer (422) and a missing required note (422), changing nothing", async () => {
    await seedProject(fx, "opt", [card("S00-001")]);
    const q = await raiseQuestion(fx, "opt");
    const path = `/api/projects/opt/decisions/${q.decisionId}/resolve`;
    const before = await stateSignature(fx);
    const unknown = await fx.request("POST", path, { body: { option_id: "use_mongo" } });
    expect(unknown.status).toBe(422);
    expect(unknown.body.error.code).toBe("invalid_option");
    expect(unknown.body.error.details.allowed).toEqual(
      expect.arrayContaining(["use_postgres", "use_sqlite", "custom"]),
    );
    const noNote = await fx.request("POST", path, { body: { option_id: "use_sqlite" } });
    expect(noNote.status).toBe(422);
    expect(noNote.body.error.code).toBe("note_required");
    const customNoNote = await fx.request("POST", path, { body: { option_id: "custom", note: "  " } });
    expect(customNoNote.status).toBe(422);
    expect(await stateSignature(fx)).toEqual(before);
    const missing = await fx.request("POST", "/api/projects/opt/decisions/decision-nope/resolve", {
      body: { option_id: "x" },
    });
    expect(missing.status).toBe(404);
  });

  it("option stop cancels the item and its blocked original", async () => {
    await seedProject(fx, "stp", [card("S00-001")]);
    const q = await raiseQuestion(fx, "stp", [
      { id: "go", label: "Go" },
      { id: "stop", label: "Stop" },
    ]);
    const res = await fx.request("POST", `/api/projects/stp/decisions/${q.decisionId}/resolve`, {
      body: { option_id: "stop" },
    });
    expect(res.status).toBe(200);
    expect((await getTask(fx.scratch.db, "stp", q.resolverId))?.status).toBe("cancelled");
    expect((await getTask(fx.scratch.db, "stp", q.taskId))?.status).toBe("cancelled");
  });
});

describe("POST /api/projects/{id}/backlog/{item_id}/answer", () => {
  it("resolves the item's pending card with the text and makes it runnable", async () => {
    await seedProject(fx, "ans", [card("S00-001")]);
    const q = await raiseQuestion(fx, "ans");
    const res = await fx.request("POST", `/api/projects/ans/backlog/${q.resolverId}/answer`, {
      token: fx.tokens.operate,
      body: { text: "Use Postgres 16 with pgvector." },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      resolved: true,
      recorded: true,
      item_id: q.resolverId,
      application_status: "applied",
      task_status: "todo",
      decision: {
        id: q.decisionId,
        status: "resolved",
        selected_option: "custom",
        note: "Use Postgres 16 with pgvector.",
      },
    });
    expect(res.body.resolution_id).toBe(res.body.decision.resolution_id);
    const status = await fx.request("GET", "/api/projects/ans/status");
    expect(status.body.pending_questions).toEqual([]);
    expect(status.body.waiting_for_you).toBeNull();
  });

  it("records an answer on an item without a card (resolved: false); refuses unknown items with 404", async () => {
    await seedProject(fx, "ans2", [card("S00-001")]);
    const res = await fx.request("POST", "/api/projects/ans2/backlog/S00-001/answer", {
      body: { text: "Prefer small commits." },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ resolved: false, recorded: true, decision: null, resolution_id: null });
    expect((await getTask(fx.scratch.db, "ans2", "S00-001"))?.answers.map((a) => a.answer)).toEqual([
      "Prefer small commits.",
    ]);
    const missing = await fx.request("POST", "/api/projects/ans2/backlog/S00-999/answer", {
      body: { text: "x" },
    });
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe("not_found");
  });
});

describe("POST /api/projects/{id}/message", () => {
  it("answers 409 listing nothing when no question is pending, and changes nothing", async () => {
    await seedProject(fx, "msg0", [card("S00-001")]);
    const before = await stateSignature(fx);
    const res = await fx.request("POST", "/api/projects/msg0/message", {
      token: fx.tokens.operate,
      body: { text: "hello" },
    });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({
      error: { code: "no_pending_question" },
      routed: false,
      pending_questions: [],
    });
    expect(res.body.error.message).toContain("No question is pending");
    expect(await stateSignature(fx)).toEqual(before);
  });

  it("routes to the single pending question", async () => {
    await seedProject(fx, "msg1", [card("S00-001")]);
    const q = await raiseQuestion(fx, "msg1");
    const res = await fx.request("POST", "/api/projects/msg1/message", {
      token: fx.tokens.operate,
      body: { text: "SQLite is fine." },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      routed: true,
      resolved: true,
      decision_id: q.decisionId,
      item_id: q.resolverId,
      decision: { status: "resolved", selected_option: "custom", note: "SQLite is fine." },
    });
  });

  it("answers 409 listing both when two questions are pending, and changes nothing", async () => {
    await seedProject(fx, "msg2", [card("S00-001"), card("S00-002")]);
    const a = await raiseQuestion(fx, "msg2");
    const b = await raiseQuestion(fx, "msg2");
    const before = await stateSignature(fx);
    const res = await fx.request("POST", "/api/projects/msg2/message", {
      token: fx.tokens.operate,
      body: { text: "yes" },
    });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe("ambiguous_message");
    expect(res.body.pending_questions.map((p: { id: string }) => p.id).sort()).toEqual(
      [a.decisionId, b.decisionId].sort(),
    );
    expect(res.body.error.message).toContain(a.decisionId);
    expect(await stateSignature(fx)).toEqual(before);
  });
});
