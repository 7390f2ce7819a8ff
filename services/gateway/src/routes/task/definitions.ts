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
import { TASK_KINDS, TASK_STATUSES } from "@overseer/domain";
import {
  errorResponses,
  jsonBody,
  jsonResponse,
  READ_ERRORS,
  tableRoute,
  WRITE_ERRORS,
} from "../route-kit.ts";

/** `/api/v1/projects/{id}/tasks…`: list, get, create, import, cancel, release-external. */

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

export const listTasksRoute = tableRoute("listTasks", {
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
});

export const getTaskRoute = tableRoute("getTask", {
  method: "get",
  path: "/api/v1/projects/{id}/tasks/{task_id}",
  tags: ["Tasks"],
  summary: "Get a task",
  request: { params: ProjectTaskParams },
  responses: { 200: jsonResponse(TaskSchema, "The task."), ...errorResponses(...READ_ERRORS) },
});

export const createTaskRoute = tableRoute("createTask", {
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
});

export const importTasksRoute = tableRoute("importTasks", {
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
});

export const cancelTaskRoute = tableRoute("cancelTask", {
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
});

export const releaseExternalTaskRoute = tableRoute("releaseExternalTask", {
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
});
