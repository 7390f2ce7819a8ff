import { getRun as findRun, getProject, type NumberedRunRow, listRuns as queryRuns } from "@overseer/db";
import { streamRunLog as followRunLog } from "../../live/run-log-stream.ts";
import { projectRedactor } from "../../views/project-redaction.ts";
import { runSummaryView, runView } from "../../views/resource-views.ts";
import { existingProject, type GatewayHandler, type RouteContext, runNotFound } from "../route-kit.ts";
import { sseResponse } from "../sse-response.ts";
import type {
  getRunLogRoute,
  getRunPromptRoute,
  getRunRoute,
  listRunsRoute,
  streamRunLogRoute,
} from "./definitions.ts";

/** A run and the redactor of its project's secrets; the run's 404 when there is none. */
async function loadRun(
  { deps }: RouteContext,
  id: string,
): Promise<{ run: NumberedRunRow; redact: (text: string) => string }> {
  const run = await findRun(deps.db, id);
  if (!run) throw runNotFound(id);
  const project = await getProject(deps.db, run.project_id);
  return { run, redact: projectRedactor(project?.runner_config) };
}

export function listRuns({ deps }: RouteContext): GatewayHandler<typeof listRunsRoute> {
  return async (c) => {
    const { id } = c.req.valid("param");
    const q = c.req.valid("query");
    await existingProject(deps.db, id);
    const rows = await queryRuns(deps.db, {
      projectId: id,
      taskId: q.task,
      status: q.status ? q.status.split(",") : undefined,
      before: q.before ?? null,
      limit: q.limit,
    });
    const last = rows.at(-1);
    return c.json(
      {
        runs: rows.map(runSummaryView),
        next_before: rows.length === q.limit && last ? last.created_at.toISOString() : null,
      },
      200,
    );
  };
}

export function getRun(ctx: RouteContext): GatewayHandler<typeof getRunRoute> {
  return async (c) => {
    const { run, redact } = await loadRun(ctx, c.req.valid("param").id);
    return c.json(runView(run, redact), 200);
  };
}

export function getRunPrompt(ctx: RouteContext): GatewayHandler<typeof getRunPromptRoute> {
  return async (c) => {
    const { run, redact } = await loadRun(ctx, c.req.valid("param").id);
    return c.json(
      {
        run_id: run.id,
        prompt: run.prompt === null ? null : redact(run.prompt),
        prompt_chars: run.prompt_chars,
      },
      200,
    );
  };
}

export function getRunLog(ctx: RouteContext): GatewayHandler<typeof getRunLogRoute> {
  return async (c) => {
    const { run, redact } = await loadRun(ctx, c.req.valid("param").id);
    return c.json(
      {
        run_id: run.id,
        status: run.status,
        output: run.output === null ? null : redact(run.output),
        truncated: run.output_truncated,
      },
      200,
    );
  };
}

export function streamRunLog(ctx: RouteContext): GatewayHandler<typeof streamRunLogRoute> {
  return async (c) => {
    const { id } = c.req.valid("param");
    const cursor = c.req.valid("header")["last-event-id"] ?? c.req.valid("query").after ?? "0";
    const { redact } = await loadRun(ctx, id);
    const failure = { message: "run log stream failed", fields: { runId: id } };
    return sseResponse(c, ctx, "log", failure, (stream, handle) =>
      followRunLog(stream, handle, {
        db: ctx.deps.db,
        redis: ctx.deps.redis,
        live: ctx.deps.live,
        runId: id,
        cursor,
        keepAliveMs: ctx.options.keepAliveMs,
        blockMs: Math.min(ctx.options.logBlockMs, ctx.options.keepAliveMs),
        redact,
      }),
    );
  };
}
