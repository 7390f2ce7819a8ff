/**
 * Redis in its distributed forms, started by the test from the machine's `redis-server` and
 * `redis-cli`: a Redis Cluster (`redis-cli --cluster create`, primaries with one replica each)
 * and a primary with a replica watched by three Sentinels. Throw-away servers in a temp dir, on
 * free ports of `host` (loopback by default); `stop()` kills every process and removes the dir.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import type { RedisTarget } from "@overseer/queue";
import { freePort } from "./private-redis.ts";

const run = promisify(execFile);

interface RedisNode {
  port: number;
  child: ChildProcess;
}

/** `redis-cli` against one node; the reply as text. */
export async function redisCli(host: string, port: number, ...args: string[]): Promise<string> {
  const { stdout } = await run("redis-cli", ["-h", host, "-p", String(port), ...args], { timeout: 10_000 });
  return stdout.trim();
}

function startNode(dir: string, args: string[]): ChildProcess {
  return spawn("redis-server", args, { cwd: dir, stdio: "ignore" });
}

async function killNode(node: RedisNode): Promise<void> {
  if (node.child.exitCode !== null || node.child.signalCode !== null) return;
  const gone = new Promise((r) => node.child.once("exit", r));
  node.child.kill("SIGKILL");
  await gone;
}

/** Polls `check` every 100 ms until it holds (bounded by `timeoutMs`). */
async function until(what: string, timeoutMs: number, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export interface RedisCluster {
  target: RedisTarget;
  host: string;
  ports: number[];
  /** The port of the primary that serves `key`'s slot now. */
  primaryFor(key: string): Promise<number>;
  /**
   * Kills the primary serving `key`'s slot (SIGKILL) and resolves once another node serves that
   * slot as primary; returns the killed port and the new primary's port.
   */
  killPrimaryFor(key: string): Promise<{ killed: number; promoted: number }>;
  stop(): Promise<void>;
}

/** A Redis Cluster of `primaries` primaries with one replica each, node timeout 1 s. */
export async function startRedisCluster(primaries = 3, host = "127.0.0.1"): Promise<RedisCluster> {
  const dir = await mkdtemp(path.join(tmpdir(), "overseer-redis-cluster-"));
  const nodes: RedisNode[] = [];
  const stop = async () => {
    for (const node of nodes) await killNode(node);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < primaries * 2; i++) {
      const port = await freePort();
      // The bus port is its own free port: port + 10000 may be out of range.
      const busPort = await freePort();
      const child = startNode(dir, [
        "--port",
        String(port),
        "--bind",
        host,
        "--cluster-enabled",
        "yes",
        "--cluster-port",
        String(busPort),
        "--cluster-config-file",
        `nodes-${port}.conf`,
        "--cluster-node-timeout",
        "1000",
        // A replica whose last word from its primary is older than node-timeout × this factor
        // (plus the ping period) refuses to take over; 0 lets the replica of a freshly built
        // cluster take over whatever its link's age, as the failover case needs.
        "--cluster-replica-validity-factor",
        "0",
        "--save",
        "",
        "--appendonly",
        "no",
      ]);
      nodes.push({ port, child });
    }
    for (const node of nodes)
      await until(
        `redis-server :${node.port}`,
        10_000,
        async () => (await redisCli(host, node.port, "ping")) === "PONG",
      );
    await run(
      "redis-cli",
      [
        "--cluster",
        "create",
        ...nodes.map((n) => `${host}:${n.port}`),
        "--cluster-replicas",
        "1",
        "--cluster-yes",
      ],
      { timeout: 30_000 },
    );
    for (const node of nodes)
      await until(`cluster state ok on :${node.port}`, 30_000, async () => {
        const info = await redisCli(host, node.port, "cluster", "info");
        return info.includes("cluster_state:ok") && info.includes(`cluster_known_nodes:${nodes.length}`);
      });
  } catch (error) {
    await stop();
    throw error;
  }
  const live = () => nodes.filter((n) => n.child.exitCode === null && n.child.signalCode === null);
  const primaryFor = async (key: string): Promise<number> => {
    const probe = live()[0] as RedisNode;
    const slot = Number(await redisCli(host, probe.port, "cluster", "keyslot", key));
    const shards = await redisCli(host, probe.port, "--json", "cluster", "slots");
    const ranges = JSON.parse(shards) as [number, number, [string, number, string], ...unknown[]][];
    const range = ranges.find(([from, to]) => slot >= from && slot <= to);
    if (!range) throw new Error(`no node serves slot ${slot}`);
    return range[2][1];
  };
  return {
    target: { url: `redis://${host}:${nodes[0]?.port}`, clusterNodes: nodes.map((n) => `${host}:${n.port}`) },
    host,
    ports: nodes.map((n) => n.port),
    primaryFor,
    async killPrimaryFor(key) {
      const killed = await primaryFor(key);
      await killNode(nodes.find((n) => n.port === killed) as RedisNode);
      let promoted = killed;
      await until(`a replica promoted in place of :${killed}`, 60_000, async () => {
        promoted = await primaryFor(key);
        const info = await redisCli(host, promoted, "cluster", "info");
        return promoted !== killed && info.includes("cluster_state:ok");
      });
      return { killed, promoted };
    },
    stop,
  };
}

