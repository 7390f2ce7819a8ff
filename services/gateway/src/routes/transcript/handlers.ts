import {
  getRunTranscript as findStoredTranscript,
  getRun,
  getTask,
  listRuns,
  listTaskTranscripts,
  type ProjectRow,
  type StoredRunTranscript,
} from "@overseer/db";
import { parseTranscript, type TranscriptEntry, TranscriptEntrySchema } from "@overseer/transcript";
import { projectRedactor } from "../../views/project-redaction.ts";
import {
  existingProject,
  type GatewayHandler,
  notFoundInProject,
  type RouteContext,
  runNotFound,
} from "../route-kit.ts";
import type { getRunTranscriptRoute, getTaskTranscriptRoute } from "./definitions.ts";

interface RunTranscriptView {
  agent: string | null;
  entries: TranscriptEntry[];
  truncated: boolean;
}

/** The agent kind of the project's runner config (`agent`), or null. */
function agentOf(project: ProjectRow): string | null {
  const config = project.runner_config as { agent?: unknown } | null;
  return typeof config?.agent === "string" ? config.agent : null;
}

/** Every string of a JSON value redacted (entries carry text in messages, commands, outputs and arguments). */
function redactDeep(value: unknown, redact: (text: string) => string): unknown {
  if (typeof value === "string") return redact(value);
  if (Array.isArray(value)) return value.map((item) => redactDeep(item, redact));
  if (typeof value === "object" && value !== null)
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, redactDeep(item, redact)]));
  return value;
}

/** Stored entries that still match the schema (the result was validated when it was applied). */
function validEntries(entries: readonly unknown[]): TranscriptEntry[] {
  return entries.flatMap((entry) => {
    const parsed = TranscriptEntrySchema.safeParse(entry);
    return parsed.success ? [parsed.data] : [];
  });
}

/**
 * A run's transcript: the stored one; while the run goes, the entries its worker parsed and
 * kept live in Redis (numbered as its `run.transcript` events and its stored transcript, so a
 * watcher merges them by `seq`; Copilot's from its session file, not its printed lines); for a
 * run that ended without one (before transcripts were stored), its stored output parsed.
 */
async function transcriptOf(
  ctx: RouteContext,
  project: ProjectRow,
  run: { id: string; status: string },
  stored: StoredRunTranscript | null,
): Promise<RunTranscriptView> {
  const redact = projectRedactor(project.runner_config);
  if (stored !== null) {
    const entries = validEntries(stored.entries);
    return {
      agent: stored.agent,
      entries: redactDeep(entries, redact) as TranscriptEntry[],
      truncated: stored.truncated || entries.length < stored.entries.length,
    };
  }
  const agent = agentOf(project);
  if (run.status === "queued" || run.status === "running") {
    const kept = await ctx.deps.live.readTranscript(run.id).catch(() => []);
    const entries = validEntries(kept);
    return {
      agent,
      entries: redactDeep(entries, redact) as TranscriptEntry[],
      // The oldest were trimmed to the worker's bound (a transcript is numbered from 0).
      truncated: (entries[0]?.seq ?? 0) > 0 || entries.length < kept.length,
    };
  }
  const row = await getRun(ctx.deps.db, run.id);
  const output = row?.output ?? "";
  return {
    agent,
    entries: parseTranscript(redact(output), agent),
    truncated: row?.output_truncated ?? false,
  };
}

export function getRunTranscript(ctx: RouteContext): GatewayHandler<typeof getRunTranscriptRoute> {
  return async (c) => {
    const { id, run_id: runId } = c.req.valid("param");
    const project = await existingProject(ctx.deps.db, id);
    const run = await getRun(ctx.deps.db, runId);
    if (!run || run.project_id !== id) throw runNotFound(runId);
    const stored = await findStoredTranscript(ctx.deps.db, id, runId);
    const view = await transcriptOf(ctx, project, run, stored);
    return c.json({ run_id: runId, ...view }, 200);
  };
}

export function getTaskTranscript(ctx: RouteContext): GatewayHandler<typeof getTaskTranscriptRoute> {
  return async (c) => {
    const { id, task_id: taskId } = c.req.valid("param");
    const project = await existingProject(ctx.deps.db, id);
    if (!(await getTask(ctx.deps.db, id, taskId)))
      throw await notFoundInProject(ctx.deps.db, id, "Task", taskId);
    const [runs, stored] = await Promise.all([
      listRuns(ctx.deps.db, { projectId: id, taskId }),
      listTaskTranscripts(ctx.deps.db, id, taskId),
    ]);
    const ordered = [...runs].reverse();
    const views = await Promise.all(
      ordered.map((run) => transcriptOf(ctx, project, run, stored.get(run.id) ?? null)),
    );
    return c.json(
      {
        task_id: taskId,
        runs: ordered.map((run, i) => ({
          run_id: run.id,
          agent: views[i]?.agent ?? null,
          truncated: views[i]?.truncated ?? false,
        })),
        entries: ordered.flatMap((run, i) =>
          (views[i]?.entries ?? []).map((entry) => ({ ...entry, runId: run.id })),
        ),
        truncated: views.some((view) => view.truncated),
      },
      200,
    );
  };
}
