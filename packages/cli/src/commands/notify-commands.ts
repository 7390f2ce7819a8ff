import {
  type Delivery,
  DeliveryListSchema,
  RedeliveredSchema,
  SecretRotatedSchema,
  type Subscription,
  SubscriptionCreatedSchema,
  SubscriptionListSchema,
  SubscriptionRemovedSchema,
  SubscriptionTestedSchema,
} from "@overseer/api-contract";
import { onePositional, oneRowId, parseCommandArgs, requirePositive } from "../arg-parser.ts";
import { CommandFailed, EXIT_OK, UsageError } from "../cli-errors.ts";
import { type CliIo, formatTable, printList, queryString } from "../cli-io.ts";
import type { CliCommand } from "../command-registry.ts";
import { withGateway } from "../command-target.ts";
import { GatewayClient } from "../gateway-client.ts";

/**
 * `overseer notify add|list|remove|test|rotate|deliveries|redeliver` (README "Intake and
 * notifications"): signed webhook subscriptions and their deliveries, over the gateway's
 * `/api/v1/notifications/…` routes with `OVERSEER_URL` and `OVERSEER_TOKEN` (add, remove and
 * rotate need an admin token; test and redeliver operate; the lists read). `overseer notify TEXT`
 * still answers the pending question when TEXT is one argument or starts with another word.
 */

const enc = encodeURIComponent;
const SUBSCRIPTIONS = "/api/v1/notifications/subscriptions";
const DELIVERIES = "/api/v1/notifications/deliveries";

async function withClient(io: CliIo, body: (client: GatewayClient) => Promise<number>): Promise<number> {
  const client = GatewayClient.fromIo(io);
  return withGateway(() => body(client));
}

/** Where a subscription's notifications go: the receiver's URL, or `slack:<channel>`. */
function destination(s: Subscription): string {
  return s.url ?? (s.slack_channel ? `slack:${s.slack_channel}` : s.channel);
}

function describeSubscription(s: Subscription): string {
  const project = s.project_id ?? "every project";
  const types = s.event_types.length > 0 ? s.event_types.join(",") : "every type";
  return `${s.id} → ${destination(s)} (${project}; ${types}; ${s.min_severity} and above)`;
}

const addUsage =
  "overseer notify add URL|--slack-channel CHANNEL_ID [--project P] [--event TYPE]... [--severity info|warning|critical] [--json]";

export const notifyAddCommand: CliCommand = {
  path: ["notify", "add"],
  summary:
    "subscribe a webhook receiver (prints its signing secret once) or a Slack channel to notifications (admin token)",
  usage: addUsage,
  async run(args, io) {
    const { values, positionals } = parseCommandArgs(
      args,
      {
        project: { type: "string" },
        event: { type: "string", multiple: true },
        severity: { type: "string" },
        "slack-channel": { type: "string" },
        json: { type: "boolean" },
      },
      addUsage,
    );
    const slackChannel = values["slack-channel"];
    if (slackChannel !== undefined && positionals.length > 0)
      throw new UsageError(`Give a receiver's URL or --slack-channel, not both.\nUsage: ${addUsage}`);
    const target =
      slackChannel === undefined
        ? {
            url: onePositional(
              positionals,
              "Give the receiver's URL, or --slack-channel CHANNEL_ID.",
              addUsage,
            ),
          }
        : { slack_channel: slackChannel };
    return withClient(io, async (client) => {
      const body = {
        ...target,
        ...(values.project ? { project_id: values.project } : {}),
        ...(values.event ? { event_types: values.event } : {}),
        ...(values.severity ? { min_severity: values.severity } : {}),
      };
      const r = await client.post(SUBSCRIPTIONS, body, SubscriptionCreatedSchema);
      if (values.json) {
        io.out(JSON.stringify(r, null, 2));
        return EXIT_OK;
      }
      io.out(`added ${describeSubscription(r.subscription)}`);
      if (r.secret !== null) io.out(`signing secret (shown once; give it to the receiver): ${r.secret}`);
      else
        io.out(
          "Slack posts go through the coordinator's OVERSEER_SLACK_BOT_TOKEN; invite the bot to the channel.",
        );
      return EXIT_OK;
    });
  },
};

const listUsage = "overseer notify list [--project P] [--json]";

export const notifyListCommand: CliCommand = {
  path: ["notify", "list"],
  summary: "list notification subscriptions (never their secrets)",
  usage: listUsage,
  async run(args, io) {
    const { values } = parseCommandArgs(
      args,
      { project: { type: "string" }, json: { type: "boolean" } },
      listUsage,
      false,
    );
    return withClient(io, async (client) => {
      const query = values.project ? `?project_id=${enc(values.project)}` : "";
      const { subscriptions } = await client.get(`${SUBSCRIPTIONS}${query}`, SubscriptionListSchema);
      if (values.json) {
        io.out(JSON.stringify(subscriptions, null, 2));
        return EXIT_OK;
      }
      if (subscriptions.length === 0) {
        io.out("no subscription; add one with overseer notify add URL");
        return EXIT_OK;
      }
      const rows = subscriptions.map((s) => [
        s.id,
        s.project_id ?? "*",
        s.event_types.length > 0 ? s.event_types.join(",") : "*",
        s.min_severity,
        destination(s),
        String(s.secrets.length),
      ]);
      for (const line of formatTable(["ID", "PROJECT", "TYPES", "SEVERITY", "TO", "SECRETS"], rows))
        io.out(line);
      return EXIT_OK;
    });
  },
};

const removeUsage = "overseer notify remove ID";

