import {
  AnswerResultSchema,
  MessageResultSchema,
  ProjectListSchema,
  ProjectStatusSchema,
  ResolveResultSchema,
  StaleErrorSchema,
  TaskChangeSchema,
  TokenListSchema,
  TokenRevokedSchema,
} from "@overseer/api-contract";
import { onePositional, parseCommandArgs } from "../arg-parser.ts";
import { CommandFailed, EXIT_OK, UsageError } from "../cli-errors.ts";
import { type CliIo, formatTable } from "../cli-io.ts";
import type { CliCommand } from "../command-registry.ts";
import { selectGatewayProject, withGateway } from "../command-target.ts";
import { GatewayClient, GatewayHttpError } from "../gateway-client.ts";
import { logsCommand } from "./logs-command.ts";
import { onlyProject } from "./project-selector.ts";

/**
 * Operator verbs (docs/http-api.md), over the gateway's HTTP API with `OVERSEER_URL` and
 * `OVERSEER_TOKEN`: the same routes Argus-style operator skills use, so the CLI and those
 * skills see and change exactly the same things.
 *
 * - Without `--project`, the only project is used; with none or several, exit 2 (`status`
 *   then prints every project).
 * - Exit codes: 0 ok; 2 when the gateway refuses the input (HTTP 400/422) or the invocation
 *   is wrong; 1 for every other refusal (401/403/404/409/429…) or an unreachable gateway.
 */

const enc = encodeURIComponent;

/** Runs a verb body with the gateway client (operator verbs always go through the gateway). */
async function withClient(io: CliIo, body: (client: GatewayClient) => Promise<number>): Promise<number> {
  const client = GatewayClient.fromIo(io);
  return withGateway(() => body(client));
}

/** Runs a verb body with the client and its project (`--project P`, or the only one). */
async function withProject(
  io: CliIo,
  requested: string | undefined,
  body: (client: GatewayClient, project: string) => Promise<number>,
): Promise<number> {
  return withClient(io, async (client) => body(client, await selectGatewayProject(client, requested)));
}

function requireText(positionals: string[], what: string, usage: string): string {
  const text = positionals.join(" ").trim();
  if (!text) throw new UsageError(`Give the ${what}.\nUsage: ${usage}`);
  return text;
}

const statusUsage = "overseer status [--project P] [--json]   (alias: overseer --status)";

export const statusCommand: CliCommand = {
  path: ["status"],
  summary: "project status (every project without --project): counts, running runs, unanswered questions",
  usage: statusUsage,
  async run(args, io) {
    const { values } = parseCommandArgs(
      args,
      { project: { type: "string" }, json: { type: "boolean" } },
      statusUsage,
      false,
    );
    return withClient(io, async (client) => {
      // Without --project: every project, in id order (one status each; a JSON array).
      const ids = values.project
        ? [values.project]
        : (await client.get("/api/v1/projects", ProjectListSchema)).projects.map((p) => p.id);
      if (ids.length === 0) onlyProject([]);
      const statuses = [];
      for (const id of ids)
        statuses.push(await client.get(`/api/projects/${enc(id)}/status`, ProjectStatusSchema));
      if (values.json) io.out(JSON.stringify(values.project ? statuses[0] : statuses, null, 2));
      else io.out(statuses.map((status) => status.text).join("\n\n"));
      return EXIT_OK;
    });
  },
};

const notifyUsage = "overseer notify TEXT [--project P]   (alias: overseer --notify TEXT)";

export const notifyCommand: CliCommand = {
  path: ["notify"],
  summary: "answer the only pending question (refused when none or several are pending)",
  usage: notifyUsage,
  async run(args, io) {
    const { values, positionals } = parseCommandArgs(args, { project: { type: "string" } }, notifyUsage);
    const text = requireText(positionals, "message text", notifyUsage);
    return withProject(io, values.project, async (client, project) => {
      const r = await client.post(`/api/projects/${enc(project)}/message`, { text }, MessageResultSchema);
      io.out(
        `routed to ${r.decision_id} (item ${r.item_id}): resolved, resolution ${r.resolution_id}; ${r.item_id} is now ${r.task_status}`,
      );
      return EXIT_OK;
    });
  },
};

const answerUsage = "overseer answer ITEM TEXT [--project P]";

export const answerCommand: CliCommand = {
  path: ["answer"],
  summary: "answer a backlog item (resolves its pending card with the text)",
  usage: answerUsage,
  async run(args, io) {
    const { values, positionals } = parseCommandArgs(args, { project: { type: "string" } }, answerUsage);
    const [item, ...rest] = positionals;
    if (!item) throw new UsageError(`Give the item (task) id and the answer.\nUsage: ${answerUsage}`);
    const text = requireText(rest, "answer text", answerUsage);
    return withProject(io, values.project, async (client, project) => {
      const r = await client.post(
        `/api/projects/${enc(project)}/backlog/${enc(item)}/answer`,
        { text },
        AnswerResultSchema,
      );
      io.out(
        r.resolved && r.decision
          ? `answered ${item}: ${r.decision.id} resolved, resolution ${r.resolution_id}; ${item} is now ${r.task_status}`
          : `answer recorded for ${item} (no question was pending); ${item} is ${r.task_status}`,
      );
      return EXIT_OK;
    });
  },
};

