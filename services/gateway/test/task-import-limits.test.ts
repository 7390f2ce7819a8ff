import { GATEWAY_DEFAULTS } from "@overseer/settings";
import { beforeAll, describe, expect, it } from "vitest";
import { createGatewayApp, resolveGatewayOptions } from "../src/index.ts";
import { card, seedProject, useGatewayFixture } from "./support/gateway-fixture.ts";
import { stateSignature } from "./support/state-signature.ts";

/**
 * Large imports (issue 9: 20,000 tasks answered 500 `MAX_PARAMETERS_EXCEEDED`) are inserted in
 * batches, all or nothing, up to `maxImportTasks`; beyond it the import is refused with 422.
 */
const MAX_IMPORT_TASKS = 25_000;
const fx = useGatewayFixture({ maxBodyBytes: 8 * 1024 * 1024, maxImportTasks: MAX_IMPORT_TASKS });

beforeAll(async () => {
  await seedProject(fx, "big", [card("S00-001")]);
  await seedProject(fx, "capped", [card("S00-001")]);
});

function taskFile(count: number, prefix: string): string {
  const tasks = Array.from({ length: count }, (_, i) => ({
    id: `${prefix}${i}`,
    title: `Task ${i}`,
    ...(i > 0 && i % 2 === 0 ? { prerequisites: [`${prefix}${i - 1}`] } : {}),
  }));
  return JSON.stringify({ tasks });
}

async function taskCount(projectId: string): Promise<number> {
  const row = await fx.scratch.db
    .selectFrom("tasks")
    .select((eb) => eb.fn.countAll<string>().as("n"))
    .where("project_id", "=", projectId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

describe("task import size", () => {
  it("imports 20,000 tasks with their prerequisites in one request", { timeout: 120_000 }, async () => {
    const res = await fx.request("POST", "/api/v1/projects/big/tasks/import", {
      rawBody: taskFile(20_000, "T"),
      headers: { "Content-Type": "application/json" },
    });
    expect(res.status, res.text.slice(0, 300)).toBe(201);
    expect(res.body.imported).toBe(20_000);
    expect(await taskCount("big")).toBe(20_001);
    const deps = await fx.scratch.db
      .selectFrom("task_dependencies")
      .select((eb) => eb.fn.countAll<string>().as("n"))
      .where("project_id", "=", "big")
      .executeTakeFirstOrThrow();
    expect(Number(deps.n)).toBe(9_999);
  });

  it("refuses more than maxImportTasks with 422 and imports nothing", { timeout: 120_000 }, async () => {
    const before = await stateSignature(fx);
    const res = await fx.request("POST", "/api/v1/projects/capped/tasks/import", {
      rawBody: taskFile(MAX_IMPORT_TASKS + 1, "U"),
      headers: { "Content-Type": "application/json" },
    });
    expect(res.status, res.text.slice(0, 300)).toBe(422);
    expect(res.body.error.message).toContain(`at most ${MAX_IMPORT_TASKS} tasks`);
    expect(res.body.error.message).toContain("split the file");
    expect(await stateSignature(fx)).toEqual(before);
  });
});

describe("task import defaults", () => {
  it("a maxImportTasks-size import fits under the default body limit and imports", {
    timeout: 120_000,
  }, async () => {
    await seedProject(fx, "defaults", [card("S00-001")]);
    const app = createGatewayApp(
      fx.deps,
      resolveGatewayOptions({ processMetrics: false, dataDir: fx.tempDir }),
    );
    try {
      const max = GATEWAY_DEFAULTS.maxImportTasks;
      expect(app.settings.maxImportTasks).toBe(max);
      const tasks = Array.from({ length: max }, (_, i) => ({
        id: `S01-${String(i).padStart(5, "0")}`,
        title: `Task ${i}`,
      }));
      const body = JSON.stringify(tasks);
      expect(Buffer.byteLength(body)).toBeLessThanOrEqual(app.settings.maxBodyBytes);
      const res = await app.request("/api/v1/projects/defaults/tasks/import", {
        method: "POST",
        headers: { Authorization: `Bearer ${fx.tokens.operate}`, "Content-Type": "application/json" },
        body,
      });
      expect(res.status, (await res.clone().text()).slice(0, 300)).toBe(201);
      expect(await taskCount("defaults")).toBe(max + 1);
    } finally {
      await app.shutdown();
    }
  });
});
