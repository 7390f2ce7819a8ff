import { z } from "@hono/zod-openapi";
import {
  ImportResultSchema,
  limitSchema,
  ProjectParams,
  ProjectTaskParams,
  ReleaseRequestSchema,
  stageSchema,
  TaskChangeSchema,
  TaskPageSchema,
  TaskSchema,
  taskCursorSchema,
  taskIdSchema,
} from "@overseer/api-contract";
import { ConflictError, existingTaskIds, getDecision, getTask, listTasks, taskUsage } from "@overseer/db";
import { decisionIdFor, isDomainError, TASK_KINDS, TASK_STATUSES, type TaskStatus } from "@overseer/domain";
import {
  parseStructuredText,
  parseTaskFile,
  type TaskFileProblem,
  validateTaskList,
} from "@overseer/task-files";
import { actorOf } from "../gateway-env.ts";
import { ApiError } from "../http/api-error.ts";
import { decisionCard, spendView, taskView } from "../views/resource-views.ts";
import {
  errorResponses,
  existingProject,
  guarded,
  jsonBody,
  jsonResponse,
  notFoundInProject,
  READ_ERRORS,
  type RouteApp,
  type RouteContext,
  tableRoute,
  WRITE_ERRORS,
} from "./route-kit.ts";

const STATUS_LIST_EXPECTED = `a comma-separated list of statuses (${TASK_STATUSES.join(", ")})`;

const TaskListQuery = z.object({
  status: z
    .string({ error: STATUS_LIST_EXPECTED })
    .regex(new RegExp(`^(${TASK_STATUSES.join("|")})(,(${TASK_STATUSES.join("|")}))*$`), {
      error: STATUS_LIST_EXPECTED,
    })
    .optional()
    .openapi({ example: "todo,awaiting_input" }),
  stage: stageSchema.optional(),
  kind: z.enum(TASK_KINDS, { error: `one of ${TASK_KINDS.join(", ")}` }).optional(),
  cursor: taskCursorSchema.optional(),
  limit: limitSchema(1000, 200),
});

/** One task, as in a task file (docs/state-machine.md card fields; defaults as in task files). */
const TaskCreateBody = z
  .strictObject({
    id: taskIdSchema,
    stage: z.string().nullish(),
    title: z.string({ error: "a non-empty single-line string" }),
    body: z.string().max(200_000, { error: "at most 200000 characters" }).nullish(),
    role: z.string().nullish(),
    scope: z.array(z.string(), { error: "an array of globs" }).nullish(),
    prerequisites: z.array(z.string(), { error: "an array of task ids" }).nullish(),
    acceptance: z
      .union([z.string(), z.array(z.string())], { error: "a string or an array of strings" })
      .nullish(),
    priority: z.int({ error: "an integer (higher runs first)" }).nullish(),
  })
  .openapi("TaskCreateRequest");

const ReasonOptional = z.strictObject({
  reason: z.string().max(2000, { error: "at most 2000 characters" }).optional(),
});

function rejectedFile(problems: readonly TaskFileProblem[]): ApiError {
  const count = problems.length === 1 ? "1 problem" : `${problems.length} problems`;
  const lines = problems.map((p) => p.message);
  return new ApiError(
    422,
    "invalid_task_file",
    `Task file rejected, nothing was imported (${count}): ${lines.join("; ")}`,
    { problems: problems.map((p) => ({ ...p })) },
  );
}

/** The string ids of a task file's entries, in file order (index = position), for the existing-id check. */
function idsInFile(text: string, format: "json" | "yaml"): string[] {
  const parsed = parseStructuredText(text, format);
  if (!parsed.ok) return [];
  const value = parsed.value as unknown;
  const entries = Array.isArray(value)
    ? value
    : value !== null && typeof value === "object" && Array.isArray((value as { tasks?: unknown }).tasks)
      ? (value as { tasks: unknown[] }).tasks
      : [];
  return entries.map((e) =>
    e !== null && typeof e === "object" && typeof (e as { id?: unknown }).id === "string"
      ? (e as { id: string }).id
      : "",
  );
}

/** Tasks already in the project cannot be imported again. */
function existingIdProblems(
  ids: readonly string[],
  existing: ReadonlySet<string>,
  projectId: string,
  source: string,
): TaskFileProblem[] {
  return ids
    .map((id, index) => ({ id, index }))
    .filter(({ id }) => existing.has(id))
    .map(({ id, index }) => ({
      kind: "duplicate-id" as const,
      source,
      index,
      taskId: id,
      message: `task #${index + 1} (${id}): a task with this id already exists in project ${projectId}; choose another id`,
    }));
}

