import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";
import { createRedis } from "@overseer/queue";

/**
 * A throw-away redis-server on a free loopback port (or `port`: one a stopped server used, to
 * bring Redis back), for tests that FLUSHALL or kill Redis.
 */
export async function startPrivateRedis(port?: number): Promise<{ url: string; stop(): Promise<void> }> {
  port ??= await freePort();
  const child: ChildProcess = spawn(
    "redis-server",
    ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--daemonize", "no"],
    { stdio: "ignore" },
  );
  const url = `redis://127.0.0.1:${port}`;
  const probe = createRedis(url, { maxRetriesPerRequest: 1 });
  try {
    const deadline = Date.now() + 10_000;
    for (;;) {
      try {
        if ((await probe.ping()) === "PONG") break;
      } catch (error) {
        if (Date.now() > deadline) throw error;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  } finally {
    probe.disconnect();
  }
  return {
    url,
    stop: async () => {
      if (child.exitCode !== null) return;
      const gone = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await gone;
    },
  };
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port")),
      );
    });
  });
}
