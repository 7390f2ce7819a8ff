/**
 * `overseer up` against real Postgres and Redis: migrates, starts the coordinator, the gateway
 * and a worker, prints the gateway URL and a working token, restarts a killed child, and on
 * SIGTERM drains and stops every child, exiting 0 with no process left behind.
 */
import { isProcessAlive } from "@overseer/process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClusterFixture } from "../support/cluster-fixture.ts";
import { startUp, type UpProcess } from "../support/up-process.ts";

describe("overseer up", () => {
  const cluster = new ClusterFixture();
  let up: UpProcess | undefined;

  beforeAll(() => cluster.setup());
  afterAll(async () => {
    if (up && up.child.exitCode === null) {
      up.child.kill("SIGKILL");
      for (const pids of up.childPids().values())
        for (const pid of pids) if (isProcessAlive(pid)) process.kill(pid, "SIGKILL");
    }
    await cluster.teardown();
  });

  it("runs the cluster, restarts a crashed worker, and drains on SIGTERM", async () => {
    up = startUp(["--workers", "1", "--port", "0", "--restart-delay-ms", "200"], cluster.env());
    const url = (await up.waitFor(/overseer up: gateway (http:\/\/\S+)/))[1] as string;
    const token = (await up.waitFor(/overseer up: token (ovr_\S+)/))[1] as string;
    const headers = { Authorization: `Bearer ${token}` };
    expect((await fetch(`${url}/readyz`, { headers })).status).toBe(200);

    // The worker registers once its sandbox probe passed.
    const deadline = Date.now() + 60_000;
    let workers: { pid: number }[] = [];
    while (workers.length === 0 && Date.now() < deadline) {
      workers = (
        (await (await fetch(`${url}/api/v1/workers`, { headers })).json()) as { workers: { pid: number }[] }
      ).workers;
      if (workers.length === 0) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const first = up.childPids().get("worker-1")?.[0];
    expect(workers.map((w) => w.pid)).toEqual([first]);

    // A crashed child is restarted (with backoff).
    process.kill(first as number, "SIGKILL");
    await up.waitFor(/overseer up: restarted \(1\) worker-1 pid \d+/);

    up.child.kill("SIGTERM");
    expect(await up.exited).toBe(0);
    expect(up.output()).toContain("overseer up: stopped");
    const pids = [...up.childPids().values()].flat();
    expect(pids.length).toBe(4);
    for (const pid of pids) expect(isProcessAlive(pid), `pid ${pid}`).toBe(false);
  });
});
