/**
 * Issue 18 item 5, end to end: a run stopped mid-way keeps what it spent. A real cluster
 * (coordinator, worker, bwrap, Postgres, Redis) runs the fake harness as a Claude-shaped CLI: it
 * prints an `assistant` event with its message's usage, then works on until it is stopped.
 */
import { getRun } from "@overseer/db";
import { TransitionApplier } from "@overseer/transitions";
import { describe, expect, it } from "vitest";
import { ClusterFixture, scriptedTask, useTestResources } from "../support/cluster-fixture.ts";
import { waitFor } from "../support/wait-for.ts";

const resources = useTestResources();

/** The fake harness's `print` step of one Claude stream-json assistant event. */
function printAssistant(id: string, input: number, output: number): string {
  const event = {
    type: "assistant",
    message: { id, usage: { input_tokens: input, cache_read_input_tokens: 0, output_tokens: output } },
  };
  return `print "${JSON.stringify(event).replace(/"/g, '\\"')}"`;
}

async function runningRun(cluster: ClusterFixture, projectId: string): Promise<string> {
  return waitFor(
    `a running run of ${projectId} with usage`,
    async () => {
      const run = await cluster.scratch.db
        .selectFrom("runs")
        .select(["id", "tokens_in"])
        .where("project_id", "=", projectId)
        .where("status", "=", "running")
        .executeTakeFirst();
      return run && Number(run.tokens_in) > 0 ? run.id : undefined;
    },
    60_000,
  );
}

describe("a run stopped mid-way keeps its usage", () => {
  it("cancelled while its CLI works: the run and the project keep the tokens it reported", async () => {
    const cluster = await resources.cluster();
    await cluster.startCoordinator();
    await cluster.startWorker(1);
    await cluster.addProject({
      id: "cancel-spend",
      runnerConfig: ClusterFixture.fakeRunnerConfig({ agent: "claude", model: "claude-sonnet-4-5" }),
      tasks: [
        scriptedTask("S00-001", `execute: ${printAssistant("msg_1", 1234, 7)}; sleep 60; submit "never"`),
      ],
    });
    // The usage reached Postgres while the run was still going (the worker reports as it goes).
    const runId = await runningRun(cluster, "cancel-spend");
    await new TransitionApplier({ db: cluster.scratch.db, live: cluster.live }).apply("cancel-spend", {
      kind: "cancel",
      taskId: "S00-001",
      by: "test",
    });
    const run = await waitFor(
      "the run cancelled",
      async () => {
        const row = await getRun(cluster.scratch.db, runId);
        return row?.status === "cancelled" ? row : undefined;
      },
      30_000,
    );
    expect(run).toMatchObject({
      tokens_in: "1234",
      tokens_out: "7",
      usage_source: "claude stream-json assistant messages",
    });
    // Priced by the price table (claude-sonnet-4-5: $3 in, $15 out per million tokens).
    expect(run.cost_usd).toBeCloseTo((1234 * 3 + 7 * 15) / 1_000_000, 12);
    const project = await cluster.scratch.db
      .selectFrom("projects")
      .select(["tokens_in", "cost_usd"])
      .where("id", "=", "cancel-spend")
      .executeTakeFirstOrThrow();
    expect(project.tokens_in).toBe("1234");
  }, 120_000);

  it("its worker killed mid-run: the tokens reported before the kill stay counted", async () => {
    const cluster = await resources.cluster();
    await cluster.startCoordinator();
    const doomed = resources.service("worker", cluster.env({ OVERSEER_WORKER_ID: "doomed" }));
    await cluster.addProject({
      id: "kill-spend",
      runnerConfig: ClusterFixture.fakeRunnerConfig({ agent: "claude", attempts: 1 }),
      tasks: [scriptedTask("S00-001", `execute: ${printAssistant("msg_1", 5000, 40)}; sleep 60`)],
    });
    const runId = await runningRun(cluster, "kill-spend");
    await doomed.kill("SIGKILL");
    const run = await getRun(cluster.scratch.db, runId);
    // No price for a model the config does not name: unpriced tokens, never $0 of spend.
    expect(run).toMatchObject({ tokens_in: "5000", tokens_out: "40", tokens_unpriced: "5040", cost_usd: 0 });
  }, 120_000);
});
