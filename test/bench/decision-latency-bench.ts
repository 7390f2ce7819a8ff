/**
 * "Needs you" → work resumes: the time from an operator's HTTP resolve of a pending decision
 * card to the spawn of the next agent process for that item, through the real gateway,
 * coordinator, queue and a sandboxed worker.
 */
import { createApiToken } from "@overseer/db";
import { startGatewayProcess } from "../support/gateway-process.ts";
import type { ServiceProcess } from "../support/service-process.ts";
import { waitForState } from "../support/wait-for.ts";
import { benchCluster } from "./bench-cluster.ts";
import { type Percentiles, percentiles } from "./stats.ts";

export interface DecisionLatencyResult {
  decisions: number;
  /** p50 of each stage: resolve sent → run claimed → job enqueued → picked by a worker → spawned. */
  stagesP50Ms: Record<string, number>;
  resolveToSpawnMs: Percentiles;
  httpResolveMs: Percentiles;
}

export async function benchDecisionLatency(decisions = 10): Promise<DecisionLatencyResult> {
  const cluster = await benchCluster();
  const processes: ServiceProcess[] = [];
  try {
    await cluster.startCoordinator();
    await cluster.startWorker(2);
    const ids = Array.from({ length: decisions }, (_, i) => `decide-${i}`);
    for (const id of ids) {
      await cluster.addProject({
        id,
        tasks: [
          {
            id: "S00-001",
            title: "Needs a decision",
            scope: ["docs/**"],
            body: '```overseer-fake\nexecute: ask "Which engine?" postgres:PostgreSQL sqlite:SQLite\nexecute#2: write docs/engine.md "postgres"; submit "Record the engine"\n```',
          },
        ],
      });
    }
    for (const id of ids) {
      await waitForState(
        cluster.scratch.db,
        cluster.scratch.notifications,
        id,
        (s) => [...s.decisions.values()].some((d) => d.status === "pending"),
        120_000,
      );
    }
    const gateway = await startGatewayProcess(cluster.env({ LOG_LEVEL: "info" }));
    processes.push(gateway.service);
    const { token } = await createApiToken(cluster.scratch.db, { name: "bench", scope: "operate" });
    const sentAt = new Map<string, number>();
    const http: number[] = [];
    for (const id of ids) {
      const t0 = Date.now();
      const started = performance.now();
      const res = await fetch(`${gateway.url}/api/projects/${id}/decisions/decision-S00-001.R1/resolve`, {
        method: "POST",
        headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
        body: JSON.stringify({ option_id: "postgres", note: "bench" }),
      });
      http.push(performance.now() - started);
      if (!res.ok) throw new Error(`resolve failed: HTTP ${res.status} ${await res.text()}`);
      sentAt.set(id, t0);
      // Measure on an idle cluster: this item's whole chain (resolver, review, original)
      // finishes before the next decision is resolved, so no run waits for a free slot.
      await waitForState(
        cluster.scratch.db,
        cluster.scratch.notifications,
        id,
        (s) => s.tasks.get("S00-001")?.status === "done",
        120_000,
      );
    }
    // Let the resolver runs report so their spawn times are stored.
    for (const id of ids) {
      await waitForState(
        cluster.scratch.db,
        cluster.scratch.notifications,
        id,
        (s) => s.tasks.get("S00-001.R1")?.status !== "in_progress",
        120_000,
      );
    }
    const rows = await cluster.scratch.db
      .selectFrom("runs")
      .select(["project_id", "timing", "created_at"])
      .where("task_id", "=", "S00-001.R1")
      .where("action", "=", "resolve")
      .execute();
    const latencies = rows.map(
      (r) =>
        ((r.timing as { spawnedAt?: number }).spawnedAt ?? Number.NaN) -
        (sentAt.get(r.project_id) ?? Number.NaN),
    );
    type Milestones = { enqueuedAt: number; pickedAt: number; spawnedAt: number };
    const stage = (f: (r: (typeof rows)[number], t: Milestones) => number) =>
      percentiles(rows.map((r) => f(r, r.timing as unknown as Milestones))).p50;
    const stagesP50Ms = {
      sentToClaimed: stage((r) => r.created_at.getTime() - (sentAt.get(r.project_id) ?? Number.NaN)),
      claimedToEnqueued: stage((r, t) => t.enqueuedAt - r.created_at.getTime()),
      enqueuedToPicked: stage((_r, t) => t.pickedAt - t.enqueuedAt),
      pickedToSpawned: stage((_r, t) => t.spawnedAt - t.pickedAt),
    };
    return {
      decisions,
      stagesP50Ms,
      resolveToSpawnMs: percentiles(latencies),
      httpResolveMs: percentiles(http),
    };
  } finally {
    await Promise.all(processes.map((p) => p.kill("SIGTERM")));
    await cluster.teardown();
  }
}
