import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { withDatabase } from "@overseer/db";
import { testRedisUrl } from "@overseer/test-support";
import type { TestProject } from "vitest/node";
import { dropDemoState } from "../demo/demo-state.ts";
import { freePort } from "../support/private-redis.ts";
import { REPO_ROOT, spawnNode } from "../support/service-process.ts";

/**
 * Starts `npm run demo` (coordinator, two workers, gateway, three demo projects and a demo mission) on a free
 * port with a database, Redis prefix and data directory of its own, hands the gateway URL
 * and the printed operator token to the tests, and removes all of it afterwards.
 */
declare module "vitest" {
  export interface ProvidedContext {
    gatewayUrl: string;
    operatorToken: string;
    /** The demo's data directory (removed afterwards): tests put their own repositories here. */
    dataDir: string;
    /** The demo's database (dropped afterwards): tests seed what no route writes (a dead tracker update). */
    databaseUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const id = randomBytes(4).toString("hex");
  const base = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/overseer";
  const dbUrl = withDatabase(base, `overseer_browser_${id}`);
  const prefix = `overseer-browser-${id}`;
  const dataDir = await mkdtemp(path.join(tmpdir(), "overseer-browser-"));
  const port = await freePort();
  // The demo inherits this environment (DATABASE_URL, REDIS_URL, sandbox settings…).
  const { child, output, exited } = spawnNode(
    [
      "--import",
      "tsx",
      path.join(REPO_ROOT, "test/demo/demo-main.ts"),
      "--port",
      String(port),
      "--timeout-seconds",
      "900",
    ],
    {
      ...(process.env as Record<string, string>),
      DEMO_DATABASE_URL: dbUrl,
      DEMO_QUEUE_PREFIX: prefix,
      OVERSEER_DATA_DIR: dataDir,
      LOG_LEVEL: "warn",
    },
  );

  const deadline = Date.now() + 240_000;
  let token = "";
  while (!token) {
    token = /Operator token: (\S+)/.exec(output())?.[1] ?? "";
    if (token) break;
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`the demo cluster did not start:\n${output().slice(-4000)}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  const url = `http://127.0.0.1:${port}`;
  // The gateway process prints nothing when it is ready: wait until it answers.
  for (;;) {
    const ok = await fetch(`${url}/healthz`, { headers: { Authorization: `Bearer ${token}` } })
      .then((r) => r.ok)
      .catch(() => false);
    if (ok) break;
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`the demo gateway did not answer on ${url}:\n${output().slice(-4000)}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  project.provide("gatewayUrl", url);
  project.provide("operatorToken", token);
  project.provide("dataDir", dataDir);
  project.provide("databaseUrl", dbUrl);

  return async () => {
    child.kill("SIGINT");
    const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
    await exited;
    clearTimeout(timer);
    await dropDemoState(dbUrl, testRedisUrl(), prefix);
    await rm(dataDir, { recursive: true, force: true });
  };
}
