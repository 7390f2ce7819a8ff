import {
  IntakeDryRunSchema,
  type IntakeSource,
  IntakeSourceCreatedSchema,
  IntakeSourceListSchema,
  IntakeSourceRemovedSchema,
} from "@overseer/api-contract";
import { onePositional, parseCommandArgs } from "../arg-parser.ts";
import { EXIT_OK, UsageError } from "../cli-errors.ts";
import { type CliIo, formatTable } from "../cli-io.ts";
import type { CliCommand } from "../command-registry.ts";
import { selectGatewayProject, withGateway } from "../command-target.ts";
import { GatewayClient } from "../gateway-client.ts";

/**
 * `overseer intake add|list|remove|test` (README "Intake and notifications"): a project's tracker
 * sources over the gateway's `/api/v1/projects/{id}/intake/sources…` routes with `OVERSEER_URL`
 * and `OVERSEER_TOKEN` (add and remove need an admin token, test operate, list reads). Tokens and
 * webhook secrets are never given here: only the NAMES of the host environment variables that
 * hold them on the coordinator and gateway.
 */

const enc = encodeURIComponent;
const sources = (project: string) => `/api/v1/projects/${enc(project)}/intake/sources`;

async function withProject(
  io: CliIo,
  requested: string | undefined,
  body: (client: GatewayClient, project: string) => Promise<number>,
): Promise<number> {
  const client = GatewayClient.fromIo(io);
  return withGateway(async () => body(client, await selectGatewayProject(client, requested)));
}

function describeSource(s: IntakeSource): string {
  const q = s.query as { container?: string; labels?: string[]; assignee?: string };
  const filters = [
    ...(q.labels ?? []).map((l) => `label ${l}`),
    ...(q.assignee ? [`assignee ${q.assignee}`] : []),
  ];
  return `${s.id}: ${s.kind} ${q.container ?? "?"}${filters.length > 0 ? ` (${filters.join(", ")})` : ""}`;
}

const addUsage =
  "overseer intake add KIND CONTAINER --token-env NAME [--project P] [--label L]... [--assignee A] [--state S]... [--as task|mission] [--webhook-secret-env NAME] [--base-url URL] [--config JSON] [--json]";

const intakeAddCommand: CliCommand = {
  path: ["intake", "add"],
  summary:
    "subscribe a project to a tracker query (KIND: github, gitlab, linear, jira; CONTAINER: owner/repo, project path, team key, project key) (admin token)",
  usage: addUsage,
  async run(args, io) {
    const { values, positionals } = parseCommandArgs(
      args,
      {
        project: { type: "string" },
        label: { type: "string", multiple: true },
        assignee: { type: "string" },
        state: { type: "string", multiple: true },
        as: { type: "string" },
        "token-env": { type: "string" },
        "webhook-secret-env": { type: "string" },
        "base-url": { type: "string" },
        config: { type: "string" },
        json: { type: "boolean" },
      },
      addUsage,
    );
    const [kind, container, ...extra] = positionals;
    if (kind === undefined || container === undefined || extra.length > 0)
      throw new UsageError(`Give the tracker's KIND and the CONTAINER to read.\nUsage: ${addUsage}`);
    if (!values["token-env"])
      throw new UsageError(
        `Give --token-env NAME: the environment variable on the coordinator and gateway hosts that holds the ${kind} token (never the token itself).\nUsage: ${addUsage}`,
      );
    let config: Record<string, unknown> = {};
    if (values.config !== undefined) {
      try {
        config = JSON.parse(values.config) as Record<string, unknown>;
      } catch {
        throw new UsageError(
          `--config must be a JSON object, like '{"role":"backend"}'.\nUsage: ${addUsage}`,
        );
      }
    }
    if (values.as !== undefined) config = { ...config, as: values.as };
    const body = {
      kind,
      query: {
        container,
        ...(values.label ? { labels: values.label } : {}),
        ...(values.assignee ? { assignee: values.assignee } : {}),
        ...(values.state ? { states: values.state } : {}),
      },
      ...(Object.keys(config).length > 0 ? { config } : {}),
      token_env: values["token-env"],
      ...(values["webhook-secret-env"] ? { webhook_secret_env: values["webhook-secret-env"] } : {}),
      ...(values["base-url"] ? { base_url: values["base-url"] } : {}),
    };
    return withProject(io, values.project, async (client, project) => {
      const { source } = await client.post(sources(project), body, IntakeSourceCreatedSchema);
      if (values.json) {
        io.out(JSON.stringify(source, null, 2));
        return EXIT_OK;
      }
      io.out(`added ${describeSource(source)}`);
      io.out(
        `the coordinator polls it with ${source.token_env}; try it now with overseer intake test ${source.id}`,
      );
      if (source.webhook_secret_env !== null)
        io.out(
          `webhook URL: <gateway URL>${source.webhook_path} (secret: the value of ${source.webhook_secret_env} on the gateway host)`,
        );
      return EXIT_OK;
    });
  },
};

