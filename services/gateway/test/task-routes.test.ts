// Task routes: list with filters and cursor, get, create, import a task file, cancel, release-external.
import { applyTransition, getTask } from "@overseer/db";
import { runJobId } from "@overseer/queue";
import { describe, expect, it } from "vitest";
import { card, raiseQuestion, seedProject, useGatewayFixture } from "./support/gateway-fixture.ts";
import { stateSignature } from "./support/state-signature.ts";

const fx = useGatewayFixture();

describe("tasks", () => {
  it("lists with status/stage/kind filters and cursor pagination, and gets one", async () => {
    await seedProject(fx, "tl", [
      card("S00-001"),
      card("S00-002"),
      { ...card("S01-001"), stage: "S01" },
      card("S00-003"),
    ]);
    await raiseQuestion(fx, "tl");
    const page1 = await fx.request("GET", "/api/v1/projects/tl/tasks?limit=2", { token: fx.tokens.read });
    expect(page1.status).toBe(200);
    expect(page1.body.tasks.map((t: { id: string }) => t.id)).toEqual(["S00-001", "S00-002"]);
    expect(page1.body.next_cursor).toMatch(/^\d+$/);
    const page2 = await fx.request(
      "GET",
      `/api/v1/projects/tl/tasks?limit=2&cursor=${page1.body.next_cursor}`,
    );
    expect(page2.body.tasks.map((t: { id: string }) => t.id)).toEqual(["S01-001", "S00-003"]);
    const page3 = await fx.request(
      "GET",
      `/api/v1/projects/tl/tasks?limit=2&cursor=${page2.body.next_cursor}`,
    );
    expect(page3.body.tasks.map((t: { id: string }) => t.id)).toEqual(["S00-001.R1"]);
    expect(page3.body.next_cursor).toBeNull();
    const s01 = await fx.request("GET", "/api/v1/projects/tl/tasks?stage=S01");
    expect(s01.body.tasks.map((t: { id: string }) => t.id)).toEqual(["S01-001"]);
    const resolvers = await fx.request("GET", "/api/v1/projects/tl/tasks?kind=resolver");
    expect(resolvers.body.tasks.map((t: { id: string }) => t.id)).toEqual(["S00-001.R1"]);
    const waiting = await fx.request("GET", "/api/v1/projects/tl/tasks?status=awaiting_input,blocked");
    expect(waiting.body.tasks.map((t: { id: string }) => t.id).sort()).toEqual(["S00-001", "S00-001.R1"]);
    const one = await fx.request("GET", "/api/v1/projects/tl/tasks/S00-001.R1", { token: fx.tokens.read });
    expect(one.body).toMatchObject({
      id: "S00-001.R1",
      kind: "resolver",
      parent_id: "S00-001",
      status: "awaiting_input",
      landing: null,
    });
    const none = await fx.request("GET", "/api/v1/projects/tl/tasks/S09-999");
    expect(none.status).toBe(404);
  });

  it("creates one task, refusing an existing id (409) and an unknown prerequisite (422)", async () => {
    await seedProject(fx, "tc", [card("S00-001")]);
    const created = await fx.request("POST", "/api/v1/projects/tc/tasks", {
      token: fx.tokens.operate,
      body: {
        id: "S00-002",
        title: "Second",
        prerequisites: ["S00-001"],
        scope: ["docs/**"],
        acceptance: "Docs exist",
      },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      id: "S00-002",
      stage: "S00",
      prerequisites: ["S00-001"],
      scope: ["docs/**"],
      acceptance: ["Docs exist"],
      status: "todo",
    });
    const again = await fx.request("POST", "/api/v1/projects/tc/tasks", {
      body: { id: "S00-002", title: "Again" },
    });
    expect(again.status).toBe(409);
    const before = await stateSignature(fx);
    const badPrereq = await fx.request("POST", "/api/v1/projects/tc/tasks", {
      body: { id: "S00-003", title: "x", prerequisites: ["S00-404"] },
    });
    expect(badPrereq.status).toBe(422);
    expect(badPrereq.body.error.details.problems[0].kind).toBe("unknown-prerequisite");
    expect(await stateSignature(fx)).toEqual(before);
  });

  it("imports a JSON or YAML task file all-or-nothing, reporting every problem with 422", async () => {
    await seedProject(fx, "ti", [card("S00-001")]);
    const json = await fx.request("POST", "/api/v1/projects/ti/tasks/import", {
      token: fx.tokens.operate,
      body: {
        tasks: [
          { id: "S01-001", title: "One", prerequisites: ["S00-001"] },
          { id: "S01-002", title: "Two", prereqs: ["S01-001"] },
        ],
      },
    });
    expect(json.status).toBe(201);
    expect(json.body).toEqual({ imported: 2, task_ids: ["S01-001", "S01-002"] });
    expect((await getTask(fx.scratch.db, "ti", "S01-001"))?.stage).toBe("S01");

    const yaml = await fx.request("POST", "/api/v1/projects/ti/tasks/import", {
      rawBody: "- id: S02-001\n  title: From YAML\n  scope: [src/**]\n",
      headers: { "Content-Type": "application/yaml" },
    });
    expect(yaml.status).toBe(201);
    expect(yaml.body.task_ids).toEqual(["S02-001"]);

    const before = await stateSignature(fx);
    const bad = await fx.request("POST", "/api/v1/projects/ti/tasks/import", {
      rawBody: [
        "- id: S03-001",
        "  title: Fine",
        "- id: S03-002",
        "  title: 42",
        "  priority: high",
        "- id: S03-003",
        "  title: Cycle a",
        "  prerequisites: [S03-004]",
        "- id: S03-004",
        "  title: Cycle b",
        "  prerequisites: [S03-003]",
        "- id: S00-001",
        "  title: Exists already",
        "- id: S03-005",
        "  title: Unknown prerequisite",
        "  prerequisites: [S09-404]",
      ].join("\n"),
      headers: { "Content-Type": "text/yaml" },
    });
    expect(bad.status).toBe(422);
    expect(bad.body.error.code).toBe("invalid_task_file");
    const kinds = bad.body.error.details.problems.map((p: { kind: string }) => p.kind);
    expect(kinds).toEqual(
      expect.arrayContaining(["schema", "cycle", "duplicate-id", "unknown-prerequisite"]),
    );
    expect(bad.body.error.message).toContain("nothing was imported");
    const syntax = await fx.request("POST", "/api/v1/projects/ti/tasks/import", {
      rawBody: "[{",
      headers: { "Content-Type": "application/json" },
    });
    expect(syntax.status).toBe(422);
    expect(syntax.body.error.details.problems[0].kind).toBe("syntax");
    expect(await stateSignature(fx)).toEqual(before);
  });

  it("cancels a task (its queued run is cancelled) and releases an awaiting resolver", async () => {
    await seedProject(fx, "tx", [card("S00-001"), card("S00-002")]);
    const q = await raiseQuestion(fx, "tx");
    const claimed = await applyTransition(fx.scratch.db, "tx", { kind: "claim" });
    const run = claimed.changes.runs[0];
    expect(run?.taskId).toBe("S00-002");
    // The coordinator would have enqueued the run; cancelling removes the queued job.
    await fx.deps.queues.runs.add("run", { runId: run?.id }, { jobId: runJobId(run?.id ?? "") });
    expect(await fx.deps.queues.runs.getJob(runJobId(run?.id ?? ""))).toBeDefined();
    const cancelled = await fx.request("POST", "/api/v1/projects/tx/tasks/S00-002/cancel", {
      token: fx.tokens.operate,
      body: { reason: "not needed" },
    });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({
      task: { id: "S00-002", status: "cancelled" },
      cancelled_runs: [run?.id],
      application_status: "applied",
    });
    expect(await fx.deps.queues.runs.getJob(runJobId(run?.id ?? ""))).toBeUndefined();
    const twice = await fx.request("POST", "/api/v1/projects/tx/tasks/S00-002/cancel", {
      token: fx.tokens.operate,
    });
    expect(twice.status).toBe(409);
    expect(twice.body.error.code).toBe("invalid_transition");

    const released = await fx.request("POST", `/api/v1/projects/tx/tasks/${q.resolverId}/release-external`, {
      token: fx.tokens.operate,
      body: { reason: "The DNS record was created by the admin." },
    });
    expect(released.status).toBe(200);
    expect(released.body.task).toMatchObject({ id: q.resolverId, status: "todo" });
    expect(released.body.decision).toMatchObject({ status: "resolved" });
    const notAwaiting = await fx.request("POST", "/api/v1/projects/tx/tasks/S00-001/release-external", {
      body: { reason: "x" },
    });
    expect(notAwaiting.status).toBe(409);
  });
});
