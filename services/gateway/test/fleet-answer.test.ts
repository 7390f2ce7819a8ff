import { FleetSchema } from "@overseer/api-contract";
import { applyTransition, type Db, listFleetProjects } from "@overseer/db";
import { TransitionApplier } from "@overseer/transitions";
import { describe, expect, it } from "vitest";
import { FLEET_THROUGHPUT, FleetAnswer } from "../src/live/fleet-answer.ts";
import { fleetView } from "../src/views/fleet-view.ts";
import { card, seedProject, useGatewayFixture } from "./support/gateway-fixture.ts";

/**
 * The fleet overview is re-read by what changed: each read sends the fleet statement for the
 * projects marked since the previous one (none: no statement), and joins every project's
 * serialized view. Counted here: the fleet statements sent and the project rows they returned.
 */
const fx = useGatewayFixture();

function counted(): { db: Db; statements: () => number; rows: () => number } {
  let statements = 0;
  let rows = 0;
  const fleetQueries = new Set<unknown>();
  const db = fx.scratch.db.withPlugin({
    transformQuery: ({ node, queryId }) => {
      const text = (node as { sqlFragments?: readonly string[] }).sqlFragments?.join(" ") ?? "";
      if (text.includes("AS ended_ms")) {
        statements++;
        fleetQueries.add(queryId);
      }
      return node;
    },
    transformResult: async ({ result, queryId }) => {
      if (fleetQueries.delete(queryId)) rows += result.rows.length;
      return result;
    },
  }) as Db;
  return { db, statements: () => statements, rows: () => rows };
}

type Fleet = ReturnType<typeof FleetSchema.parse>;

async function read(answer: FleetAnswer): Promise<Fleet> {
  // The answer keeps the contract (api-contract's FleetSchema).
  return FleetSchema.parse(JSON.parse(Buffer.from((await answer.load()).identity).toString("utf8")));
}

describe("fleet answer", () => {
  it("is the fleet view of every project, and re-reads only the projects marked as changed", async () => {
    for (const id of ["fa-b", "fa-a", "fa-c"]) await seedProject(fx, id, [card("S00-001"), card("S00-002")]);
    const { db, statements, rows } = counted();
    const answer = new FleetAnswer(db, FLEET_THROUGHPUT);
    answer.setNotified(true);
    const first = await read(answer);
    expect(statements()).toBe(1);
    const all = rows();
    expect(first.projects.map((p) => p.id)).toEqual([...first.projects.map((p) => p.id)].sort());
    const whole = await listFleetProjects(fx.scratch.db, null, FLEET_THROUGHPUT.windowSeconds);
    expect(first).toEqual(fleetView(whole, FLEET_THROUGHPUT, new Date(first.generated_at)));

    // Another process's transition (its NOTIFY marks the project): only that project is read.
    const run = (await applyTransition(fx.scratch.db, "fa-b", { kind: "claim" })).changes.runs[0];
    answer.changed("fa-b");
    const second = await read(answer);
    expect(statements()).toBe(2);
    expect(rows()).toBe(all + 1);
    const b = second.projects.find((p) => p.id === "fa-b");
    expect(first.projects.find((p) => p.id === "fa-b")).toMatchObject({ running: 0, counts: { todo: 2 } });
    expect(b).toMatchObject({ running: 1, counts: { todo: 1, total: 2 } });
    expect(second.projects.find((p) => p.id === "fa-a")).toEqual(first.projects.find((p) => p.id === "fa-a"));

    // Nothing marked: no statement, the same projects.
    const third = await read(answer);
    expect(statements()).toBe(2);
    expect(third.projects).toEqual(second.projects);

    // A new project is read in its place (ids in order); a marked project that is gone is dropped.
    await seedProject(fx, "fa-0", [card("S00-001")]);
    answer.changed("fa-0");
    answer.changed("fa-gone");
    const fourth = await read(answer);
    expect(rows()).toBe(all + 2);
    const ids = fourth.projects.map((p) => p.id);
    expect(ids).toEqual([...ids].sort());
    expect(ids).toContain("fa-0");
    expect(ids).not.toContain("fa-gone");
    expect(run).toBeDefined();
  });

  it("reads every project while the notifications are not trusted, and once after they (re)connect", async () => {
    await seedProject(fx, "fw-a");
    const { db, statements, rows } = counted();
    const answer = new FleetAnswer(db, FLEET_THROUGHPUT);
    await read(answer);
    await read(answer);
    expect(statements()).toBe(2);
    const perRead = rows() / 2;
    answer.setNotified(true);
    await read(answer);
    await read(answer);
    expect(statements()).toBe(3);
    answer.changedAll();
    await read(answer);
    expect(statements()).toBe(4);
    expect(rows()).toBe(perRead * 4);
  });

  it("moves each throughput series along with the clock without reading the project again", async () => {
    await seedProject(fx, "ft-a");
    const applier = new TransitionApplier({ db: fx.scratch.db });
    const runId = (await applier.apply("ft-a", { kind: "claim" })).changes.runs[0]?.id ?? "";
    await applier.apply("ft-a", {
      kind: "submit",
      runId,
      message: "feat",
      commitSha: null,
      branchHead: null,
    });
    const { db, statements } = counted();
    let now = Date.now();
    const answer = new FleetAnswer(db, FLEET_THROUGHPUT, () => now);
    answer.setNotified(true);
    const series = async () => (await read(answer)).projects.find((p) => p.id === "ft-a")?.throughput;
    expect(await series()).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
    now += 301_000;
    expect(await series()).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0]);
    now += 3300_000;
    expect(await series()).toEqual(new Array(12).fill(0));
    expect(statements()).toBe(1);
  });

  it("reads a marked project again after a read that failed", async () => {
    await seedProject(fx, "ff-a");
    let fail = false;
    const db = fx.scratch.db.withPlugin({
      transformQuery: ({ node }) => {
        if (fail) throw new Error("the database is away");
        return node;
      },
      transformResult: async ({ result }) => result,
    }) as Db;
    const answer = new FleetAnswer(db, FLEET_THROUGHPUT);
    answer.setNotified(true);
    await read(answer);
    await applyTransition(fx.scratch.db, "ff-a", { kind: "set-project-status", status: "paused", by: "t" });
    answer.changed("ff-a");
    fail = true;
    await expect(answer.load()).rejects.toThrow("away");
    fail = false;
    expect((await read(answer)).projects.find((p) => p.id === "ff-a")?.status).toBe("paused");
  });
});
