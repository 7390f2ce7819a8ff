import {
  createRoute,
  type OpenAPIHono,
  type RouteConfig,
  type RouteHandler,
  type z,
} from "@hono/zod-openapi";
import {
  AUTHORIZATION_TABLE,
  type AuthorizationRule,
  ErrorBodySchema,
  type OperationId,
} from "@overseer/api-contract";
import { type Db, getProject, type ProjectRow } from "@overseer/db";
import type { MiddlewareHandler } from "hono";
import type { BoardSessions } from "../admin/board-sessions.ts";
import type { GatewayEnv } from "../gateway-env.ts";
import type { GatewayDeps, ResolvedGatewayOptions } from "../gateway-options.ts";
import { ApiError } from "../http/api-error.ts";
import type { EncodedBody } from "../http/encoded-body.ts";
import type { TokenVerifier } from "../http/token-verifier.ts";
import type { ProjectEventSubscriber } from "../live/project-event-subscriber.ts";
import type { ProjectStatusCache } from "../live/project-status-cache.ts";
import type { SharedRefresh } from "../live/shared-refresh.ts";
import type { StreamRegistry } from "../live/stream-registry.ts";
import type { GatewayMetrics } from "../metrics/gateway-metrics.ts";
import type { OperatorTransitions } from "../operations/operator-transitions.ts";

/** Everything a route module needs; built once per app by `createGatewayApp`. */
export interface RouteContext {
  readonly deps: GatewayDeps;
  readonly options: ResolvedGatewayOptions;
  readonly transitions: OperatorTransitions;
  readonly streams: StreamRegistry;
  readonly subscriber: ProjectEventSubscriber;
  readonly metrics: GatewayMetrics;
  readonly verifier: TokenVerifier;
  readonly statusCache: ProjectStatusCache;
  /** The fleet overview's serialized answer, shared by its pollers (`live/fleet-answer.ts`). */
  readonly fleetCache: SharedRefresh<EncodedBody>;
  /** The pools live workers serve, shared by status requests (`live/served-pools.ts`). */
  readonly servedPools: SharedRefresh<ReadonlySet<string> | null>;
  /** Bull Board sessions (ended on revocation by the token routes). */
  readonly boardSessions: BoardSessions;
  /** The authorization table's guard of an operation (`http/authorization-guard.ts`). */
  readonly authorize: (operationId: OperationId) => MiddlewareHandler<GatewayEnv>;
}

/** The bare router every route module registers on (the full app, with its controls, is `GatewayApp`). */
export type RouteApp = OpenAPIHono<GatewayEnv>;

/**
 * A route definition of the authorization table (`createRoute` of `@hono/zod-openapi`): it gets
 * its operation id, and the table's access sentence ends its description; its method and path
 * must be the table's (a mismatch throws when the definitions module loads, so at startup).
 * The table's guard is attached when the route is registered ({@link guarded}).
 */
export function tableRoute<
  const Id extends OperationId,
  P extends string,
  R extends Omit<RouteConfig, "path" | "middleware" | "operationId"> & { path: P },
>(operationId: Id, route: R) {
  const rule: AuthorizationRule = AUTHORIZATION_TABLE[operationId];
  if (rule.method !== route.method || rule.path !== route.path) {
    throw new Error(
      `Operation ${operationId} is ${rule.method} ${rule.path} in the authorization table, not ${route.method} ${route.path}.`,
    );
  }
  const description = [route.description, accessSentence(rule)].filter(Boolean).join(" ");
  return createRoute({ ...route, operationId, description });
}

/** A route of the table, as {@link tableRoute} defines it. */
export type TableRoute = RouteConfig & { operationId: OperationId };

/** The route with the table's guard of its operation as its only middleware, ready for `app.openapi`. */
export function guarded<R extends TableRoute>(
  ctx: Pick<RouteContext, "authorize">,
  route: R,
): R & { middleware: [MiddlewareHandler<GatewayEnv>] } {
  return { ...route, middleware: [ctx.authorize(route.operationId)] };
}

/** A route's handler over the gateway's context variables. */
export type GatewayHandler<R extends RouteConfig> = RouteHandler<R, GatewayEnv>;

