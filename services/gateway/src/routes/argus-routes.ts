import { randomUUID } from "node:crypto";
import { z } from "@hono/zod-openapi";
import {
  AnswerResultSchema,
  MessageConflictSchema,
  MessageResultSchema,
  ProjectDecisionParams,
  ProjectItemParams,
  ProjectParams,
  ProjectStatusSchema,
  ResolveRequestSchema,
  ResolveResultSchema,
  SnapshotSchema,
  StaleErrorSchema,
  TextRequestSchema,
} from "@overseer/api-contract";
import { ConflictError, getDecision, getTask, listDecisions, listTasks } from "@overseer/db";
import { type Decision, normaliseOptionId, type Task } from "@overseer/domain";
import { actorOf } from "../gateway-env.ts";
import { ApiError } from "../http/api-error.ts";
import { projectStatusView, statusJson } from "../views/project-status-view.ts";
import { decisionCard } from "../views/resource-views.ts";
import {
  errorResponses,
  existingProject,
  guarded,
  jsonBody,
  jsonResponse,
  projectNotFound,
  READ_ERRORS,
  type RouteApp,
  type RouteContext,
  tableRoute,
  WRITE_ERRORS,
} from "./route-kit.ts";

/**
 * Argus-compatible routes (docs/argus-compatibility.md): operator skills written for
 * Argus poll `status`/`snapshot`, then answer through `resolve`, `answer` or
 * `message`. Paths, field names and response shapes follow Argus; everything else the
 * gateway offers lives under `/api/v1`.
 */

const SnapshotQuery = z.object({
  compact: z
    .enum(["true", "false", "1", "0"], { error: "true or false" })
    .optional()
    .openapi({ description: "true: only counts and pending_questions; otherwise the full backlog too." }),
});

