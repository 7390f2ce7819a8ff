import { type Worker, WorkerDrainSchema, WorkerListSchema } from "@overseer/api-contract";
import { onePositional, parseCommandArgs } from "../arg-parser.ts";
import { EXIT_OK } from "../cli-errors.ts";
import { type CliIo, formatTable } from "../cli-io.ts";
import type { CliCommand } from "../command-registry.ts";
import { withGateway } from "../command-target.ts";
import { GatewayClient } from "../gateway-client.ts";

/**
 * `overseer workers` and `overseer workers drain ID` (README "Worker pools"): the live workers
 * from their heartbeats (`GET /api/v1/workers`) with their pools, slots, running runs and
 * whether they drain; a drain asked through `POST /api/v1/workers/{id}/drain` (admin token).
 */

const WORKERS = "/api/v1/workers";

async function withClient(io: CliIo, body: (client: GatewayClient) => Promise<number>): Promise<number> {
  const client = GatewayClient.fromIo(io);
  return withGateway(() => body(client));
}

function runningText(w: Worker): string {
  if (w.current_jobs.length === 0) return "–";
  return w.current_jobs.map((j) => `${j.project_id}/${j.task_id} ${j.action}`).join(", ");
}

const listUsage = "overseer workers [--pool POOL] [--json]";

export const workersListCommand: CliCommand = {
  path: ["workers"],
  summary: "list live workers: pools, slots in use, running runs, draining",
  usage: listUsage,
  async run(args, io) {
    const { values } = parseCommandArgs(
      args,
      { pool: { type: "string" }, json: { type: "boolean" } },
      listUsage,
      false,
    );
    return withClient(io, async (client) => {
      const { workers } = await client.get(WORKERS, WorkerListSchema);
      const shown = values.pool ? workers.filter((w) => w.pools.includes(values.pool as string)) : workers;
      if (values.json) {
        io.out(JSON.stringify(shown, null, 2));
        return EXIT_OK;
      }
      if (shown.length === 0) {
        io.out(values.pool ? `no live worker in pool ${values.pool}` : "no live worker");
        return EXIT_OK;
      }
      const rows = shown.map((w) => [
        w.id,
        w.pools.join(","),
        `${w.current_jobs.length}/${w.slots}`,
        w.draining ? "draining" : "taking jobs",
        `${w.sandbox}${w.unsafe ? " (UNSAFE)" : ""}`,
        runningText(w),
      ]);
      for (const line of formatTable(["ID", "POOLS", "SLOTS", "STATE", "SANDBOX", "RUNNING"], rows))
        io.out(line);
      return EXIT_OK;
    });
  },
};

const drainUsage = "overseer workers drain ID";

export const workersDrainCommand: CliCommand = {
  path: ["workers", "drain"],
  summary:
    "drain one worker: no new job, its runs finish (or go back to the queue at its drain time), then it stops (admin token)",
  usage: drainUsage,
  async run(args, io) {
    const { positionals } = parseCommandArgs(args, {}, drainUsage);
    const id = onePositional(positionals, "Give one worker id (see overseer workers).", drainUsage);
    return withClient(io, async (client) => {
      const r = await client.post(`${WORKERS}/${encodeURIComponent(id)}/drain`, {}, WorkerDrainSchema);
      const running = r.worker.current_jobs.length;
      io.out(
        `asked ${id} (pools ${r.worker.pools.join(",")}) to drain: it takes no new job from its next heartbeat; ${running} running run(s) finish, then it stops`,
      );
      return EXIT_OK;
    });
  },
};

export const workersCommands: CliCommand[] = [workersListCommand, workersDrainCommand];
