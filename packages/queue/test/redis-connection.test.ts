/**
 * createRedis against a Redis that is not there (yet): the refused connections are the client's
 * to retry and each command reports its own failure, so nothing is printed beside the service's
 * logs (ioredis prints "[ioredis] Unhandled error event" to stderr for a client without an
 * 'error' listener, as the scale bench showed at its start).
 */
import { once } from "node:events";
import { createServer } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createRedis } from "../src/index.ts";

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (typeof address !== "object" || !address) throw new Error("no port");
  return address.port;
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("createRedis", () => {
  it("prints nothing while Redis refuses connections; a command still fails with the refusal", async () => {
    const printed = vi.spyOn(console, "error");
    const redis = createRedis(`redis://127.0.0.1:${await closedPort()}`, { maxRetriesPerRequest: 1 });
    try {
      // The first refusal closes the connection; the client reconnects. (events.once would
      // listen for 'error' meanwhile, which is what this test is about.)
      await new Promise((resolve) => redis.once("reconnecting", resolve));
      await expect(redis.ping()).rejects.toThrow();
      expect(printed.mock.calls.map((call) => String(call[0]))).not.toContain(
        "[ioredis] Unhandled error event:",
      );
    } finally {
      redis.disconnect();
    }
  });

  it("hands the connection's errors to a listener the caller adds", async () => {
    const redis = createRedis(`redis://127.0.0.1:${await closedPort()}`);
    try {
      const [error] = (await once(redis, "error")) as [Error & { code?: string }];
      expect(error.code).toBe("ECONNREFUSED");
    } finally {
      redis.disconnect();
    }
  });
});
