import { ProjectStatusChangeSchema } from "@overseer/api-contract";
import { requireProject } from "@overseer/db";
import {
  DEFAULT_MISSION_MAX_ROUNDS,
  isDomainError,
  planTaskId,
  STAGE_EXPECTED,
  STAGE_PATTERN,
} from "@overseer/domain";
import { startMission, TransitionApplier } from "@overseer/transitions";
import { parseCommandArgs, requirePositive } from "../arg-parser.ts";
import { withDatabase } from "../cli-context.ts";
import { CommandFailed, EXIT_OK, UsageError } from "../cli-errors.ts";
import type { CliCommand } from "../command-registry.ts";
import { commandTarget, describeTarget, withGateway } from "../command-target.ts";

const usage =
  "overseer mission start --project P --objective TEXT [--stage S] [--max-sessions N] [--budget-usd X] [--max-rounds N]";

/**
 * `mission start`: the project becomes active and continuous and gets a planning task for the
 * objective; the coordinator schedules the planner at once. The mission is bounded by the
 * session budget, `--budget-usd` and `--max-rounds` planning rounds (default 10); reaching a
 * bound pauses the project with a summary.
 */
export const missionStartCommand: CliCommand = {
  path: ["mission", "start"],
  summary: "start a mission: an objective becomes a planned, reviewed and continued backlog",
  usage,
  async run(args, io) {
    const { values } = parseCommandArgs(
      args,
      {
        project: { type: "string" },
        objective: { type: "string" },
        stage: { type: "string" },
        "max-sessions": { type: "string" },
        "budget-usd": { type: "string" },
        "max-rounds": { type: "string" },
      },
      usage,
      false,
    );
    if (!values.project) throw new UsageError(`--project is required.\nUsage: ${usage}`);
    const objective = values.objective?.trim();
    if (!objective)
      throw new UsageError(`--objective TEXT is required and may not be empty.\nUsage: ${usage}`);
    const maxSessions = requirePositive(values["max-sessions"], "--max-sessions");
    const maxRounds = requirePositive(values["max-rounds"], "--max-rounds") ?? DEFAULT_MISSION_MAX_ROUNDS;
    const budgetUsd = parseBudget(values["budget-usd"]);
    const projectId = values.project;
    const stage = values.stage ?? null;
    if (stage !== null && !STAGE_PATTERN.test(stage))
      throw new UsageError(`--stage must be ${STAGE_EXPECTED}; received ${JSON.stringify(stage)}.`);
    const summary = (planning: string | undefined, sessionsLimit: number | null) =>
      `mission started on ${projectId}: planning task ${planning ?? "?"}, at most ${maxRounds} round(s), max_sessions ${sessionsLimit ?? "unbounded"}${budgetUsd !== undefined ? `, budget_usd ${budgetUsd}` : ""}`;
    const target = commandTarget(io);
    io.err(describeTarget(target));
    if (target.kind === "gateway") {
      const { client } = target;
      return withGateway(async () => {
        const { project } = await client.post(
          `/api/v1/projects/${encodeURIComponent(projectId)}/mission`,
          {
            objective,
            ...(stage !== null ? { stage } : {}),
            ...(maxSessions !== undefined ? { max_sessions: maxSessions } : {}),
            ...(budgetUsd !== undefined ? { budget_usd: budgetUsd } : {}),
            max_rounds: maxRounds,
          },
          ProjectStatusChangeSchema,
        );
        io.out(
          summary(project.mission ? planTaskId(project.mission.round) : undefined, project.sessions_limit),
        );
        return EXIT_OK;
      });
    }
    return withDatabase(io, {}, async ({ db }) => {
      await requireProject(db, projectId);
      // No Redis here: the NOTIFY wakes the coordinator; live watchers catch up from Postgres.
      const applier = new TransitionApplier({ db });
      try {
        const { state } = await startMission(applier, projectId, {
          objective,
          stage,
          maxSessions: maxSessions ?? null,
          budgetUsd,
          maxRounds,
          by: "cli",
        });
        const planning = [...state.tasks.values()].find((t) => t.kind === "plan" && t.status !== "done");
        io.out(summary(planning?.id, state.project.sessionsLimit));
        return EXIT_OK;
      } catch (error) {
        if (isDomainError(error)) throw new CommandFailed(error.message);
        throw error;
      }
    });
  },
};

function parseBudget(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0)
    throw new UsageError(`--budget-usd expects a positive number of dollars, received "${raw}"`);
  return n;
}