const resolveUsage = "overseer resolve DECISION --option ID [--note TEXT] [--project P]";

export const resolveCommand: CliCommand = {
  path: ["resolve"],
  summary: "resolve a decision card with one of its options",
  usage: resolveUsage,
  async run(args, io) {
    const { values, positionals } = parseCommandArgs(
      args,
      { project: { type: "string" }, option: { type: "string" }, note: { type: "string" } },
      resolveUsage,
    );
    const given = onePositional(positionals, "Give one decision id and --option.", resolveUsage, {
      requiredFlagGiven: Boolean(values.option),
    });
    // `decision-<item>` is the card id; the item id alone is accepted too.
    const decision = given.startsWith("decision-") ? given : `decision-${given}`;
    return withProject(io, values.project, async (client, project) => {
      try {
        const r = await client.post(
          `/api/projects/${enc(project)}/decisions/${enc(decision)}/resolve`,
          { option_id: values.option, note: values.note ?? null },
          ResolveResultSchema,
        );
        const how = r.application_status === "already_applied" ? "was already resolved" : "resolved";
        io.out(`${decision} ${how} with option ${r.decision.selected_option}, resolution ${r.resolution_id}`);
        return EXIT_OK;
      } catch (error) {
        if (error instanceof GatewayHttpError && error.code === "stale") {
          const stale = StaleErrorSchema.safeParse(error.body);
          const held = stale.success ? stale.data.resolution : { selected_option: null, resolution_id: null };
          throw new CommandFailed(
            `${decision} was already resolved with option ${held.selected_option} (resolution ${held.resolution_id}); nothing changed.`,
          );
        }
        throw error;
      }
    });
  },
};

const releaseUsage = "overseer release-external RESOLVER --reason TEXT [--project P]";

export const releaseExternalCommand: CliCommand = {
  path: ["release-external"],
  summary: "make a resolver awaiting an external action runnable again",
  usage: releaseUsage,
  async run(args, io) {
    const { values, positionals } = parseCommandArgs(
      args,
      { project: { type: "string" }, reason: { type: "string" } },
      releaseUsage,
    );
    const resolver = onePositional(positionals, "Give one resolver id and --reason.", releaseUsage, {
      requiredFlagGiven: Boolean(values.reason?.trim()),
    });
    return withProject(io, values.project, async (client, project) => {
      const r = await client.post(
        `/api/v1/projects/${enc(project)}/tasks/${enc(resolver)}/release-external`,
        { reason: values.reason },
        TaskChangeSchema,
      );
      io.out(`released ${resolver}; it is now ${r.task.status}`);
      return EXIT_OK;
    });
  },
};

const tokenListUsage = "overseer token list [--json]";

export const tokenListCommand: CliCommand = {
  path: ["token", "list"],
  summary: "list API tokens (admin token; secrets are never shown)",
  usage: tokenListUsage,
  async run(args, io) {
    const { values } = parseCommandArgs(args, { json: { type: "boolean" } }, tokenListUsage, false);
    return withClient(io, async (client) => {
      const { tokens } = await client.get("/api/v1/tokens", TokenListSchema);
      if (values.json) {
        io.out(JSON.stringify(tokens, null, 2));
        return EXIT_OK;
      }
      const rows = tokens.map((t) => [
        t.id,
        t.name,
        t.scope,
        t.created_at,
        t.last_used_at ?? "never",
        t.revoked_at ? `revoked ${t.revoked_at}` : "active",
      ]);
      for (const line of formatTable(["ID", "NAME", "SCOPE", "CREATED", "LAST USED", "STATE"], rows))
        io.out(line);
      return EXIT_OK;
    });
  },
};

const tokenRevokeUsage = "overseer token revoke ID";

export const tokenRevokeCommand: CliCommand = {
  path: ["token", "revoke"],
  summary: "revoke an API token (admin token)",
  usage: tokenRevokeUsage,
  async run(args, io) {
    const { positionals } = parseCommandArgs(args, {}, tokenRevokeUsage);
    const id = onePositional(positionals, "Give one token id (see overseer token list).", tokenRevokeUsage);
    return withClient(io, async (client) => {
      await client.delete(`/api/v1/tokens/${enc(id)}`, TokenRevokedSchema);
      io.out(`revoked token ${id}`);
      return EXIT_OK;
    });
  },
};

export const operatorCommands: CliCommand[] = [
  statusCommand,
  notifyCommand,
  answerCommand,
  resolveCommand,
  releaseExternalCommand,
  logsCommand,
  tokenListCommand,
  tokenRevokeCommand,
];