export const notifyRemoveCommand: CliCommand = {
  path: ["notify", "remove"],
  summary: "remove a subscription and its deliveries (admin token)",
  usage: removeUsage,
  async run(args, io) {
    const { positionals } = parseCommandArgs(args, {}, removeUsage);
    const id = onePositional(
      positionals,
      "Give one subscription id (see overseer notify list).",
      removeUsage,
    );
    return withClient(io, async (client) => {
      await client.delete(`${SUBSCRIPTIONS}/${enc(id)}`, SubscriptionRemovedSchema);
      io.out(`removed subscription ${id}`);
      return EXIT_OK;
    });
  },
};

const testUsage = "overseer notify test ID";

export const notifyTestCommand: CliCommand = {
  path: ["notify", "test"],
  summary: "send a signed test message to a subscription now (exit 1 when the receiver refuses it)",
  usage: testUsage,
  async run(args, io) {
    const { positionals } = parseCommandArgs(args, {}, testUsage);
    const id = onePositional(positionals, "Give one subscription id (see overseer notify list).", testUsage);
    return withClient(io, async (client) => {
      const r = await client.post(`${SUBSCRIPTIONS}/${enc(id)}/test`, {}, SubscriptionTestedSchema);
      if (!r.ok)
        throw new CommandFailed(
          `test message ${r.webhook_id} to ${id} failed: ${r.error ?? "no answer"}. Check the receiver's URL and that it verifies with the secret overseer notify add or rotate printed.`,
        );
      io.out(`test message ${r.webhook_id} delivered to ${id}: HTTP ${r.status}`);
      return EXIT_OK;
    });
  },
};

const rotateUsage = "overseer notify rotate ID [--overlap SECONDS] [--json]";

export const notifyRotateCommand: CliCommand = {
  path: ["notify", "rotate"],
  summary:
    "rotate a subscription's signing secret; the old one signs too until the overlap ends (admin token)",
  usage: rotateUsage,
  async run(args, io) {
    const { values, positionals } = parseCommandArgs(
      args,
      { overlap: { type: "string" }, json: { type: "boolean" } },
      rotateUsage,
    );
    const id = onePositional(
      positionals,
      "Give one subscription id (see overseer notify list).",
      rotateUsage,
    );
    const overlap = values.overlap === "0" ? 0 : requirePositive(values.overlap, "--overlap");
    return withClient(io, async (client) => {
      const body = overlap === undefined ? {} : { overlap_seconds: overlap };
      const r = await client.post(`${SUBSCRIPTIONS}/${enc(id)}/rotate-secret`, body, SecretRotatedSchema);
      if (values.json) {
        io.out(JSON.stringify(r, null, 2));
        return EXIT_OK;
      }
      io.out(`new signing secret of ${id} (shown once): ${r.secret}`);
      io.out(
        r.previous_expire_at
          ? `the previous secret keeps signing beside it until ${r.previous_expire_at}`
          : "no previous secret signs any more",
      );
      return EXIT_OK;
    });
  },
};

const deliveriesUsage =
  "overseer notify deliveries [--project P] [--subscription ID] [--status pending|delivered|dead] [--limit N] [--json]";

export const notifyDeliveriesCommand: CliCommand = {
  path: ["notify", "deliveries"],
  summary: "list notification deliveries, newest first: status, attempts, dead letters",
  usage: deliveriesUsage,
  async run(args, io) {
    const { values } = parseCommandArgs(
      args,
      {
        project: { type: "string" },
        subscription: { type: "string" },
        status: { type: "string" },
        limit: { type: "string" },
        json: { type: "boolean" },
      },
      deliveriesUsage,
      false,
    );
    const query = queryString({
      project_id: values.project,
      subscription_id: values.subscription,
      status: values.status,
      limit: requirePositive(values.limit, "--limit"),
    });
    return withClient(io, async (client) => {
      const { deliveries } = await client.get(`${DELIVERIES}${query}`, DeliveryListSchema);
      printList(io, deliveries, {
        json: values.json,
        none: "no delivery",
        headers: ["ID", "STATUS", "ATTEMPTS", "TYPE", "PROJECT", "SUBSCRIPTION", "LAST ERROR"],
        row: deliveryRow,
      });
      return EXIT_OK;
    });
  },
};

function deliveryRow(d: Delivery): string[] {
  return [
    d.id,
    d.status === "dead" ? "dead letter" : d.status,
    String(d.attempts),
    d.type,
    d.project_id,
    d.subscription_id,
    d.last_error ?? "",
  ];
}

const redeliverUsage = "overseer notify redeliver DELIVERY_ID";

export const notifyRedeliverCommand: CliCommand = {
  path: ["notify", "redeliver"],
  summary: "send a dead letter again, once however often asked (operate token)",
  usage: redeliverUsage,
  async run(args, io) {
    const { positionals } = parseCommandArgs(args, {}, redeliverUsage);
    const id = oneRowId(positionals, "delivery", "overseer notify deliveries --status dead", redeliverUsage);
    return withClient(io, async (client) => {
      const r = await client.post(`${DELIVERIES}/${enc(id)}/redeliver`, {}, RedeliveredSchema);
      io.out(
        r.redelivered
          ? `delivery ${id} is pending again; it is sent once more with webhook-id ${r.delivery.webhook_id}`
          : `delivery ${id} is ${r.delivery.status}, not a dead letter; nothing changed`,
      );
      return EXIT_OK;
    });
  },
};

export const notifyCommands: CliCommand[] = [
  notifyAddCommand,
  notifyListCommand,
  notifyRemoveCommand,
  notifyTestCommand,
  notifyRotateCommand,
  notifyDeliveriesCommand,
  notifyRedeliverCommand,
];
