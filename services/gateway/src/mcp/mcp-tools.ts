import { z } from "@hono/zod-openapi";
import { type JsonSchemaObject, type OperationId, toolInputJsonSchema } from "@overseer/api-contract";
import * as argus from "../routes/argus/definitions.ts";
import * as fleet from "../routes/fleet/definitions.ts";
import * as project from "../routes/project/definitions.ts";
import * as run from "../routes/run/definitions.ts";
import * as task from "../routes/task/definitions.ts";
import * as transcript from "../routes/transcript/definitions.ts";

/**
 * The MCP server's tools. Each one IS a route of the HTTP API: its name, its route definition
 * (operation id, method, path, request schemas) and how its arguments are named. A call is sent
 * through the gateway's own request pipeline as that route with the caller's token
 * (`mcp-tool-call.ts`), so authentication, the authorization table's scope, validation, rate
 * limits and the handler are exactly the HTTP route's. The argument schema a client sees is
 * rendered from the route's own zod schemas (`toolInputJsonSchema` of `@overseer/api-contract`):
 * path parameters (renamed where `id` would be ambiguous), query parameters and body fields,
 * flattened into one object.
 */

/** What a tool needs of a route definition (`tableRoute` of `routes/<family>/definitions.ts`). */
export interface ToolRoute {
  readonly operationId: OperationId;
  readonly method: string;
  readonly path: string;
  readonly summary?: string;
  readonly description?: string;
  readonly request?: {
    readonly params?: unknown;
    readonly query?: unknown;
    readonly body?: { readonly content: Record<string, { readonly schema?: unknown }> };
  };
}

/** MCP tool annotations (hints for the client; the gateway enforces the real rules). */
export interface ToolHints {
  readonly readOnlyHint: boolean;
  readonly destructiveHint: boolean;
  readonly idempotentHint: boolean;
  readonly openWorldHint: false;
}

export interface McpToolSpec {
  readonly name: string;
  readonly title: string;
  readonly route: ToolRoute;
  /** The route's path parameters by the argument name the tool gives them (`project_id` for `{id}`). */
  readonly pathArgs: Readonly<Record<string, string>>;
  /** Arguments sent as the query string. */
  readonly queryArgs: readonly string[];
  /** Arguments sent as JSON body fields; `whole` sends one argument as the whole body. */
  readonly body:
    | { readonly kind: "none" }
    | { readonly kind: "fields"; readonly required: boolean; readonly fields: readonly string[] }
    | { readonly kind: "documents" };
  readonly inputSchema: JsonSchemaObject;
  readonly hints: ToolHints;
}

const READ: ToolHints = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
};
const WRITE: ToolHints = {
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: false,
  openWorldHint: false,
};
const IDEMPOTENT: ToolHints = { ...WRITE, idempotentHint: true };
const DESTRUCTIVE: ToolHints = { ...WRITE, destructiveHint: true, idempotentHint: true };

/** `{id}` of a `/projects/{id}` route is the project; of `/runs/{id}` the run. */
const PROJECT = { id: "project_id" } as const;
const RUN = { id: "run_id" } as const;

function objectShape(schema: unknown, what: string): Record<string, z.ZodType> {
  if (schema === undefined) return {};
  if (!(schema instanceof z.ZodObject)) throw new Error(`${what} is not a zod object schema`);
  return schema.shape as Record<string, z.ZodType>;
}

/** The JSON body schema of a route, when it has a zod one. */
function jsonBodyOf(route: ToolRoute): { schema: z.ZodObject; required: boolean } | undefined {
  const body = route.request?.body as
    | { content: Record<string, { schema?: unknown }>; required?: boolean }
    | undefined;
  const schema = body?.content["application/json"]?.schema;
  if (schema === undefined) return undefined;
  if (!(schema instanceof z.ZodObject)) return undefined;
  return { schema, required: body?.required !== false };
}

/** Merges the parts' shapes into the tool's one argument object; a name used twice is a bug here. */
function mergeShapes(name: string, parts: Record<string, z.ZodType>[]): Record<string, z.ZodType> {
  const out: Record<string, z.ZodType> = {};
  for (const part of parts)
    for (const [key, schema] of Object.entries(part)) {
      if (key in out)
        throw new Error(`MCP tool ${name}: argument ${key} is both a path/query parameter and a body field`);
      out[key] = schema;
    }
  return out;
}

