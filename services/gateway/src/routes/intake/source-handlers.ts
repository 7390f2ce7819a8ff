import { randomBytes } from "node:crypto";
import { IntakeConfigSpec, IntakeQuerySpec, type IntakeSource } from "@overseer/api-contract";
import {
  createIntakeSource as createIntakeSourceRow,
  getIntakeSource,
  type IntakeSourceRow,
  intakeItemCounts,
  intakeTaskIds,
  intakeWebhookCounts,
  listIntakeSources as listIntakeSourceRows,
  removeIntakeSource as removeIntakeSourceRow,
} from "@overseer/db";
import {
  intakeConfigOf,
  matchesQuery,
  sourceAdapterOf,
  type TrackerAdapter,
  type TrackerIssue,
  TrackerTokenNotSetError,
  taskDraftOf,
} from "@overseer/intake";
import { actorOf } from "../../gateway-env.ts";
import { ApiError } from "../../http/api-error.ts";
import { iso, isoOrNull } from "../../views/resource-views.ts";
import { existingProject, type GatewayHandler, type RouteContext } from "../route-kit.ts";
import type {
  createIntakeSourceRoute,
  listIntakeSourcesRoute,
  removeIntakeSourceRoute,
  testIntakeSourceRoute,
} from "./definitions.ts";

/** Where a source's tracker posts its webhooks. */
export function webhookPathOf(sourceId: string): string {
  return `/api/v1/intake/sources/${sourceId}/webhook`;
}

type WebhookCount = { received: number; lastAt: Date | null };

function sourceView(row: IntakeSourceRow, taken: number, webhooks?: WebhookCount): IntakeSource {
  return {
    id: row.id,
    project_id: row.project_id,
    kind: row.kind,
    base_url: row.base_url,
    query: row.query as Record<string, unknown>,
    config: row.config as Record<string, unknown>,
    token_env: row.token_env,
    webhook_secret_env: row.webhook_secret_env,
    webhook_path: webhookPathOf(row.id),
    enabled: row.enabled,
    items_taken: taken,
    polled_at: isoOrNull(row.polled_at),
    webhooks_received: webhooks?.received ?? 0,
    last_webhook_at: isoOrNull(webhooks?.lastAt ?? null),
    last_error: row.last_error,
    created_by: row.created_by,
    created_at: iso(row.created_at),
  };
}

/** The source of `projectId`, or 404 saying how to list them. */
export async function existingSource(
  ctx: RouteContext,
  projectId: string | null,
  sourceId: string,
): Promise<IntakeSourceRow> {
  const row = await getIntakeSource(ctx.deps.db, sourceId);
  if (!row || (projectId !== null && row.project_id !== projectId)) {
    if (projectId !== null) await existingProject(ctx.deps.db, projectId);
    throw new ApiError(
      404,
      "not_found",
      `Intake source ${sourceId} does not exist${projectId === null ? "" : ` in project ${projectId}`}; list them with overseer intake list${projectId === null ? "" : ` ${projectId}`}.`,
      { source_id: sourceId },
    );
  }
  return row;
}

export function listIntakeSources(ctx: RouteContext): GatewayHandler<typeof listIntakeSourcesRoute> {
  return async (c) => {
    const { id } = c.req.valid("param");
    await existingProject(ctx.deps.db, id);
    const rows = await listIntakeSourceRows(ctx.deps.db, { projectId: id });
    const ids = rows.map((r) => r.id);
    const [counts, webhooks] = await Promise.all([
      intakeItemCounts(ctx.deps.db, ids),
      intakeWebhookCounts(ctx.deps.db, ids),
    ]);
    return c.json(
      { sources: rows.map((r) => sourceView(r, counts.get(r.id) ?? 0, webhooks.get(r.id))) },
      200,
    );
  };
}

export function createIntakeSource(ctx: RouteContext): GatewayHandler<typeof createIntakeSourceRoute> {
  return async (c) => {
    const { id } = c.req.valid("param");
    const body = c.req.valid("json");
    await existingProject(ctx.deps.db, id);
    const row = await createIntakeSourceRow(ctx.deps.db, {
      id: `src_${randomBytes(8).toString("hex")}`,
      projectId: id,
      kind: body.kind,
      baseUrl: body.base_url ?? null,
      query: body.query,
      config: body.config ?? {},
      tokenEnv: body.token_env,
      webhookSecretEnv: body.webhook_secret_env ?? null,
      createdBy: actorOf(c.get("token")),
    });
    return c.json({ source: sourceView(row, 0) }, 201);
  };
}

export function removeIntakeSource(ctx: RouteContext): GatewayHandler<typeof removeIntakeSourceRoute> {
  return async (c) => {
    const { id, source_id } = c.req.valid("param");
    await existingSource(ctx, id, source_id);
    await removeIntakeSourceRow(ctx.deps.db, source_id);
    return c.json({ id: source_id, removed: true as const }, 200);
  };
}

/** The source's adapter; a token variable unset on this gateway is a 503 saying what to set. */
function adapterOn(source: IntakeSourceRow, container: string): TrackerAdapter {
  try {
    return sourceAdapterOf(source, container, process.env);
  } catch (error) {
    if (!(error instanceof TrackerTokenNotSetError)) throw error;
    throw new ApiError(
      503,
      "token_not_set",
      `The environment variable ${source.token_env} is not set on this gateway; set it to the ${source.kind} token (the coordinator needs it too) and try again.`,
      { token_env: source.token_env },
    );
  }
}

export function testIntakeSource(ctx: RouteContext): GatewayHandler<typeof testIntakeSourceRoute> {
  return async (c) => {
    const { id, source_id } = c.req.valid("param");
    const source = await existingSource(ctx, id, source_id);
    const query = IntakeQuerySpec.parse(source.query);
    const config = intakeConfigOf(IntakeConfigSpec.parse(source.config));
    const adapter = adapterOn(source, query.container);
    let issues: TrackerIssue[];
    try {
      issues = await adapter.listIssues(query, null);
    } catch (error) {
      throw new ApiError(
        502,
        "tracker_error",
        `The ${source.kind} tracker refused or could not be reached: ${error instanceof Error ? error.message : String(error)}. Check ${source.token_env}, the container "${query.container}" and base_url.`,
        { source_id },
      );
    }
    const matching = issues.filter((issue) => matchesQuery(issue, query));
    const taken = await intakeTaskIds(ctx.deps.db, source_id);
    const wouldTake = [];
    const alreadyTaken = [];
    for (const issue of matching) {
      const taskId = taken.get(issue.id);
      if (taskId !== undefined) {
        alreadyTaken.push({ issue_id: issue.id, key: issue.key, task_id: taskId });
        continue;
      }
      const draft = taskDraftOf(issue, config, taken);
      wouldTake.push({
        issue_id: issue.id,
        key: issue.key,
        url: issue.url,
        task_id: draft.id,
        as: draft.as,
        title: draft.title,
        role: draft.role,
        scope: [...draft.scope],
        acceptance: [...draft.acceptance],
      });
    }
    return c.json(
      { source_id, matched: matching.length, would_take: wouldTake, already_taken: alreadyTaken },
      200,
    );
  };
}
