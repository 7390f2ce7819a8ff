/**
 * The operator's walk over HTTP against a running cluster (the demo's decision project):
 * status → compact snapshot → resolve the pending decision → the answer reaches the next
 * run's prompt, the resolver runs, the original resumes and is done.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { createApiToken } from "@overseer/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import YAML from "yaml";
import { ClusterFixture } from "../support/cluster-fixture.ts";
import { type ServiceProcess, startService } from "../support/service-process.ts";
import { allTasks } from "../support/wait-for.ts";

const fixture = path.resolve(import.meta.dirname, "../demo/fixtures/decision-project.yaml");

describe("operator flow over HTTP", () => {
  const cluster = new ClusterFixture({ sandbox: "bwrap" });
  let gateway: ServiceProcess;
  let base = "";
  let token = "";

  const call = async (method: string, url: string, body?: unknown) => {
    const res = await fetch(`${base}${url}`, {
      method,
      headers: { Authorization: `Bearer ${token}`, ...(body ? { "Content-Type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  beforeAll(async () => {
    await cluster.setup();
    await cluster.startCoordinator();
    await cluster.startWorker(2);
    gateway = startService("gateway", cluster.env({ OVERSEER_GATEWAY_PORT: "0", LOG_LEVEL: "info" }));
    const deadline = Date.now() + 30_000;
    while (!/"port":(\d+)/.test(gateway.output())) {
      if (Date.now() > deadline) throw new Error(`gateway did not start:\n${gateway.output()}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    base = `http://127.0.0.1:${/"port":(\d+)/.exec(gateway.output())?.[1]}`;
    token = (await createApiToken(cluster.scratch.db, { name: "operator", scope: "operate" })).token;
  });
  afterAll(async () => {
    await gateway?.kill("SIGTERM");
    await cluster.teardown();
  });

  it("status → compact snapshot → resolve → the task resumes and finishes", async () => {
    const tasks = (YAML.parse(readFileSync(fixture, "utf8")) as { tasks: unknown[] }).tasks;
    await cluster.addProject({ id: "demo-decision", tasks });
    await cluster.waitForProject("demo-decision", (s) =>
      [...s.decisions.values()].some((d) => d.status === "pending"),
    );

    const status = await call("GET", "/api/projects/demo-decision/status");
    expect(status.status).toBe(200);
    expect(JSON.stringify(status.body)).toContain("waiting for you: 1 unanswered question(s)");

    const snapshot = await call("GET", "/api/projects/demo-decision/snapshot?compact=true");
    const pending = snapshot.body.pending_questions as { id: string; options: { id: string }[] }[];
    expect(pending.map((q) => q.id)).toEqual(["decision-S00-001.R1"]);
    expect(pending[0]?.options.map((o) => o.id)).toEqual(["postgres", "sqlite"]);

    const resolved = await call("POST", "/api/projects/demo-decision/decisions/decision-S00-001.R1/resolve", {
      option_id: "postgres",
      note: "we already run it",
    });
    expect(resolved.status).toBe(200);
    expect(resolved.body).toMatchObject({ resolved: true, application_status: "applied" });

    const again = await call("POST", "/api/projects/demo-decision/decisions/decision-S00-001.R1/resolve", {
      option_id: "postgres",
    });
    expect(again.body).toMatchObject({
      application_status: "already_applied",
      resolution_id: resolved.body.resolution_id,
    });
    const stale = await call("POST", "/api/projects/demo-decision/decisions/decision-S00-001.R1/resolve", {
      option_id: "sqlite",
    });
    expect(stale.status).toBe(409);
    expect(stale.body).toMatchObject({ application_status: "stale" });

    await cluster.waitForProject("demo-decision", (s) => allTasks(s, ["done"]), 60_000);
    const resolverRun = await cluster.scratch.db
      .selectFrom("runs")
      .select("prompt")
      .where("project_id", "=", "demo-decision")
      .where("task_id", "=", "S00-001.R1")
      .where("action", "=", "resolve")
      .executeTakeFirstOrThrow();
    expect(resolverRun.prompt).toContain("we already run it");

    const after = await call("GET", "/api/projects/demo-decision/status");
    expect(JSON.stringify(after.body)).not.toContain("waiting for you");
  });
});
