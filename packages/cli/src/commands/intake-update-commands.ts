import {
  type TrackerUpdate,
  TrackerUpdateListSchema,
  TrackerUpdateRedeliveredSchema,
} from "@overseer/api-contract";
import { oneRowId, parseCommandArgs, requirePositive } from "../arg-parser.ts";
import { EXIT_OK } from "../cli-errors.ts";
import { printList, queryString } from "../cli-io.ts";
import type { CliCommand } from "../command-registry.ts";
import { withGateway } from "../command-target.ts";
import { GatewayClient } from "../gateway-client.ts";

/**
 * `overseer intake updates|redeliver` (README "Intake and notifications", two-way status): what
 * Overseer wrote back to intake items' issues, with dead letters, over `/api/v1/intake/updates`
 * (the list reads; redeliver needs an operate token). Mirrors `overseer notify deliveries|redeliver`.
 */

const UPDATES = "/api/v1/intake/updates";

const updatesUsage =
  "overseer intake updates [--project P] [--source ID] [--status pending|delivered|dead] [--limit N] [--json]";

export const intakeUpdatesCommand: CliCommand = {
  path: ["intake", "updates"],
  summary:
    "list tracker updates (comments, states, labels written back), newest first: status, attempts, dead letters",
  usage: updatesUsage,
  async run(args, io) {
    const { values } = parseCommandArgs(
      args,
      {
        project: { type: "string" },
        source: { type: "string" },
        status: { type: "string" },
        limit: { type: "string" },
        json: { type: "boolean" },
      },
      updatesUsage,
      false,
    );
    const query = queryString({
      project_id: values.project,
      source_id: values.source,
      status: values.status,
      limit: requirePositive(values.limit, "--limit"),
    });
    const client = GatewayClient.fromIo(io);
    return withGateway(async () => {
      const { updates } = await client.get(`${UPDATES}${query}`, TrackerUpdateListSchema);
      printList(io, updates, {
        json: values.json,
        none: "no tracker update",
        headers: ["ID", "STATUS", "ATTEMPTS", "MOMENT", "ISSUE", "TASK", "PROJECT", "LAST ERROR"],
        row: updateRow,
      });
      return EXIT_OK;
    });
  },
};

function updateRow(u: TrackerUpdate): string[] {
  return [
    u.id,
    u.status === "dead" ? "dead letter" : u.status,
    String(u.attempts),
    u.moment,
    `${u.kind ?? "?"} ${u.issue_id}`,
    u.task_id,
    u.project_id,
    u.last_error ?? "",
  ];
}

const redeliverUsage = "overseer intake redeliver UPDATE_ID";

export const intakeRedeliverCommand: CliCommand = {
  path: ["intake", "redeliver"],
  summary: "write a dead tracker update again, once however often asked (operate token)",
  usage: redeliverUsage,
  async run(args, io) {
    const { positionals } = parseCommandArgs(args, {}, redeliverUsage);
    const id = oneRowId(
      positionals,
      "tracker update",
      "overseer intake updates --status dead",
      redeliverUsage,
    );
    const client = GatewayClient.fromIo(io);
    return withGateway(async () => {
      const r = await client.post(
        `${UPDATES}/${encodeURIComponent(id)}/redeliver`,
        {},
        TrackerUpdateRedeliveredSchema,
      );
      io.out(
        r.redelivered
          ? `tracker update ${id} (${r.update.moment} on ${r.update.kind ?? "the tracker"} issue ${r.update.issue_id}) is pending again; its comment is found by its marker, not posted twice`
          : `tracker update ${id} is ${r.update.status}, not a dead letter; nothing changed`,
      );
      return EXIT_OK;
    });
  },
};

export const intakeUpdateCommands: CliCommand[] = [intakeUpdatesCommand, intakeRedeliverCommand];
