import {
  createProject,
  createScratchDatabase,
  getProject,
  getRun,
  listEvents,
  POSTGRES_NOTIFY_CHANNEL,
  type ScratchDatabase,
} from "@overseer/db";
import { DomainError } from "@overseer/domain";
import {
  createRedis,
  LiveChannel,
  type LiveEvent,
  psubscribeWhenReady,
  type Redis,
  RunQueues,
  resolveLiveOptions,
  resolveQueueOptions,
} from "@overseer/queue";
import type { RunJob } from "@overseer/run-contract";
import { deleteRedisKeys, runJobFixture, taskCard, uniqueRedisPrefix } from "@overseer/test-support";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createProject as createProjectCommand,
  importTasks,
  startProject,
  TransitionApplier,
  updateProjectConfig,
} from "../src/index.ts";

const prefix = uniqueRedisPrefix("trtest");
let scratch: ScratchDatabase;
let redis: Redis;
let subscriber: Redis;
let live: LiveChannel;
let queues: RunQueues;
const received: LiveEvent[] = [];
let messages = 0;

const card = taskCard;

function jobFor(runId: string, projectId: string, taskId: string): RunJob {
  return runJobFixture({ runId, projectId, taskId });
}

beforeAll(async () => {
  scratch = await createScratchDatabase();
  redis = createRedis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379");
  subscriber = createRedis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379");
  live = new LiveChannel(redis, resolveLiveOptions({ prefix }));
  queues = new RunQueues(redis, resolveQueueOptions({ prefix }));
  // Every project's channel: there is no fleet-wide one.
  await psubscribeWhenReady(subscriber, `${live.eventsChannel("")}*`);
  // One message per transition and project: its events, in order.
  subscriber.on("pmessage", (_pattern, _channel, message: string) => {
    messages++;
    received.push(...(JSON.parse(message) as LiveEvent[]));
  });
});

afterAll(async () => {
  await queues?.close();
  await deleteRedisKeys(redis, prefix);
  subscriber?.disconnect();
  redis?.disconnect();
  await scratch?.drop();
});