/** What the OpenAPI document says of a row's access, from the table itself. */
function accessSentence(rule: AuthorizationRule): string {
  if (rule.scope === "public") return "No token needed.";
  const states = Object.entries(rule.byProjectStatus ?? {}).map(
    ([status, scope]) => `${scope} while the project is ${status}`,
  );
  return `Scope ${rule.scope}${states.length ? ` (${states.join(", ")})` : ""}.`;
}

export function jsonResponse<T extends z.ZodType>(schema: T, description: string) {
  return { content: { "application/json": { schema } }, description } as const;
}

/** A JSON request body of `schema`; `required: false` also accepts a request without one. */
export function jsonBody<T extends z.ZodType, const R extends boolean = true>(schema: T, required?: R) {
  return { content: { "application/json": { schema } }, required: (required ?? true) as R } as const;
}

const ERROR_DESCRIPTIONS = {
  400: "Invalid input: the message names each field, what was expected and what was received.",
  401: "Missing, unknown or revoked bearer token.",
  403: "The token's scope does not allow this route.",
  404: "No such project, task, run, decision or token.",
  406: "The Accept header does not allow the answer (an MCP client must accept application/json and text/event-stream).",
  409: "Conflicts with the current state (transition not allowed, stale decision, concurrent change).",
  413: "Request body too large.",
  415: "Unsupported Content-Type.",
  422: "Well-formed but refused (invalid option, note required, invalid runner config or task file).",
  429: "Too many write requests for this token; see Retry-After.",
  502: "An outside service the route asked (a tracker) refused or could not be reached; the message carries its error.",
  503: "A dependency (Postgres, Redis) is unavailable, or too many streams are open.",
} as const;

type ErrorStatus = keyof typeof ERROR_DESCRIPTIONS;

/** Standard error responses of a route: every one is `{ error: { code, message, details } }`. */
export function errorResponses<const S extends readonly ErrorStatus[]>(...statuses: S) {
  const out: Record<
    number,
    { content: { "application/json": { schema: typeof ErrorBodySchema } }; description: string }
  > = {};
  for (const status of statuses) out[status] = jsonResponse(ErrorBodySchema, ERROR_DESCRIPTIONS[status]);
  return out as {
    [K in S[number]]: {
      content: { "application/json": { schema: typeof ErrorBodySchema } };
      description: string;
    };
  };
}

/** Errors every authenticated read can answer. */
export const READ_ERRORS = [400, 401, 403, 404] as const;
/** Errors every authenticated write can answer. */
export const WRITE_ERRORS = [400, 401, 403, 404, 409, 413, 415, 422, 429] as const;

/** 404 for an unknown project id, the same words on every route. */
export function projectNotFound(id: string): ApiError {
  return new ApiError(
    404,
    "not_found",
    `Project ${id} does not exist; list projects with GET /api/v1/projects.`,
    {
      project_id: id,
    },
  );
}

/** The project with this id, or the 404 of {@link projectNotFound}. */
export async function existingProject(db: Db, id: string): Promise<ProjectRow> {
  const row = await getProject(db, id);
  if (!row) throw projectNotFound(id);
  return row;
}

/** 404 for a task or decision missing from a project; the project's own 404 when the project is unknown. */
export async function notFoundInProject(
  db: Db,
  projectId: string,
  kind: "Task" | "Decision",
  id: string,
): Promise<ApiError> {
  await existingProject(db, projectId);
  const field = kind === "Task" ? "task_id" : "decision_id";
  return new ApiError(404, "not_found", `${kind} ${id} does not exist in project ${projectId}.`, {
    [field]: id,
  });
}

/** 404 for an unknown run id, the same words on every route. */
export function runNotFound(id: string): ApiError {
  return new ApiError(
    404,
    "not_found",
    `Run ${id} does not exist; list runs with GET /api/v1/projects/{id}/runs.`,
    { run_id: id },
  );
}

/**
 * A newest-first page read with one row more than `limit`: the first `limit` rows, and the id to
 * give as `before` for the next (older) page, null on the last.
 */
export function newestFirstPage<T extends { id: string | number }>(
  rows: readonly T[],
  limit: number,
): { page: T[]; nextBefore: string | null } {
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return { page, nextBefore: rows.length > limit && last ? String(last.id) : null };
}