/** A tool over `route`: its arguments are the route's path parameters (renamed), query and JSON body fields. */
function routeTool(
  name: string,
  title: string,
  route: ToolRoute,
  hints: ToolHints,
  rename: Readonly<Record<string, string>> = {},
): McpToolSpec {
  const params = objectShape(route.request?.params, `${name}: path parameters`);
  const pathArgs = Object.fromEntries(Object.keys(params).map((p) => [rename[p] ?? p, p]));
  const renamed = Object.fromEntries(Object.entries(params).map(([p, s]) => [rename[p] ?? p, s]));
  const query = objectShape(route.request?.query, `${name}: query`);
  const json = jsonBodyOf(route);
  const fields = json ? (json.schema.shape as Record<string, z.ZodType>) : {};
  const shape = mergeShapes(name, [renamed, query, fields]);
  return {
    name,
    title,
    route,
    pathArgs,
    queryArgs: Object.keys(query),
    body: json ? { kind: "fields", required: json.required, fields: Object.keys(fields) } : { kind: "none" },
    inputSchema: toolInputJsonSchema(z.strictObject(shape)),
    hints,
  };
}

/**
 * `import_tasks`: the import route takes a task file as the whole body (a JSON array of tasks, or
 * YAML text). Its arguments are the project and one of `tasks` (each a task as `add_task` takes
 * it, the create route's body) or `task_file` (the text of a YAML or JSON task file).
 */
function importTool(): McpToolSpec {
  const route: ToolRoute = task.importTasksRoute;
  const params = objectShape(route.request?.params, "import_tasks: path parameters");
  const taskBody = jsonBodyOf(task.createTaskRoute);
  if (!taskBody) throw new Error("the create-task route has no JSON body schema");
  const shape = {
    project_id: params.id as z.ZodType,
    tasks: z
      .array(taskBody.schema)
      .optional()
      .openapi({ description: "The tasks to import, each as add_task takes it (give this or task_file)." }),
    task_file: z
      .string()
      .optional()
      .openapi({ description: "The text of a task file, YAML or JSON (give this or tasks)." }),
  };
  return {
    name: "import_tasks",
    title: "Import a task file",
    route,
    pathArgs: { project_id: "id" },
    queryArgs: [],
    body: { kind: "documents" },
    inputSchema: toolInputJsonSchema(z.strictObject(shape)),
    hints: WRITE,
  };
}

/** Every tool of the MCP server, in the order `tools/list` gives them. */
export const MCP_TOOLS: readonly McpToolSpec[] = [
  routeTool("fleet_status", "Fleet status", fleet.getFleetRoute, READ),
  routeTool("list_projects", "List projects", project.listProjectsRoute, READ),
  routeTool("get_project", "Get a project", project.getProjectRoute, READ, PROJECT),
  routeTool("list_tasks", "List tasks", task.listTasksRoute, READ, PROJECT),
  routeTool("get_task", "Get a task", task.getTaskRoute, READ, PROJECT),
  routeTool("list_runs", "List runs", run.listRunsRoute, READ, PROJECT),
  routeTool("get_run", "Get a run", run.getRunRoute, READ, RUN),
  routeTool("get_run_transcript", "A run's transcript", transcript.getRunTranscriptRoute, READ, PROJECT),
  routeTool(
    "get_task_transcript",
    "What the agents did on a task",
    transcript.getTaskTranscriptRoute,
    READ,
    PROJECT,
  ),
  routeTool("get_run_log", "A run's stored output", run.getRunLogRoute, READ, RUN),
  routeTool("get_run_diff", "A run's commit diff", fleet.getRunDiffRoute, READ, RUN),
  routeTool("add_task", "Add a task", task.createTaskRoute, WRITE, PROJECT),
  importTool(),
  routeTool("start_project", "Start a project", fleet.startProjectRoute, WRITE, PROJECT),
  routeTool("pause_project", "Pause a project", project.pauseProjectRoute, IDEMPOTENT, PROJECT),
  routeTool("resume_project", "Resume a project", project.resumeProjectRoute, IDEMPOTENT, PROJECT),
  routeTool("stop_project", "Stop a project", project.stopProjectRoute, DESTRUCTIVE, PROJECT),
  routeTool("list_needs_you", 'List "Needs you" decisions', fleet.listFleetDecisionsRoute, READ),
  routeTool("get_decision", "Get a decision card", project.getDecisionRoute, READ, PROJECT),
  routeTool("resolve_decision", "Resolve a decision", argus.resolveDecisionRoute, IDEMPOTENT, PROJECT),
];

/** The tool's description: the route's summary and description (which ends with its scope), and the route. */
export function toolDescription(spec: McpToolSpec): string {
  const { route } = spec;
  const lead = [route.summary, route.description].filter(Boolean).join(". ");
  return `${lead} (HTTP: ${route.method.toUpperCase()} ${route.path}.)`;
}