/** `/api/v1/projects/{id}/tasks…`: list, get, create, import, cancel, release-external. */
export function registerTaskRoutes(app: RouteApp, ctx: RouteContext): void {
  const { db } = ctx.deps;

  app.openapi(
    guarded(
      ctx,
      tableRoute("listTasks", {
        method: "get",
        path: "/api/v1/projects/{id}/tasks",
        tags: ["Tasks"],
        summary: "List tasks (filters, cursor pagination)",
        description:
          "In creation order. Pass `next_cursor` back as `cursor` for the next page; null means the last page.",
        request: { params: ProjectParams, query: TaskListQuery },
        responses: {
          200: jsonResponse(TaskPageSchema, "One page of tasks."),
          ...errorResponses(...READ_ERRORS),
        },
      }),
    ),
    async (c) => {
      const { id } = c.req.valid("param");
      const q = c.req.valid("query");
      await existingProject(db, id);
      const page = await listTasks(db, id, {
        status: q.status ? (q.status.split(",") as TaskStatus[]) : undefined,
        stage: q.stage,
        kind: q.kind,
        after: q.cursor ?? null,
        limit: q.limit,
      });
      return c.json({ tasks: page.tasks.map(taskView), next_cursor: page.next }, 200);
    },
  );

  app.openapi(
    guarded(
      ctx,
      tableRoute("getTask", {
        method: "get",
        path: "/api/v1/projects/{id}/tasks/{task_id}",
        tags: ["Tasks"],
        summary: "Get a task",
        request: { params: ProjectTaskParams },
        responses: { 200: jsonResponse(TaskSchema, "The task."), ...errorResponses(...READ_ERRORS) },
      }),
    ),
    async (c) => {
      const { id, task_id } = c.req.valid("param");
      const task = await getTask(db, id, task_id);
      if (!task) throw await notFoundInProject(db, id, "Task", task_id);
      const usage = await taskUsage(db, id, task_id);
      return c.json({ ...taskView(task), usage: { ...usage, ...spendView(usage) } }, 200);
    },
  );

  app.openapi(
    guarded(
      ctx,
      tableRoute("createTask", {
        method: "post",
        path: "/api/v1/projects/{id}/tasks",
        tags: ["Tasks"],
        summary: "Create one task",
        description:
          "Validated like a task file entry (422 lists every problem); prerequisites must name existing tasks.",
        request: {
          params: ProjectParams,
          body: jsonBody(TaskCreateBody),
        },
        responses: { 201: jsonResponse(TaskSchema, "Created."), ...errorResponses(...WRITE_ERRORS) },
      }),
    ),
    async (c) => {
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
      const task = await getTask(db, id, body.id);
      if (!task) throw new Error(`task ${body.id} vanished after creation`);
      return c.json(taskView(task), 201);
    },
  );

  app.openapi(
    guarded(
      ctx,
      tableRoute("importTasks", {
        method: "post",
        path: "/api/v1/projects/{id}/tasks/import",
        tags: ["Tasks"],
        summary: "Import a task file (JSON or YAML), all or nothing",
        description:
          "The body is a task file: an array of tasks or `{ tasks: [...] }`, as `application/json` or `application/yaml`, with at least one task and at most `maxImportTasks` (OVERSEER_MAX_IMPORT_TASKS, default 10000), titles of at most OVERSEER_MAX_TITLE_CHARS (default 500). Every problem (syntax, fields, duplicate or existing ids, unknown prerequisites, cycles, globs) is reported at once with 422 and nothing is imported.",
        request: {
          params: ProjectParams,
          body: {
            content: {
              "application/json": { schema: { type: "array", items: { type: "object" } } },
              "application/yaml": { schema: { type: "string" } },
            },
            required: true,
          },
        },
        responses: { 201: jsonResponse(ImportResultSchema, "Imported."), ...errorResponses(...WRITE_ERRORS) },
      }),
    ),
    async (c) => {
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
    },
  );

  app.openapi(
    guarded(
      ctx,
      tableRoute("cancelTask", {
        method: "post",
        path: "/api/v1/projects/{id}/tasks/{task_id}/cancel",
        tags: ["Tasks"],
        summary: "Cancel a task",
        description:
          "Cancels the task and its active runs (their queued jobs are removed); a blocked original waiting on a cancelled resolver gets a card.",
        request: {
          params: ProjectTaskParams,
          body: jsonBody(ReasonOptional, false),
        },
        responses: { 200: jsonResponse(TaskChangeSchema, "Cancelled."), ...errorResponses(...WRITE_ERRORS) },
      }),
    ),
    async (c) => {
      const { id, task_id } = c.req.valid("param");
      const { reason } = c.req.valid("json");
      const result = await ctx.transitions.apply(id, {
        kind: "cancel",
        taskId: task_id,
        by: actorOf(c.get("token")),
        reason: reason?.trim() || undefined,
      });
      return c.json(await taskChange(ctx, id, task_id, result.outcome, result.changes.runs), 200);
    },
  );

  app.openapi(
    guarded(
      ctx,
      tableRoute("releaseExternalTask", {
        method: "post",
        path: "/api/v1/projects/{id}/tasks/{task_id}/release-external",
        tags: ["Tasks"],
        summary: "Release a resolver awaiting an external action",
        description:
          "docs/state-machine.md rule 7: makes an awaiting_input resolver runnable again with `reason` in its next prompt. It does not complete the resolver nor unblock the original.",
        request: {
          params: ProjectTaskParams,
          body: jsonBody(ReleaseRequestSchema),
        },
        responses: { 200: jsonResponse(TaskChangeSchema, "Released."), ...errorResponses(...WRITE_ERRORS) },
      }),
    ),
    async (c) => {
      const { id, task_id } = c.req.valid("param");
      const { reason } = c.req.valid("json");
      const result = await ctx.transitions.apply(id, {
        kind: "release-external",
        taskId: task_id,
        reason: reason.trim(),
        by: actorOf(c.get("token")),
      });
      return c.json(await taskChange(ctx, id, task_id, result.outcome, result.changes.runs), 200);
    },
  );
}

async function taskChange(
  ctx: RouteContext,
  projectId: string,
  taskId: string,
  outcome: "applied" | "already_applied",
  runs: readonly { id: string; status: string }[],
) {
  const [task, decision] = await Promise.all([
    getTask(ctx.deps.db, projectId, taskId),
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