describe("TransitionApplier", () => {
  it("applies, publishes every stored event live and removes the jobs of cancelled runs", async () => {
    const applier = new TransitionApplier({ db: scratch.db, live, queues });
    await createProject(scratch.db, { id: "one", repo: "/tmp/none", runnerConfig: { max_sessions: 7 } });
    expect(await importTasks(applier, "one", [card("S00-001"), card("S00-002", ["S00-001"])])).toBe(2);
    const started = await startProject(applier, "one", { by: "test" });
    expect(started.state.project.sessionsLimit).toBe(7);
    const claimed = await applier.apply("one", { kind: "claim" });
    const run = claimed.changes.runs[0];
    if (!run) throw new Error("nothing claimed");
    await queues.enqueueRun(jobFor(run.id, "one", run.taskId));
    expect((await queues.runJobState(run.id)).state).not.toBe("missing");

    const cancelled = await applier.apply("one", { kind: "cancel", taskId: run.taskId, by: "test" });
    expect((await getRun(scratch.db, run.id))?.status).toBe("cancelled");
    expect((await queues.runJobState(run.id)).state).toBe("missing");

    const stored = [started, claimed, cancelled].flatMap((r) => r.eventRows.map((e) => String(e.id)));
    await expect
      .poll(() => received.filter((e) => e.projectId === "one").map((e) => e.id), { timeout: 10_000 })
      .toEqual(expect.arrayContaining(stored));
    // A transition's events are one message, however many there are (the import's two tasks).
    expect(messages).toBeLessThan(received.length);
    expect(received.find((e) => e.type === "project.started")).toMatchObject({
      projectId: "one",
      taskId: null,
    });
  });

  it("retries commands that hit a concurrent change, so concurrent operators both apply", async () => {
    const applier = new TransitionApplier({ db: scratch.db });
    await createProject(scratch.db, { id: "two", repo: "/tmp/none", runnerConfig: {} });
    await importTasks(applier, "two", [card("S00-001"), card("S00-002")]);
    const results = await Promise.all([
      applier.apply("two", { kind: "answer", taskId: "S00-001", text: "first", by: "a" }),
      applier.apply("two", { kind: "answer", taskId: "S00-002", text: "second", by: "b" }),
      applier.apply("two", { kind: "set-project-status", status: "active", by: "c" }),
    ]);
    expect(results.map((r) => r.outcome)).toEqual(["applied", "applied", "applied"]);
  });

  it("tells its commit hook whether another commit on the project landed while the command was in flight", async () => {
    const commits: { projectId: string; overlapped: boolean }[] = [];
    const applier = new TransitionApplier(
      { db: scratch.db },
      {
        onCommit: (projectId, _result, overlapped) => commits.push({ projectId, overlapped }),
      },
    );
    await createProject(scratch.db, { id: "overlap", repo: "/tmp/none", runnerConfig: {} });
    await createProject(scratch.db, { id: "beside", repo: "/tmp/none", runnerConfig: {} });
    await importTasks(applier, "overlap", [card("S00-001"), card("S00-002")]);
    expect(commits).toEqual([{ projectId: "overlap", overlapped: false }]);
    commits.length = 0;
    // Started together: whichever commits last saw the other commit land in its flight.
    await Promise.all([
      applier.apply("overlap", { kind: "answer", taskId: "S00-001", text: "first", by: "a" }),
      applier.apply("overlap", { kind: "answer", taskId: "S00-002", text: "second", by: "b" }),
      // Another project's commit is no overlap.
      importTasks(applier, "beside", [card("S00-001")]),
    ]);
    const overlap = commits.filter((c) => c.projectId === "overlap").map((c) => c.overlapped);
    expect(overlap).toEqual([false, true]);
    expect(commits.find((c) => c.projectId === "beside")?.overlapped).toBe(false);
    // Alone again afterwards.
    commits.length = 0;
    await applier.apply("overlap", { kind: "set-project-status", status: "active", by: "c" });
    expect(commits.map((c) => c.overlapped)).toEqual([false]);
  });

  it("starts onCommitted beside the live publication: it does not wait for the watchers' round trip", async () => {
    // The live connection is held by a blocking pop: the publication waits behind it until released.
    const held = createRedis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379");
    const gate = `${prefix}:gate`;
    const applier = new TransitionApplier({
      db: scratch.db,
      live: new LiveChannel(held, resolveLiveOptions({ prefix })),
    });
    await createProject(scratch.db, { id: "beside-live", repo: "/tmp/none", runnerConfig: {} });
    await importTasks(applier, "beside-live", [card("S00-001")]);
    const released = held.blpop(gate, 30);
    let ids: string[] = [];
    let committed: () => void = () => {};
    const ran = new Promise<void>((resolve) => {
      committed = resolve;
    });
    const applied = applier.apply(
      "beside-live",
      { kind: "set-project-status", status: "active", by: "t" },
      {
        onCommitted: async (result) => {
          ids = result.eventRows.map((e) => String(e.id));
          committed();
        },
      },
    );
    await ran;
    // onCommitted ran while the publication is still stuck: none of the command's events is out.
    expect(ids.length).toBeGreaterThan(0);
    expect(received.filter((e) => ids.includes(e.id))).toEqual([]);
    await redis.lpush(gate, "go");
    await released;
    expect((await applied).outcome).toBe("applied");
    await expect
      .poll(() => received.filter((e) => ids.includes(e.id)).length, { timeout: 10_000 })
      .toBe(ids.length);
    held.disconnect();
  });

  it("a failing onCommitted fails the apply, and the committed command is not applied again", async () => {
    let calls = 0;
    const applier = new TransitionApplier({ db: scratch.db, live });
    await createProject(scratch.db, { id: "committed-once", repo: "/tmp/none", runnerConfig: {} });
    await importTasks(applier, "committed-once", [card("S00-001")]);
    const failing = applier.apply(
      "committed-once",
      { kind: "set-project-status", status: "active", by: "t" },
      {
        onCommitted: async () => {
          calls += 1;
          throw new Error("queue unreachable");
        },
      },
    );
    await expect(failing).rejects.toThrow("queue unreachable");
    expect(calls).toBe(1);
    expect((await getProject(scratch.db, "committed-once"))?.status).toBe("active");
  });

  it("keeps a committed transition when Redis refuses the publication", async () => {
    const broken = createRedis("redis://127.0.0.1:6379", {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
    });
    const failures: unknown[] = [];
    const applier = new TransitionApplier(
      { db: scratch.db, live: new LiveChannel(broken, resolveLiveOptions({ prefix })) },
      {
        boundRedis: (call) =>
          call.catch((error: unknown) => {
            failures.push(error);
            throw error;
          }),
      },
    );
    await createProject(scratch.db, { id: "three", repo: "/tmp/none", runnerConfig: {} });
    await importTasks(applier, "three", [card("S00-001")]);
    const result = await startProject(applier, "three");
    expect(result.outcome).toBe("applied");
    expect(result.state.project.status).toBe("active");
    expect(failures.length).toBeGreaterThan(0);
    broken.disconnect();
  });

  it("creates a project and changes its settings as commands: event, NOTIFY and live publication", async () => {
    const notified: string[] = [];
    const subscription = await scratch.notifications.listen(POSTGRES_NOTIFY_CHANNEL, (id) =>
      notified.push(id),
    );
    try {
      const applier = new TransitionApplier({ db: scratch.db, live, queues });
      const row = await createProjectCommand(
        applier,
        { id: "four", repo: "/tmp/none", runnerConfig: { argv: ["agent"] }, concurrency: 2 },
        "alice",
      );
      expect(row).toMatchObject({
        id: "four",
        name: "four",
        branch: "main",
        status: "paused",
        concurrency: 2,
      });
      const updated = await updateProjectConfig(
        applier,
        "four",
        { concurrency: 3, objective: "Parse" },
        "bob",
      );
      expect(updated).toMatchObject({
        concurrency: 3,
        objective: "Parse",
        runner_config: { argv: ["agent"] },
      });
      expect(updated.version).toBe(row.version + 1);

      const events = await listEvents(scratch.db, { projectId: "four" });
      expect(events.map((e) => [e.type, e.data.by])).toEqual([
        ["project.created", "alice"],
        ["project.config_updated", "bob"],
      ]);
      await expect.poll(() => notified.filter((id) => id === "four").length, { timeout: 10_000 }).toBe(2);
      await expect
        .poll(() => received.filter((e) => e.projectId === "four").map((e) => e.type), { timeout: 10_000 })
        .toEqual(["project.created", "project.config_updated"]);

      const again = await createProjectCommand(applier, {
        id: "four",
        repo: "/elsewhere",
        runnerConfig: {},
      }).catch((error: unknown) => error);
      expect(again).toBeInstanceOf(DomainError);
      expect((again as DomainError).code).toBe("already_exists");
      expect((await getProject(scratch.db, "four"))?.repo).toBe("/tmp/none");
    } finally {
      await subscription.unlisten();
    }
  });

  it("of two concurrent creates of one id, one applies and the other is refused with already_exists", async () => {
    const applier = new TransitionApplier({ db: scratch.db });
    const outcomes = await Promise.allSettled(
      ["/tmp/a", "/tmp/b"].map((repo) =>
        createProjectCommand(applier, { id: "five", repo, runnerConfig: {} }),
      ),
    );
    expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(1);
    const refused = outcomes.find((o) => o.status === "rejected");
    expect((refused as PromiseRejectedResult).reason).toMatchObject({ code: "already_exists" });
    expect(await listEvents(scratch.db, { projectId: "five" })).toHaveLength(1);
  });
});