export function registerArgusRoutes(app: RouteApp, ctx: RouteContext): void {
  const { db } = ctx.deps;

  app.openapi(
    guarded(
      ctx,
      tableRoute("getArgusStatus", {
        method: "get",
        path: "/api/projects/{id}/status",
        tags: ["Argus"],
        summary: "Project status with pending questions",
        description:
          "Objective, stage, task counts by status, running runs and the pending decision cards. `waiting_for_you` is `waiting for you: N unanswered question(s)` when N > 0: a stop signal for operators.",
        request: { params: ProjectParams },
        responses: {
          200: jsonResponse(ProjectStatusSchema, "Current status."),
          ...errorResponses(...READ_ERRORS),
        },
      }),
    ),
    async (c) => {
      const { id } = c.req.valid("param");
      const snapshot = await ctx.statusCache.get(id);
      if (!snapshot) throw projectNotFound(id);
      // A cached snapshot is rendered once: polling clients get the same bytes until it changes.
      return c.body(statusJson(snapshot), 200, { "Content-Type": "application/json" }) as never;
    },
  );

  app.openapi(
    guarded(
      ctx,
      tableRoute("getArgusSnapshot", {
        method: "get",
        path: "/api/projects/{id}/snapshot",
        tags: ["Argus"],
        summary: "Project snapshot (compact or with the full backlog)",
        description:
          "`compact=true`: counts and `pending_questions`. Otherwise also `backlog`: every task with `pending_question` (the pending card's question or null) and `operator_decision` (its latest card).",
        request: { params: ProjectParams, query: SnapshotQuery },
        responses: { 200: jsonResponse(SnapshotSchema, "Snapshot."), ...errorResponses(...READ_ERRORS) },
      }),
    ),
    async (c) => {
      const { id } = c.req.valid("param");
      const compact = ["true", "1"].includes(c.req.valid("query").compact ?? "false");
      const snapshot = await ctx.statusCache.get(id);
      if (!snapshot) throw projectNotFound(id);
      const status = projectStatusView(snapshot.data, new Date(snapshot.at));
      const base = {
        compact,
        project_id: status.project_id,
        status: status.status,
        status_reason: status.status_reason,
        objective: status.objective,
        stage: status.stage,
        counts: status.counts,
        pending_questions: status.pending_questions,
        pending_count: status.pending_count,
        waiting_for_you: status.waiting_for_you,
        mission: status.mission,
        mission_notice: status.mission_notice,
        generated_at: status.generated_at,
      };
      if (compact) return c.json(base, 200);
      const [tasks, decisions] = await Promise.all([allTasks(ctx, id), listDecisions(db, id)]);
      const byItem = new Map<string, Decision>(decisions.map((d) => [d.itemId, d]));
      const backlog = tasks.map((t) => {
        const card = byItem.get(t.id) ?? null;
        return {
          id: t.id,
          stage: t.stage,
          title: t.title,
          role: t.role,
          kind: t.kind,
          status: t.status,
          status_reason: t.statusReason,
          awaiting_reason: t.awaitingReason,
          priority: t.priority,
          prerequisites: [...t.prerequisites],
          parent_id: t.parentId,
          root_id: t.rootId,
          depth: t.depth,
          blocked_by: t.blockedBy,
          pending_question: card?.status === "pending" ? card.question : null,
          operator_decision: card ? decisionCard(card) : null,
        };
      });
      return c.json({ ...base, running: status.running, backlog }, 200);
    },
  );

  app.openapi(
    guarded(
      ctx,
      tableRoute("resolveDecision", {
        method: "post",
        path: "/api/projects/{id}/decisions/{decision_id}/resolve",
        tags: ["Argus"],
        summary: "Resolve a decision card",
        description:
          "Records `option_id` (and `note`) on a pending card and makes its task runnable again (`stop` cancels the item). Resolving again with the same option answers `already_applied` with the same `resolution_id`; another option after resolution answers 409 with `application_status: stale` and changes nothing.",
        request: {
          params: ProjectDecisionParams,
          body: jsonBody(ResolveRequestSchema),
        },
        responses: {
          200: jsonResponse(ResolveResultSchema, "Resolved (or already resolved with the same option)."),
          ...errorResponses(...WRITE_ERRORS),
          409: jsonResponse(
            StaleErrorSchema,
            "Already resolved with another option (stale), or a concurrent change.",
          ),
        },
      }),
    ),
    async (c) => {
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
      const decision = await getDecision(db, id, decision_id);
      if (!decision || !result.resolution)
        throw new Error(`decision ${decision_id} vanished after resolution`);
      return c.json(
        {
          resolved: true as const,
          resolution_id: result.resolution.resolutionId,
          application_status: result.outcome,
          decision: decisionCard(decision),
        },
        200,
      );
    },
  );

  app.openapi(
    guarded(
      ctx,
      tableRoute("answerBacklogItem", {
        method: "post",
        path: "/api/projects/{id}/backlog/{item_id}/answer",
        tags: ["Argus"],
        summary: "Answer a backlog item",
        description:
          "Records `text` as the operator's answer for the item's next run. When the item has a pending card it is resolved with option `custom` and the item becomes runnable again.",
        request: {
          params: ProjectItemParams,
          body: jsonBody(TextRequestSchema),
        },
        responses: {
          200: jsonResponse(AnswerResultSchema, "Answer recorded."),
          ...errorResponses(...WRITE_ERRORS),
        },
      }),
    ),
    async (c) => {
      const { id, item_id } = c.req.valid("param");
      const { text } = c.req.valid("json");
      return c.json(await answerItem(ctx, id, item_id, text, actorOf(c.get("token"))), 200);
    },
  );

  app.openapi(
    guarded(
      ctx,
      tableRoute("routeMessage", {
        method: "post",
        path: "/api/projects/{id}/message",
        tags: ["Argus"],
        summary: "Route a message to the only pending question",
        description:
          "Answers the pending card when exactly one is pending. With none, or with several, nothing changes and the answer is 409 listing `pending_questions`: address a specific card or item instead.",
        request: {
          params: ProjectParams,
          body: jsonBody(TextRequestSchema),
        },
        responses: {
          200: jsonResponse(MessageResultSchema, "Routed to the single pending question."),
          ...errorResponses(...WRITE_ERRORS),
          409: jsonResponse(MessageConflictSchema, "Zero or several questions pending: not routed."),
        },
      }),
    ),
    async (c) => {
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
    },
  );
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
    task_status: task.status,
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
