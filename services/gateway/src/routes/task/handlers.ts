import {
  ConflictError,
  existingTaskIds,
  getTask as findTask,
  getDecision,
  listTasks as queryTasks,
  taskUsage,
} from "@overseer/db";
import { decisionIdFor, isDomainError, type TaskStatus } from "@overseer/domain";
import { parseTaskFile, validateTaskList } from "@overseer/task-files";
import { actorOf } from "../../gateway-env.ts";
import { ApiError } from "../../http/api-error.ts";
import { existingIdProblems, idsInFile, rejectedFile } from "../../operations/task-file-problems.ts";
import { decisionCard, spendView, taskView } from "../../views/resource-views.ts";
import { existingProject, type GatewayHandler, notFoundInProject, type RouteContext } from "../route-kit.ts";
import type {
  cancelTaskRoute,
  createTaskRoute,
  getTaskRoute,
  importTasksRoute,
  listTasksRoute,
  releaseExternalTaskRoute,
} from "./definitions.ts";

export function listTasks({ deps }: RouteContext): GatewayHandler<typeof listTasksRoute> {
  return async (c) => {
    const { id } = c.req.valid("param");
    const q = c.req.valid("query");
    await existingProject(deps.db, id);
    const page = await queryTasks(deps.db, id, {
      status: q.status ? (q.status.split(",") as TaskStatus[]) : undefined,
      stage: q.stage,
      kind: q.kind,
      after: q.cursor ?? null,
      limit: q.limit,
    });
    return c.json({ tasks: page.tasks.map(taskView), next_cursor: page.next }, 200);
  };
}

export function getTask({ deps }: RouteContext): GatewayHandler<typeof getTaskRoute> {
  return async (c) => {
    const { id, task_id } = c.req.valid("param");
    const task = await findTask(deps.db, id, task_id);
    if (!task) throw await notFoundInProject(deps.db, id, "Task", task_id);
    const usage = await taskUsage(deps.db, id, task_id);
    return c.json({ ...taskView(task), usage: { ...usage, ...spendView(usage) } }, 200);
  };
}

export function createTask(ctx: RouteContext): GatewayHandler<typeof createTaskRoute> {
  const { db } = ctx.deps;
  return async (c) => {
    const { id } = c.req.valid("param");
    const body = c.req.valid("json");
    await existingProject(db, id);
    const existing = new Set(await existingTaskIds(db, id));
    if (existing.has(body.id)) {
      throw new ApiError(
        409,
        "already_exists",
        `Task ${body.id} already exists in project ${id}; choose another id.`,
        { task_id: body.id },
      );
    }
    const checked = validateTaskList([body], "request body", {
      existingIds: existing,
      maxTitleChars: ctx.options.maxTitleChars,
    });
    if (!checked.ok) throw rejectedFile(checked.problems);
    await ctx.transitions.apply(id, {
      kind: "import-tasks",
      tasks: checked.tasks,
      by: actorOf(c.get("token")),
    });
    const task = await findTask(db, id, body.id);
    if (!task) throw new Error(`task ${body.id} vanished after creation`);
    return c.json(taskView(task), 201);
  };
}

export function importTasks(ctx: RouteContext): GatewayHandler<typeof importTasksRoute> {
  const { db } = ctx.deps;
  return async (c) => {
    const { id } = c.req.valid("param");
    await existingProject(db, id);
    const type = c.req.header("content-type") ?? "";
    const format = /yaml/i.test(type) ? "yaml" : "json";
    const text = await c.req.text();
    const existing = new Set(await existingTaskIds(db, id));
    const parsed = parseTaskFile(text, format, "request body", {
      existingIds: existing,
      maxTasks: ctx.options.maxImportTasks,
      maxTitleChars: ctx.options.maxTitleChars,
      allowEmpty: false,
    });
    const clashes = existingIdProblems(idsInFile(text, format), existing, id, "request body");
    if (!parsed.ok || clashes.length > 0)
      throw rejectedFile([...(parsed.ok ? [] : parsed.problems), ...clashes]);
    try {
      await ctx.transitions.apply(id, {
        kind: "import-tasks",
        tasks: parsed.tasks,
        by: actorOf(c.get("token")),
      });
    } catch (error) {
      if (error instanceof ConflictError || (isDomainError(error) && error.code === "conflict")) {
        throw new ApiError(
          409,
          "conflict",
          `${error.message} Another import changed the project meanwhile; check the tasks and retry.`,
        );
      }
      throw error;
    }
    return c.json({ imported: parsed.tasks.length, task_ids: parsed.tasks.map((t) => t.id) }, 201);
  };
}

export function cancelTask(ctx: RouteContext): GatewayHandler<typeof cancelTaskRoute> {
  return async (c) => {
    const { id, task_id } = c.req.valid("param");
    const { reason } = c.req.valid("json");
    const result = await ctx.transitions.apply(id, {
      kind: "cancel",
      taskId: task_id,
      by: actorOf(c.get("token")),
      reason: reason?.trim() || undefined,
    });
    return c.json(await taskChange(ctx, id, task_id, result.outcome, result.changes.runs), 200);
  };
}

export function releaseExternalTask(ctx: RouteContext): GatewayHandler<typeof releaseExternalTaskRoute> {
  return async (c) => {
    const { id, task_id } = c.req.valid("param");
    const { reason } = c.req.valid("json");
    const result = await ctx.transitions.apply(id, {
      kind: "release-external",
      taskId: task_id,
      reason: reason.trim(),
      by: actorOf(c.get("token")),
    });
    return c.json(await taskChange(ctx, id, task_id, result.outcome, result.changes.runs), 200);
  };
}

/** The answer of a task transition: the task, its cancelled runs and its card. */
async function taskChange(
  ctx: RouteContext,
  projectId: string,
  taskId: string,
  outcome: "applied" | "already_applied",
  runs: readonly { id: string; status: string }[],
) {
  const [task, decision] = await Promise.all([
    findTask(ctx.deps.db, projectId, taskId),
    getDecision(ctx.deps.db, projectId, decisionIdFor(taskId)),
  ]);
  if (!task) throw new Error(`task ${taskId} vanished after a transition`);
  return {
    task: taskView(task),
    application_status: outcome,
    cancelled_runs: runs.filter((r) => r.status === "cancelled").map((r) => r.id),
    decision: decision ? decisionCard(decision) : null,
  };
}
