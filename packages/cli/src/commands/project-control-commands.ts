import { ProjectStatusChangeSchema } from "@overseer/api-contract";
import { onePositional, parseCommandArgs } from "../arg-parser.ts";
import { EXIT_OK } from "../cli-errors.ts";
import type { CliCommand } from "../command-registry.ts";
import { describeTarget, selectGatewayProject, withGateway } from "../command-target.ts";
import { GatewayClient } from "../gateway-client.ts";

/**
 * `pause`, `resume` and `stop`: the gateway's POST /api/v1/projects/{id}/pause|resume|stop,
 * recorded as `set-project-status` transitions with the token's name and the reason. Their
 * scopes are the API's (the authorization table): pause and resume need operate, stop admin;
 * a refusal exits 1 with the gateway's words.
 */
const VERBS = [
  { verb: "pause", summary: "pause scheduling of a project (running runs finish)", done: "paused" },
  { verb: "resume", summary: "resume scheduling of a paused project", done: "resumed" },
  { verb: "stop", summary: "stop a project: active runs are cancelled (admin token)", done: "stopped" },
] as const;

function projectControlCommand(spec: (typeof VERBS)[number]): CliCommand {
  const usage = `overseer ${spec.verb} [PROJECT | --project P] [--reason TEXT]`;
  return {
    path: [spec.verb],
    summary: spec.summary,
    usage,
    async run(args, io) {
      const { values, positionals } = parseCommandArgs(
        args,
        { project: { type: "string" }, reason: { type: "string" } },
        usage,
      );
      const named =
        positionals.length > 0
          ? onePositional(positionals, "Give at most one project (or --project).", usage, {
              requiredFlagGiven: values.project === undefined,
            })
          : values.project;
      const client = GatewayClient.fromIo(io);
      return withGateway(async () => {
        const project = await selectGatewayProject(client, named);
        io.err(describeTarget({ kind: "gateway", client }));
        const reason = values.reason?.trim();
        const r = await client.post(
          `/api/v1/projects/${encodeURIComponent(project)}/${spec.verb}`,
          reason ? { reason } : {},
          ProjectStatusChangeSchema,
        );
        const how =
          r.application_status === "already_applied" ? `was already ${r.project.status}` : spec.done;
        io.out(`${project} ${how}; status ${r.project.status}${reason ? ` (${reason})` : ""}`);
        return EXIT_OK;
      });
    },
  };
}

export const projectControlCommands: CliCommand[] = VERBS.map(projectControlCommand);
