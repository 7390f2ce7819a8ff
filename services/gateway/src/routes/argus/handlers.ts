import { randomUUID } from "node:crypto";
import { argusTaskStatus } from "@overseer/api-contract";
import { ConflictError, getDecision, getTask, listDecisions, listTasks } from "@overseer/db";
import { type Decision, normaliseOptionId, type Task } from "@overseer/domain";
import { actorOf } from "../../gateway-env.ts";
import { ApiError } from "../../http/api-error.ts";
import { projectStatusView, statusJson } from "../../views/project-status-view.ts";
import { decisionCard } from "../../views/resource-views.ts";
import { snapshotView } from "../../views/snapshot-view.ts";
import { existingProject, type GatewayHandler, projectNotFound, type RouteContext } from "../route-kit.ts";
import type {
  answerBacklogItemRoute,
  getArgusSnapshotRoute,
  getArgusStatusRoute,
  resolveDecisionRoute,
  routeMessageRoute,
} from "./definitions.ts";

export function getArgusStatus(ctx: RouteContext): GatewayHandler<typeof getArgusStatusRoute> {
  return async (c) => {
    const { id } = c.req.valid("param");
    // The project (Postgres) and the live workers' pools (Redis) are read at once: one round trip
    // of waiting, not two, on a loaded cluster.
    const [snapshot, pools] = await Promise.all([ctx.statusCache.get(id), ctx.servedPools.get()]);
    if (!snapshot) throw projectNotFound(id);
    // A cached snapshot is rendered once per waiting state: polling clients get the same bytes until it changes.
    return c.body(statusJson(snapshot, pools), 200, {
      "Content-Type": "application/json",
    }) as never;
  };
}

export function getArgusSnapshot(ctx: RouteContext): GatewayHandler<typeof getArgusSnapshotRoute> {
  return async (c) => {
    const { id } = c.req.valid("param");
    const compact = ["true", "1"].includes(c.req.valid("query").compact ?? "false");
    const snapshot = await ctx.statusCache.get(id);
    if (!snapshot) throw projectNotFound(id);
    const status = projectStatusView(snapshot.data, new Date(snapshot.at));
    if (compact) return c.json(snapshotView(status, true), 200);
    const [tasks, decisions] = await Promise.all([allTasks(ctx, id), listDecisions(ctx.deps.db, id)]);
    return c.json(snapshotView(status, false, tasks, decisions), 200);
  };
}

export function resolveDecision(ctx: RouteContext): GatewayHandler<typeof resolveDecisionRoute> {
  return async (c) => {
    const { id, decision_id } = c.req.valid("param");
    const body = c.req.valid("json");
    const result = await ctx.transitions.apply(id, {
      kind: "resolve-decision",
      decisionId: decision_id,
      optionId: normaliseOptionId(body.option_id),
      note: body.note ?? undefined,
      by: actorOf(c.get("token")),
      resolutionId: randomUUID(),
    });
    const decision = await getDecision(ctx.deps.db, id, decision_id);
    if (!decision || !result.resolution) throw new Error(`decision ${decision_id} vanished after resolution`);
    return c.json(
      {
        resolved: true as const,
        resolution_id: result.resolution.resolutionId,
        application_status: result.outcome,
        decision: decisionCard(decision),
      },
      200,
    );
  };
}

export function answerBacklogItem(ctx: RouteContext): GatewayHandler<typeof answerBacklogItemRoute> {
  return async (c) => {
    const { id, item_id } = c.req.valid("param");
    const { text } = c.req.valid("json");
    return c.json(await answerItem(ctx, id, item_id, text, actorOf(c.get("token"))), 200);
  };
}

export function routeMessage(ctx: RouteContext): GatewayHandler<typeof routeMessageRoute> {
  const { db } = ctx.deps;
  return async (c) => {
    const { id } = c.req.valid("param");
    const { text } = c.req.valid("json");
    await existingProject(db, id);
    const by = actorOf(c.get("token"));
    // The routing premise (exactly one pending card, its task at this version) is checked
    // again by the transition itself: a concurrent change makes it conflict, and routing
    // is decided afresh from a new read.
    for (let attempt = 1; attempt <= ctx.options.conflictRetries; attempt++) {
      const pending = await listDecisions(db, id, "pending");
      const only = pending.length === 1 ? pending[0] : undefined;
      if (!only) throw notRouted(id, pending);
      const task = await getTask(db, id, only.itemId);
      if (!task) throw notRouted(id, pending);
      try {
        const answer = await answerItem(ctx, id, only.itemId, text, by, task);
        return c.json({ ...answer, routed: true as const, decision_id: only.id }, 200);
      } catch (error) {
        if (error instanceof ConflictError) continue;
        throw error;
      }
    }
    throw new ApiError(
      409,
      "conflict",
      "The pending questions kept changing while routing the message; check the status and try again.",
    );
  };
}

function notRouted(projectId: string, pending: readonly Decision[]): ApiError {
  const cards = pending.map(decisionCard);
  if (cards.length === 0) {
    return new ApiError(
      409,
      "no_pending_question",
      `No question is pending in project ${projectId}, so the message was not routed and nothing changed. To give an item instructions, POST /api/projects/${projectId}/backlog/{item_id}/answer.`,
      { pending_count: 0 },
      { routed: false, pending_questions: cards },
    );
  }
  const list = cards.map((q) => `${q.id} (item ${q.item_id})`).join(", ");
  return new ApiError(
    409,
    "ambiguous_message",
    `${cards.length} questions are pending in project ${projectId} (${list}); a message is routed only when exactly one is. Resolve a card with POST /api/projects/${projectId}/decisions/{decision_id}/resolve or answer an item with POST /api/projects/${projectId}/backlog/{item_id}/answer.`,
    { pending_count: cards.length },
    { routed: false, pending_questions: cards },
  );
}

/** Applies an `answer`; with `guard`, only while the task still has the version that was read. */
async function answerItem(
  ctx: RouteContext,
  projectId: string,
  itemId: string,
  text: string,
  by: string,
  guard?: Task,
) {
  const result = await ctx.transitions.apply(
    projectId,
    { kind: "answer", taskId: itemId, text, by },
    guard ? { expectedTask: { taskId: guard.id, version: guard.version }, retryOnConflict: false } : {},
  );
  const [task, decision] = await Promise.all([
    getTask(ctx.deps.db, projectId, itemId),
    result.resolution
      ? getDecision(ctx.deps.db, projectId, result.resolution.decisionId)
      : Promise.resolve(undefined),
  ]);
  if (!task) throw new Error(`task ${itemId} vanished after an answer`);
  return {
    resolved: result.resolution !== null,
    recorded: true as const,
    item_id: itemId,
    application_status: "applied" as const,
    resolution_id: result.resolution?.resolutionId ?? null,
    decision: result.resolution && decision ? decisionCard(decision) : null,
    task_status: argusTaskStatus(task.status),
  };
}

/** Every task of a project in creation order (pages of 1000). */
async function allTasks(ctx: RouteContext, projectId: string): Promise<Task[]> {
  const out: Task[] = [];
  let after: string | null = null;
  for (;;) {
    const page = await listTasks(ctx.deps.db, projectId, { after, limit: 1000 });
    out.push(...page.tasks);
    if (!page.next) return out;
    after = page.next;
  }
}
