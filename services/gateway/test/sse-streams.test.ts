import { applyTransition, listEvents } from "@overseer/db";
import { TransitionApplier, updateProjectConfig } from "@overseer/transitions";
import { describe, expect, it } from "vitest";
import { startGateway } from "../src/index.ts";
import {
  card,
  raiseQuestion,
  seedProject,
  useGatewayFixture,
  useListeningGateway,
} from "./support/gateway-fixture.ts";
import { openSse } from "./support/sse-client.ts";

const fx = useGatewayFixture();
const gw = useListeningGateway(fx);

const auth = () => ({ Authorization: `Bearer ${fx.tokens.read}` });

async function post(path: string, body: unknown): Promise<Response> {
  return fetch(`${gw.url}${path}`, {
    method: "POST",
    headers: { Authorization: `Bearer ${fx.tokens.operate}`, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
}

describe("project event stream", () => {
  it("streams new events live, and a client resuming with Last-Event-ID gets exactly the missed ones", async () => {
    await seedProject(fx, "live", [card("S00-001"), card("S00-002"), card("S00-003")]);
    const q1 = await raiseQuestion(fx, "live");
    const first = await openSse(`${gw.url}/api/projects/live/events/stream`, auth());
    expect(first.status).toBe(200);
    await first.waitForComment("connected");
    expect(first.events).toEqual([]);

    // An operator answer through the gateway is published and streamed.
    expect(
      (await post(`/api/projects/live/backlog/${q1.resolverId}/answer`, { text: "go ahead" })).status,
    ).toBe(200);
    const answered = await first.waitFor((e) => JSON.parse(e.data).type === "task.answered");
    const lastSeen = answered[0]?.id ?? "";
    const seenIds = first.events.map((e) => e.id);
    first.close();
    await first.ended;
    await expect.poll(() => gw.app.openStreamCount(), { timeout: 5000 }).toBe(0);

    // While disconnected: transitions nobody publishes to Redis (Postgres only) and one that is published.
    const q2 = await raiseQuestion(fx, "live");
    expect(
      (await post(`/api/projects/live/decisions/${q2.decisionId}/resolve`, { option_id: "use_postgres" }))
        .status,
    ).toBe(200);
    const missed = (await listEvents(fx.scratch.db, { projectId: "live", after: lastSeen, limit: 1000 })).map(
      (e) => String(e.id),
    );
    expect(missed.length).toBeGreaterThan(3);

    const resumed = await openSse(`${gw.url}/api/projects/live/events/stream`, {
      ...auth(),
      "Last-Event-ID": lastSeen,
    });
    await resumed.waitFor(() => true, missed.length);
    expect(resumed.events.map((e) => e.id)).toEqual(missed);
    expect(resumed.events.every((e) => !seenIds.includes(e.id))).toBe(true);
    const parsed = JSON.parse(resumed.events[0]?.data ?? "{}");
    expect(parsed).toMatchObject({ id: missed[0], project_id: "live" });

    // Live again after the replay, without duplicates.
    const q3 = await raiseQuestion(fx, "live");
    await fx.deps.live.publishEvents([
      {
        id: "0",
        projectId: "live",
        taskId: null,
        runId: null,
        type: "wake",
        data: {},
        createdAt: new Date().toISOString(),
      },
    ]);
    await resumed.waitFor(
      (e) =>
        JSON.parse(e.data).type === "decision.created" &&
        JSON.parse(e.data).data.decisionId === q3.decisionId,
    );
    const ids = resumed.events.map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    const all = (await listEvents(fx.scratch.db, { projectId: "live", after: lastSeen, limit: 1000 })).map(
      (e) => String(e.id),
    );
    expect(ids).toEqual(all.slice(0, ids.length));
    resumed.close();
  });

  it("sends keep-alive comments and accepts the token as access_token for EventSource", async () => {
    await seedProject(fx, "ka", [card("S00-001")]);
    const conn = await openSse(
      `${gw.url}/api/projects/ka/events/stream?access_token=${encodeURIComponent(fx.tokens.read)}`,
    );
    expect(conn.status).toBe(200);
    await conn.waitForComment("keep-alive");
    // The reconnection delay a client waits after a broken connection (the CLI and the web app honour it).
    expect(conn.retries).toEqual([2000]);
    conn.close();
    const noToken = await fetch(`${gw.url}/api/projects/ka/events/stream`);
    expect(noToken.status).toBe(401);
    await noToken.body?.cancel();
    expect(fx.logLines.join("")).not.toContain(fx.tokens.read);
  });

  it("replays from the first event with ?after=0", async () => {
    await seedProject(fx, "replay", [card("S00-001")]);
    await raiseQuestion(fx, "replay");
    const stored = (await listEvents(fx.scratch.db, { projectId: "replay", limit: 1000 })).map((e) =>
      String(e.id),
    );
    const conn = await openSse(`${gw.url}/api/projects/replay/events/stream?after=0`, auth());
    await conn.waitFor(() => true, stored.length);
    expect(conn.events.map((e) => e.id)).toEqual(stored);
    conn.close();
  });
});

describe("run log stream", () => {
  it("streams log chunks, resumes by entry id, and ends with the run's status", async () => {
    await seedProject(fx, "logs", [card("S00-001")], { secrets: { SECRET_KEY: "s3cr3t-value-xyz" } });
    const claimed = await applyTransition(fx.scratch.db, "logs", { kind: "claim" });
    const runId = claimed.changes.runs[0]?.id ?? "";
    await applyTransition(fx.scratch.db, "logs", { kind: "run-started", runId, workerId: "w1" });
    await fx.deps.live.appendLog(runId, "line one\n");
    await fx.deps.live.appendLog(runId, "key=s3cr3t-value-xyz\n");

    const first = await openSse(`${gw.url}/api/runs/${runId}/log/stream`, auth());
    const got = await first.waitFor((e) => e.event === "log", 2);
    expect(got.map((e) => JSON.parse(e.data).text)).toEqual(["line one\n", "key=[REDACTED]\n"]);
    expect(got[0]?.id).toMatch(/^\d+-\d+$/);
    await fx.deps.live.appendLog(runId, "line three\n");
    await first.waitFor((e) => e.event === "log", 3);
    const lastId = first.events.filter((e) => e.event === "log")[1]?.id ?? "";
    first.close();

    await fx.deps.live.appendLog(runId, "line four\n");
    const resumed = await openSse(`${gw.url}/api/runs/${runId}/log/stream`, {
      ...auth(),
      "Last-Event-ID": lastId,
    });
    const again = await resumed.waitFor((e) => e.event === "log", 2);
    expect(again.map((e) => JSON.parse(e.data).text)).toEqual(["line three\n", "line four\n"]);

    await applyTransition(fx.scratch.db, "logs", {
      kind: "submit",
      runId,
      message: "done",
      commitSha: null,
      branchHead: null,
    });
    const [end] = await resumed.waitFor((e) => e.event === "end");
    expect(JSON.parse(end?.data ?? "{}")).toMatchObject({
      run_id: runId,
      status: "finished",
      transition: "submit",
    });
    await resumed.ended;
    expect(resumed.events.filter((e) => e.event === "log")).toHaveLength(2);
  });

  it("falls back to the stored output when the live stream is gone", async () => {
    await seedProject(fx, "stored", [card("S00-001")]);
    const claimed = await applyTransition(fx.scratch.db, "stored", { kind: "claim" });
    const runId = claimed.changes.runs[0]?.id ?? "";
    await applyTransition(
      fx.scratch.db,
      "stored",
      { kind: "submit", runId, message: "done", commitSha: null, branchHead: null },
      { runReport: { output: "the whole stored output\n", exitCode: 0 } },
    );
    const conn = await openSse(`${gw.url}/api/runs/${runId}/log/stream`, auth());
    await conn.ended;
    expect(conn.events.map((e) => e.event)).toEqual(["log", "end"]);
    expect(conn.events[0]?.id).toBe("stored");
    expect(JSON.parse(conn.events[0]?.data ?? "{}")).toMatchObject({
      text: "the whole stored output\n",
      stored: true,
    });
    const unknown = await fetch(`${gw.url}/api/runs/no-such-run/log/stream`, { headers: auth() });
    expect(unknown.status).toBe(404);
  });
});

describe("changes made without Redis (the CLI)", () => {
  it("reach an open event stream through the Postgres NOTIFY, with no Redis message and no safety poll", async () => {
    await seedProject(fx, "quiet", [card("S00-001")]);
    // Keep-alive (and with it the safety poll) far beyond the test: only the NOTIFY can wake the stream.
    const quiet = await startGateway(fx.deps, { port: 0, keepAliveMs: 600_000, processMetrics: false });
    try {
      const stream = await openSse(`${quiet.url}/api/projects/quiet/events/stream`, auth());
      await stream.waitForComment("connected");
      // What `overseer init --update` does: a TransitionApplier without Redis.
      await updateProjectConfig(
        new TransitionApplier({ db: fx.scratch.db }),
        "quiet",
        { objective: "New" },
        "cli",
      );
      const [event] = await stream.waitFor((e) => JSON.parse(e.data).type === "project.config_updated");
      expect(JSON.parse(event?.data ?? "{}")).toMatchObject({
        project_id: "quiet",
        data: { changed: ["objective"], by: "cli" },
      });
      stream.close();
      await stream.ended;
    } finally {
      await quiet.close();
    }
  });
});

describe("graceful shutdown", () => {
  it("ends open streams and stops listening", async () => {
    await seedProject(fx, "bye", [card("S00-001")]);
    const other = await startGateway(fx.deps, { port: 0, processMetrics: false });
    const events = await openSse(`${other.url}/api/projects/bye/events/stream`, auth());
    await events.waitForComment("connected");
    const claimed = await applyTransition(fx.scratch.db, "bye", { kind: "claim" });
    const runId = claimed.changes.runs[0]?.id ?? "";
    const log = await openSse(`${other.url}/api/runs/${runId}/log/stream`, auth());
    await log.waitForComment("connected");
    expect(other.app.openStreamCount()).toBe(2);
    await other.close();
    await events.ended;
    await log.ended;
    expect(other.app.openStreamCount()).toBe(0);
    await expect(fetch(`${other.url}/healthz`)).rejects.toThrow();
  });
});
