import {
  type Db,
  landingBranchOf,
  latestEventId,
  listEvents,
  listProjects,
  loadProjectState,
  type NotificationListener,
  POSTGRES_NOTIFY_CHANNEL,
  parseNotifyPayload,
  requireProject,
} from "@overseer/db";
import {
  activeRunCount,
  firstRunnable,
  formatAgentId,
  nextAction,
  runnableTasks,
  STAGE_EXPECTED,
  STAGE_PATTERN,
} from "@overseer/domain";
import { renderRunPrompt } from "@overseer/harness";
import { ConfigError } from "@overseer/input-errors";
import { parseRunnerConfig, type RunnerConfig } from "@overseer/project-config";
import { startProject, TransitionApplier } from "@overseer/transitions";
import { parseCommandArgs, requirePositive } from "../arg-parser.ts";
import { withDatabase } from "../cli-context.ts";
import { EXIT_OK, UsageError } from "../cli-errors.ts";
import type { CliIo } from "../cli-io.ts";
import type { CliCommand } from "../command-registry.ts";
import { commandTarget, describeTarget } from "../command-target.ts";
import { startedLine, startThroughGateway } from "./start-through-gateway.ts";

const usage =
  "overseer start [--project P] [--stage S] [--max-sessions N] [--continuous] [--dry-run] [--follow]";

/**
 * `start` makes projects active with a fresh session budget; the coordinator schedules
 * them at once (it listens for the change). `--dry-run` (docs/state-machine.md rule 13) shows the first
 * runnable task and its prompt size, assigns nothing, writes nothing and needs no harness.
 */
export const startCommand: CliCommand = {
  path: ["start"],
  summary: "start scheduling a project (or all); --dry-run shows the first runnable task",
  usage,
  async run(args, io) {
    const { values } = parseCommandArgs(
      args,
      {
        project: { type: "string" },
        stage: { type: "string" },
        "max-sessions": { type: "string" },
        continuous: { type: "boolean" },
        "dry-run": { type: "boolean" },
        follow: { type: "boolean" },
      },
      usage,
      false,
    );
    const maxSessions = requirePositive(values["max-sessions"], "--max-sessions");
    const stage = values.stage ?? null;
    if (stage !== null && !STAGE_PATTERN.test(stage))
      throw new UsageError(`--stage must be ${STAGE_EXPECTED}; received ${JSON.stringify(stage)}.`);
    const target = commandTarget(io);
    if (target.kind === "gateway") {
      if (values["dry-run"])
        throw new UsageError(
          "start --dry-run renders prompts from the stored runner config, which only the cluster's database holds: run it on the cluster host with DATABASE_URL and without OVERSEER_URL/OVERSEER_TOKEN.",
        );
      io.err(describeTarget(target));
      return startThroughGateway(target.client, io, {
        project: values.project,
        stage,
        maxSessions,
        continuous: values.continuous,
        follow: values.follow ?? false,
      });
    }
    io.err(describeTarget(target));
    return withDatabase(io, {}, async ({ db, notifications }) => {
      const projectIds = values.project
        ? [(await requireProject(db, values.project)).id]
        : (await listProjects(db)).map((p) => p.id);
      if (projectIds.length === 0)
        throw new UsageError("No project exists yet; create one with `overseer init`.");
      if (values["dry-run"]) {
        for (const id of projectIds) await dryRun(db, io, id, stage);
        return EXIT_OK;
      }
      const since = await lastEventId(db);
      // No Redis here: live watchers catch up from Postgres (the NOTIFY wakes the gateway).
      const applier = new TransitionApplier({ db });
      for (const id of projectIds) {
        const { state } = await startProject(applier, id, {
          stage,
          maxSessions: maxSessions ?? null,
          continuous: values.continuous,
          by: "cli",
        });
        io.out(startedLine(id, state.project.stage, state.project.sessionsLimit));
      }
      if (!values.follow) return EXIT_OK;
      return follow(db, notifications, io, projectIds, since);
    });
  },
};

async function lastEventId(db: Db): Promise<number> {
  return Number((await latestEventId(db)) ?? 0);
}

async function dryRun(db: Db, io: CliIo, projectId: string, stage: string | null): Promise<void> {
  const project = await requireProject(db, projectId);
  let config: RunnerConfig;
  try {
    config = parseRunnerConfig(project.runner_config, `runner config of ${projectId}`);
  } catch (error) {
    if (error instanceof ConfigError) throw new UsageError(error.message);
    throw error;
  }
  // The dry run evaluates readiness as if the project were started now.
  const loaded = await loadProjectState(db, projectId);
  const state = { ...loaded, project: { ...loaded.project, status: "active" as const } };
  const task = firstRunnable(state, Date.now(), stage);
  if (!task) {
    io.out(`${projectId}: no runnable task${stage ? ` in stage ${stage}` : ""}`);
    return;
  }
  const action = nextAction(task);
  const agentId = formatAgentId(action, task.role, "000000000000");
  const landing = { id: project.id, objective: project.objective, landingBranch: landingBranchOf(project) };
  const rendered = renderRunPrompt(landing, config, state, task, action, agentId, 1);
  const queued = runnableTasks(state, Date.now(), stage).length;
  if (!rendered.ok) {
    io.out(
      `${projectId}: first runnable task ${task.id} "${task.title}" (${action}); ${rendered.error.message}`,
    );
    return;
  }
  io.out(
    `${projectId}: first runnable task ${task.id} "${task.title}" (${action}, role ${task.role}); prompt ${rendered.chars} chars (max_prompt_chars ${config.max_prompt_chars}); ${queued} runnable, ${activeRunCount(state)} running`,
  );
}

/** Prints events as they happen until every followed project is idle (nothing running or runnable). */
async function follow(
  db: Db,
  notifications: NotificationListener,
  io: CliIo,
  projectIds: string[],
  since: number,
): Promise<number> {
  let cursor = since;
  let wake: () => void = () => {};
  const listener = await notifications.listen(POSTGRES_NOTIFY_CHANNEL, (payload) => {
    if (projectIds.includes(parseNotifyPayload(payload).projectId)) wake();
  });
  try {
    for (;;) {
      const events = await listEvents(db, { after: cursor, limit: 500 });
      for (const e of events) {
        cursor = Number(e.id);
        if (!projectIds.includes(e.project_id)) continue;
        io.out(`${e.created_at.toISOString()} ${e.project_id} ${e.task_id ?? "-"} ${e.type}`);
      }
      let busy = false;
      for (const id of projectIds) {
        const state = await loadProjectState(db, id);
        if (
          state.project.status === "active" &&
          (activeRunCount(state) > 0 || runnableTasks(state, Date.now()).length > 0)
        )
          busy = true;
      }
      if (!busy) return EXIT_OK;
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, 2000).unref();
      });
    }
  } finally {
    await listener.unlisten();
  }
}