export interface RedisSentinelGroup {
  target: RedisTarget;
  host: string;
  /** The port of the primary the Sentinels name now. */
  primary(): Promise<number>;
  /** Kills the primary (SIGKILL); resolves once the Sentinels name the replica instead. */
  killPrimary(): Promise<{ killed: number; promoted: number }>;
  stop(): Promise<void>;
}

const MASTER = "overseer-test";

/** A primary, one replica and three Sentinels (quorum 2, down after 1 s) watching them. */
export async function startRedisSentinels(host = "127.0.0.1"): Promise<RedisSentinelGroup> {
  const dir = await mkdtemp(path.join(tmpdir(), "overseer-redis-sentinel-"));
  const servers: RedisNode[] = [];
  const sentinels: RedisNode[] = [];
  const stop = async () => {
    for (const node of [...sentinels, ...servers]) await killNode(node);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const primaryPort = await freePort();
    const common = ["--bind", host, "--save", "", "--appendonly", "no"];
    servers.push({ port: primaryPort, child: startNode(dir, ["--port", String(primaryPort), ...common]) });
    const replicaPort = await freePort();
    servers.push({
      port: replicaPort,
      child: startNode(dir, [
        "--port",
        String(replicaPort),
        ...common,
        "--replicaof",
        host,
        String(primaryPort),
      ]),
    });
    await until("the replica in sync", 15_000, async () =>
      (await redisCli(host, replicaPort, "info", "replication")).includes("master_link_status:up"),
    );
    for (let i = 0; i < 3; i++) {
      const port = await freePort();
      // Sentinel rewrites its config file, so each has its own.
      const conf = path.join(dir, `sentinel-${port}.conf`);
      await writeFile(
        conf,
        [
          `port ${port}`,
          `bind ${host}`,
          `sentinel monitor ${MASTER} ${host} ${primaryPort} 2`,
          `sentinel down-after-milliseconds ${MASTER} 1000`,
          `sentinel failover-timeout ${MASTER} 5000`,
          `sentinel parallel-syncs ${MASTER} 1`,
          "",
        ].join("\n"),
      );
      sentinels.push({ port, child: startNode(dir, [conf, "--sentinel"]) });
    }
    for (const s of sentinels)
      await until(`sentinel :${s.port} sees the replica and its peers`, 20_000, async () => {
        const info = await redisCli(host, s.port, "info", "sentinel");
        return /slaves=1,sentinels=3/.test(info);
      });
  } catch (error) {
    await stop();
    throw error;
  }
  const primary = async (): Promise<number> => {
    const live = sentinels.find((s) => s.child.exitCode === null) as RedisNode;
    const reply = await redisCli(host, live.port, "sentinel", "get-master-addr-by-name", MASTER);
    return Number(reply.split("\n")[1]);
  };
  return {
    target: {
      url: "redis://unused-with-sentinels:6379",
      sentinels: sentinels.map((s) => `${host}:${s.port}`),
      sentinelMaster: MASTER,
    },
    host,
    primary,
    async killPrimary() {
      const killed = await primary();
      await killNode(servers.find((n) => n.port === killed) as RedisNode);
      let promoted = killed;
      await until("the Sentinels' failover to the replica", 30_000, async () => {
        promoted = await primary();
        if (promoted === killed) return false;
        return (await redisCli(host, promoted, "info", "replication")).includes("role:master");
      });
      return { killed, promoted };
    },
    stop,
  };
}