const listUsage = "overseer intake list [--project P] [--json]";

const intakeListCommand: CliCommand = {
  path: ["intake", "list"],
  summary: "list a project's intake sources: items taken, last poll, last error",
  usage: listUsage,
  async run(args, io) {
    const { values } = parseCommandArgs(
      args,
      { project: { type: "string" }, json: { type: "boolean" } },
      listUsage,
      false,
    );
    return withProject(io, values.project, async (client, project) => {
      const list = await client.get(sources(project), IntakeSourceListSchema);
      if (values.json) {
        io.out(JSON.stringify(list.sources, null, 2));
        return EXIT_OK;
      }
      if (list.sources.length === 0) {
        io.out(
          `no intake source in ${project}; add one with overseer intake add KIND CONTAINER --token-env NAME`,
        );
        return EXIT_OK;
      }
      const rows = list.sources.map((s) => [
        s.id,
        s.kind,
        String((s.query as { container?: string }).container ?? ""),
        String(s.items_taken),
        s.polled_at ?? "never",
        s.last_error ?? "",
      ]);
      for (const line of formatTable(["ID", "KIND", "CONTAINER", "TAKEN", "LAST POLL", "LAST ERROR"], rows))
        io.out(line);
      return EXIT_OK;
    });
  },
};

const removeUsage = "overseer intake remove ID [--project P]";

const intakeRemoveCommand: CliCommand = {
  path: ["intake", "remove"],
  summary: "remove an intake source (the tasks it made stay) (admin token)",
  usage: removeUsage,
  async run(args, io) {
    const { values, positionals } = parseCommandArgs(args, { project: { type: "string" } }, removeUsage);
    const id = onePositional(positionals, "Give the source's id (from overseer intake list).", removeUsage);
    return withProject(io, values.project, async (client, project) => {
      await client.delete(`${sources(project)}/${enc(id)}`, IntakeSourceRemovedSchema);
      io.out(`removed intake source ${id}`);
      return EXIT_OK;
    });
  },
};

const testUsage = "overseer intake test ID [--project P] [--json]";

const intakeTestCommand: CliCommand = {
  path: ["intake", "test"],
  summary:
    "dry run: ask the tracker for the matching issues and show what would become tasks (writes nothing)",
  usage: testUsage,
  async run(args, io) {
    const { values, positionals } = parseCommandArgs(
      args,
      { project: { type: "string" }, json: { type: "boolean" } },
      testUsage,
    );
    const id = onePositional(positionals, "Give the source's id (from overseer intake list).", testUsage);
    return withProject(io, values.project, async (client, project) => {
      const r = await client.post(`${sources(project)}/${enc(id)}/test`, {}, IntakeDryRunSchema);
      if (values.json) {
        io.out(JSON.stringify(r, null, 2));
        return EXIT_OK;
      }
      io.out(
        `${r.matched} matching issue(s): ${r.would_take.length} would become work, ${r.already_taken.length} already taken`,
      );
      for (const w of r.would_take) io.out(`  ${w.key} → ${w.as} ${w.task_id}: ${w.title}`);
      for (const t of r.already_taken) io.out(`  ${t.key} already task ${t.task_id}`);
      return EXIT_OK;
    });
  },
};

export const intakeCommands: CliCommand[] = [
  intakeAddCommand,
  intakeListCommand,
  intakeRemoveCommand,
  intakeTestCommand,
];
