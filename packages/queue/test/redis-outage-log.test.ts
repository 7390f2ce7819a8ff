/**
 * BullMQ objects while their Redis is away: a Queue without an 'error' listener printed each of
 * its connection's errors through console.error (BullMQ's QueueBase.emit falls back to it; the
 * intake queue's job scheduler forwards every reconnect failure), beside the service's pino
 * logs and once per reconnect attempt; a Worker's listener logged each of them. With the
 * service's logger handed to RunQueues (and to listenForBullmqErrors for a Worker), the outage is
 * one structured warning and its end one line, and nothing reaches console.error.
 */
import { setTimeout as delay } from "node:timers/promises";
import { Worker } from "bullmq";
import { afterEach, describe, expect, it, vi } from "vitest";
import { startPrivateRedis } from "../../../test/support/private-redis.ts";
import {
  createRedis,
  listenForBullmqErrors,
  type QueueErrorLog,
  queueKeyPrefix,
  RunQueues,
  resolveQueueOptions,
} from "../src/index.ts";

interface Line {
  level: "warn" | "error" | "info";
  details: Record<string, unknown>;
  message: string;
}

function recordingLog(lines: Line[]): QueueErrorLog {
  const at =
    (level: Line["level"]) =>
    (details: object, message: string): void => {
      lines.push({ level, details: details as Record<string, unknown>, message });
    };
  return { warn: at("warn"), error: at("error"), info: at("info") };
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("BullMQ errors while Redis is away", () => {
  it("reach the service's logger as one line per outage, never console.error", async () => {
    let redisServer = await startPrivateRedis();
    const port = Number(new URL(redisServer.url).port);
    const redis = createRedis(redisServer.url);
    const lines: Line[] = [];
    const log = recordingLog(lines);
    const queues = new RunQueues(redis, resolveQueueOptions({ prefix: "outage" }), log);
    const worker = new Worker("outage-test", async () => undefined, {
      connection: redis,
      prefix: queueKeyPrefix("outage"),
    });
    listenForBullmqErrors(worker, redis, log, "test worker");
    const printed = vi.spyOn(console, "error").mockImplementation(() => undefined);
    let reconnects = 0;
    redis.on("reconnecting", () => {
      reconnects += 1;
    });
    const outage = async () => {
      await redisServer.stop();
      const from = reconnects;
      while (reconnects < from + 4) await delay(50);
      await delay(100);
    };
    try {
      // The intake queue's job scheduler and a second pool's queue: BullMQ objects made on use.
      await queues.intake.syncPolls(["source-1"], 60_000);
      await queues.runQueue("gpu").getJobCounts();
      await worker.waitUntilReady();
      await outage();
      expect(printed).not.toHaveBeenCalled();
      expect(lines.map((line) => line.level)).toEqual(["warn"]);
      expect(lines[0]?.message).toMatch(/Redis is unreachable/);
      expect(lines[0]?.details.err).toMatchObject({ code: "ECONNREFUSED" });

      redisServer = await startPrivateRedis(port);
      while (lines.length < 2) await delay(50);
      expect(lines[1]?.level).toBe("info");
      expect(lines[1]?.message).toMatch(/Redis is reachable again/);
      // A second outage is a line of its own.
      await outage();
      expect(lines.map((line) => line.level)).toEqual(["warn", "info", "warn"]);
      expect(printed).not.toHaveBeenCalled();
    } finally {
      await redisServer.stop();
      redis.disconnect();
      await worker.close(true);
      await queues.close();
    }
  });
});
