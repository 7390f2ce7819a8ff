import { z } from "@hono/zod-openapi";
import { formatZodIssues } from "@overseer/input-errors";
import type { McpToolSpec } from "./mcp-tools.ts";

/**
 * One MCP tool call as its HTTP route: the arguments are split into path parameters, query
 * and body, the request goes through `dispatch` (the gateway's own pipeline, with the caller's
 * Authorization header), and the answer comes back as the tool's result: the JSON answer as
 * text and structured content, or a tool error (`isError`) whose text is the gateway's own
 * error message (what was wrong, what to do) with the HTTP status and code.
 */

/** Sends a request through the gateway app (`app.request`) and answers its response. */
export type McpDispatch = (path: string, init: RequestInit) => Promise<Response>;

/** A `tools/call` result (the MCP `CallToolResult` shape this server answers). */
export interface ToolResult {
  [key: string]: unknown;
  content: { type: "text"; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/** What to send as the route: path with parameters, query string and body. */
interface RouteRequest {
  readonly path: string;
  readonly body?: { readonly text: string; readonly contentType: string };
}

class ToolInputError extends Error {}

export async function callTool(
  spec: McpToolSpec,
  rawArgs: unknown,
  dispatch: McpDispatch,
  headers: Readonly<Record<string, string>>,
): Promise<ToolResult> {
  let request: RouteRequest;
  try {
    request = routeRequest(spec, argumentsOf(spec, rawArgs));
  } catch (error) {
    if (error instanceof ToolInputError)
      return toolError(`Invalid arguments for ${spec.name}: ${error.message}`);
    throw error;
  }
  const init: RequestInit = {
    method: spec.route.method.toUpperCase(),
    headers: { ...headers, ...(request.body ? { "Content-Type": request.body.contentType } : {}) },
    ...(request.body ? { body: request.body.text } : {}),
  };
  const res = await dispatch(request.path, init);
  const text = await res.text();
  const json = parseJson(text);
  if (res.ok) {
    const structured = json !== null && typeof json === "object" && !Array.isArray(json);
    return {
      content: [{ type: "text", text: JSON.stringify(json, null, 2) }],
      ...(structured ? { structuredContent: json as Record<string, unknown> } : {}),
    };
  }
  return toolError(refusal(spec, res.status, json, text));
}

function argumentsOf(spec: McpToolSpec, raw: unknown): Record<string, unknown> {
  if (raw === undefined || raw === null) return {};
  if (typeof raw !== "object" || Array.isArray(raw))
    throw new ToolInputError(
      `expected an object of arguments, received ${Array.isArray(raw) ? "an array" : typeof raw}.`,
    );
  const args = raw as Record<string, unknown>;
  const accepted = acceptedArgs(spec);
  const unknown = Object.keys(args).filter((key) => !accepted.includes(key));
  if (unknown.length > 0)
    throw new ToolInputError(
      `unknown argument${unknown.length > 1 ? "s" : ""} ${unknown.map((k) => JSON.stringify(k.slice(0, 100))).join(", ")}; ${spec.name} takes ${accepted.join(", ") || "no arguments"}.`,
    );
  return args;
}

function acceptedArgs(spec: McpToolSpec): string[] {
  const body =
    spec.body.kind === "fields"
      ? spec.body.fields
      : spec.body.kind === "documents"
        ? ["tasks", "task_file"]
        : [];
  return [...Object.keys(spec.pathArgs), ...spec.queryArgs, ...body];
}

function routeRequest(spec: McpToolSpec, args: Record<string, unknown>): RouteRequest {
  const path = fillPath(spec, args);
  const query = new URLSearchParams();
  for (const name of spec.queryArgs) {
    const value = args[name];
    if (value !== undefined && value !== null) query.set(name, queryValue(name, value));
  }
  const search = query.size > 0 ? `?${query.toString()}` : "";
  return { path: `${path}${search}`, ...bodyOf(spec, args) };
}

/** The route's path with its parameters, validated with the route's own parameter schema. */
function fillPath(spec: McpToolSpec, args: Record<string, unknown>): string {
  const schema = spec.route.request?.params;
  const byParam = Object.fromEntries(Object.entries(spec.pathArgs).map(([arg, param]) => [param, args[arg]]));
  if (schema instanceof z.ZodType) {
    const parsed = schema.safeParse(byParam);
    if (!parsed.success) {
      const argOf = Object.fromEntries(Object.entries(spec.pathArgs).map(([arg, param]) => [param, arg]));
      const issues = parsed.error.issues.map((issue) => {
        const [first, ...rest] = issue.path;
        return { ...issue, path: [argOf[String(first)] ?? String(first), ...rest] };
      });
      const input = Object.fromEntries(Object.keys(spec.pathArgs).map((arg) => [arg, args[arg]]));
      throw new ToolInputError(`${formatZodIssues(issues, input)}.`);
    }
  }
  return spec.route.path.replace(/\{(\w+)\}/g, (_, param: string) =>
    encodeURIComponent(String(byParam[param])),
  );
}

function queryValue(name: string, value: unknown): string {
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (Array.isArray(value) && value.every((v) => typeof v === "string")) return value.join(",");
  throw new ToolInputError(
    `${name}: expected a string or a number, received ${Array.isArray(value) ? "an array" : typeof value}.`,
  );
}

function bodyOf(spec: McpToolSpec, args: Record<string, unknown>): Pick<RouteRequest, "body"> {
  if (spec.body.kind === "none") return {};
  if (spec.body.kind === "documents") {
    const { tasks, task_file: file } = args;
    if ((tasks === undefined) === (file === undefined))
      throw new ToolInputError(
        "give exactly one of tasks (an array of tasks) or task_file (the text of a YAML or JSON task file).",
      );
    if (file !== undefined) {
      if (typeof file !== "string")
        throw new ToolInputError(`task_file: expected the text of a task file, received ${typeof file}.`);
      return { body: { text: file, contentType: "application/yaml" } };
    }
    return { body: { text: JSON.stringify(tasks), contentType: "application/json" } };
  }
  const fields = Object.fromEntries(
    spec.body.fields.filter((f) => args[f] !== undefined).map((f) => [f, args[f]]),
  );
  if (!spec.body.required && Object.keys(fields).length === 0) return {};
  return { body: { text: JSON.stringify(fields), contentType: "application/json" } };
}

function parseJson(text: string): unknown {
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function toolError(text: string): ToolResult {
  return { isError: true, content: [{ type: "text", text }] };
}

/** What to do after each refusal, beyond the gateway's message. */
const NEXT_STEP: Readonly<Record<number, string>> = {
  403: "Connect the MCP client with a token of that scope (`overseer token create --scope operate`, or admin for stop).",
  429: "Wait as the message says, then call the tool again.",
};

/** The refusal as one paragraph: the gateway's message, its status and code, and what to do. */
function refusal(spec: McpToolSpec, status: number, json: unknown, text: string): string {
  const error = (json as { error?: { code?: unknown; message?: unknown } } | null)?.error;
  const code = typeof error?.code === "string" ? error.code : "error";
  const message = typeof error?.message === "string" ? error.message : text.slice(0, 500) || "(no message)";
  const next = NEXT_STEP[status];
  return `${spec.name} was refused (HTTP ${status} ${code}): ${message}${next ? ` ${next}` : ""}`;
}
