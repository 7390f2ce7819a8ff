import { PROJECT_STATUSES, type ProjectStatus } from "@overseer/domain";

/**
 * The authorization table: for every operation of the OpenAPI document (keyed by its
 * `operationId`), the least token scope it needs, and where the project's state matters, the
 * least scope by state of the project named by `{id}`. It is the only place scopes are decided:
 * the gateway enforces it in one guard (`services/gateway/src/http/authorization-guard.ts`), its
 * generated test (`services/gateway/test/authorization-table.test.ts`) checks every row against
 * the real gateway, and docs/http-api.md shows it as `renderAuthorizationMarkdown()` renders it.
 *
 * Scopes are ordered read < operate < admin: a token grants its scope and everything below.
 * `public` needs no token (page shells that hold no data).
 */
export const API_SCOPES = ["read", "operate", "admin"] as const;
export type ApiScope = (typeof API_SCOPES)[number];
export type Access = "public" | ApiScope;

export interface AuthorizationRule {
  readonly method: "get" | "post" | "patch" | "delete";
  /** OpenAPI path template. */
  readonly path: string;
  /** Least scope in every project state (or when the route names no project). */
  readonly scope: Access;
  /**
   * Least scope when the project `{id}` is in this state, where it is higher than `scope`. A
   * stop is the admin's: whatever would take a stopped project out of `stopped` (pause, resume,
   * start, mission) is the admin's too.
   */
  readonly byProjectStatus?: Readonly<Partial<Record<ProjectStatus, ApiScope>>>;
}

/** Leaving `stopped` is an admin's decision, as stopping is. */
const ADMIN_WHEN_STOPPED = { stopped: "admin" } as const;

export const AUTHORIZATION_TABLE = {
  // Argus-compatible routes
  getArgusStatus: { method: "get", path: "/api/projects/{id}/status", scope: "read" },
  getArgusSnapshot: { method: "get", path: "/api/projects/{id}/snapshot", scope: "read" },
  resolveDecision: {
    method: "post",
    path: "/api/projects/{id}/decisions/{decision_id}/resolve",
    scope: "operate",
  },
  answerBacklogItem: {
    method: "post",
    path: "/api/projects/{id}/backlog/{item_id}/answer",
    scope: "operate",
  },
  routeMessage: { method: "post", path: "/api/projects/{id}/message", scope: "operate" },
  streamProjectEvents: { method: "get", path: "/api/projects/{id}/events/stream", scope: "read" },
  streamRunLog: { method: "get", path: "/api/runs/{id}/log/stream", scope: "read" },
  // Projects
  listProjects: { method: "get", path: "/api/v1/projects", scope: "read" },
  createProject: { method: "post", path: "/api/v1/projects", scope: "admin" },
  getProject: { method: "get", path: "/api/v1/projects/{id}", scope: "read" },
  updateProject: { method: "patch", path: "/api/v1/projects/{id}", scope: "admin" },
  pauseProject: {
    method: "post",
    path: "/api/v1/projects/{id}/pause",
    scope: "operate",
    byProjectStatus: ADMIN_WHEN_STOPPED,
  },
  resumeProject: {
    method: "post",
    path: "/api/v1/projects/{id}/resume",
    scope: "operate",
    byProjectStatus: ADMIN_WHEN_STOPPED,
  },
  stopProject: { method: "post", path: "/api/v1/projects/{id}/stop", scope: "admin" },
  startProject: {
    method: "post",
    path: "/api/v1/projects/{id}/start",
    scope: "operate",
    byProjectStatus: ADMIN_WHEN_STOPPED,
  },
  startMission: {
    method: "post",
    path: "/api/v1/projects/{id}/mission",
    scope: "operate",
    byProjectStatus: ADMIN_WHEN_STOPPED,
  },
  listDecisions: { method: "get", path: "/api/v1/projects/{id}/decisions", scope: "read" },
  getDecision: { method: "get", path: "/api/v1/projects/{id}/decisions/{decision_id}", scope: "read" },
  listIncidents: { method: "get", path: "/api/v1/projects/{id}/incidents", scope: "read" },
  // Tasks
  listTasks: { method: "get", path: "/api/v1/projects/{id}/tasks", scope: "read" },
  createTask: { method: "post", path: "/api/v1/projects/{id}/tasks", scope: "operate" },
  importTasks: { method: "post", path: "/api/v1/projects/{id}/tasks/import", scope: "operate" },
  getTask: { method: "get", path: "/api/v1/projects/{id}/tasks/{task_id}", scope: "read" },
  cancelTask: { method: "post", path: "/api/v1/projects/{id}/tasks/{task_id}/cancel", scope: "operate" },
  releaseExternalTask: {
    method: "post",
    path: "/api/v1/projects/{id}/tasks/{task_id}/release-external",
    scope: "operate",
  },
  // Runs and events
  listRuns: { method: "get", path: "/api/v1/projects/{id}/runs", scope: "read" },
  getRun: { method: "get", path: "/api/v1/runs/{id}", scope: "read" },
  getRunPrompt: { method: "get", path: "/api/v1/runs/{id}/prompt", scope: "read" },
  getRunLog: { method: "get", path: "/api/v1/runs/{id}/log", scope: "read" },
  getRunDiff: { method: "get", path: "/api/v1/runs/{id}/diff", scope: "read" },
  getRunTranscript: { method: "get", path: "/api/v1/projects/{id}/runs/{run_id}/transcript", scope: "read" },
  getTaskTranscript: {
    method: "get",
    path: "/api/v1/projects/{id}/tasks/{task_id}/transcript",
    scope: "read",
  },
  listProjectEvents: { method: "get", path: "/api/v1/projects/{id}/events", scope: "read" },
  // Fleet and cluster
  getSession: { method: "get", path: "/api/v1/session", scope: "read" },
  getFleet: { method: "get", path: "/api/v1/fleet", scope: "read" },
  listFleetDecisions: { method: "get", path: "/api/v1/decisions", scope: "read" },
  listFleetIncidents: { method: "get", path: "/api/v1/incidents", scope: "read" },
  getRunStats: { method: "get", path: "/api/v1/stats/runs", scope: "read" },
  listWorkers: { method: "get", path: "/api/v1/workers", scope: "read" },
  drainWorker: { method: "post", path: "/api/v1/workers/{worker_id}/drain", scope: "admin" },
  listQueues: { method: "get", path: "/api/v1/queues", scope: "read" },
  // Tokens and the queue board
  listTokens: { method: "get", path: "/api/v1/tokens", scope: "admin" },
  createToken: { method: "post", path: "/api/v1/tokens", scope: "admin" },
  revokeToken: { method: "delete", path: "/api/v1/tokens/{token_id}", scope: "admin" },
  openQueueBoardSession: { method: "post", path: "/api/v1/admin/queues/session", scope: "admin" },
  // Notifications: subscriptions (their URLs and secrets are the admin's), deliveries, redelivery
  listSubscriptions: { method: "get", path: "/api/v1/notifications/subscriptions", scope: "read" },
  createSubscription: { method: "post", path: "/api/v1/notifications/subscriptions", scope: "admin" },
  removeSubscription: {
    method: "delete",
    path: "/api/v1/notifications/subscriptions/{subscription_id}",
    scope: "admin",
  },
  testSubscription: {
    method: "post",
    path: "/api/v1/notifications/subscriptions/{subscription_id}/test",
    scope: "operate",
  },
  rotateSubscriptionSecret: {
    method: "post",
    path: "/api/v1/notifications/subscriptions/{subscription_id}/rotate-secret",
    scope: "admin",
  },
  listDeliveries: { method: "get", path: "/api/v1/notifications/deliveries", scope: "read" },
  redeliverDelivery: {
    method: "post",
    path: "/api/v1/notifications/deliveries/{delivery_id}/redeliver",
    scope: "operate",
  },
  // Tracker intake: sources (which env var holds the token is the admin's), dry run, webhooks
  listIntakeSources: { method: "get", path: "/api/v1/projects/{id}/intake/sources", scope: "read" },
  createIntakeSource: { method: "post", path: "/api/v1/projects/{id}/intake/sources", scope: "admin" },
  removeIntakeSource: {
    method: "delete",
    path: "/api/v1/projects/{id}/intake/sources/{source_id}",
    scope: "admin",
  },
  testIntakeSource: {
    method: "post",
    path: "/api/v1/projects/{id}/intake/sources/{source_id}/test",
    scope: "operate",
  },
  // Two-way status: what Overseer wrote back to the trackers, and dead letters sent again
  listTrackerUpdates: { method: "get", path: "/api/v1/intake/updates", scope: "read" },
  redeliverTrackerUpdate: {
    method: "post",
    path: "/api/v1/intake/updates/{update_id}/redeliver",
    scope: "operate",
  },
  // Tracker webhooks: no token; each delivery carries the tracker's signature of the source's secret
  receiveIntakeWebhook: {
    method: "post",
    path: "/api/v1/intake/sources/{source_id}/webhook",
    scope: "public",
  },
  // Forge webhooks: no token; each delivery carries the forge's signature of the shared secret
  receiveForgeWebhook: { method: "post", path: "/api/v1/forge/{id}/webhooks/{forge}", scope: "public" },
  // Slack button clicks: no token; each carries Slack's signature, and acts as the clicker's mapped token
  receiveSlackInteraction: { method: "post", path: "/api/v1/slack/interactions", scope: "public" },
  // MCP (Model Context Protocol) over streamable HTTP: each tool call is then authorized as its own route
  callMcp: { method: "post", path: "/mcp", scope: "read" },
  // Operations and pages
  getHealth: { method: "get", path: "/healthz", scope: "read" },
  getReadiness: { method: "get", path: "/readyz", scope: "read" },
  getMetrics: { method: "get", path: "/metrics", scope: "read" },
  getOpenApiDocument: { method: "get", path: "/openapi.json", scope: "read" },
  getWebApp: { method: "get", path: "/", scope: "public" },
  getApiReference: { method: "get", path: "/docs", scope: "public" },
} as const satisfies Record<string, AuthorizationRule>;

export type OperationId = keyof typeof AUTHORIZATION_TABLE;

/**
 * The Bull Board's scope, for its page, its reads and its writes alike (pausing the
 * cluster-wide `runs` queue, retrying, cleaning or removing jobs are admin decisions): a
 * session is opened by an admin token and lives only while that token is unrevoked and admin.
 */
export const QUEUE_BOARD_SCOPE = "admin" satisfies ApiScope;

/**
 * Paths outside the OpenAPI document, with how they are authorized (shown with the table):
 * the web app's hashed assets, and the Bull Board, which a browser opens with a session
 * cookie from `openQueueBoardSession` instead of a bearer header.
 */
export const UNLISTED_PATHS = [
  { path: "/assets/{name}", access: "public", note: "the web app's built code and styles; no data" },
  {
    path: "/admin/queues/…",
    access: QUEUE_BOARD_SCOPE,
    note: "Bull Board, reads and writes: a session cookie bound to the admin token that opened it (one per token); every request checks that the token is still unrevoked and admin; writes (and `POST /admin/queues/logout`) need a same-origin `Origin`",
  },
  {
    path: "/mcp (GET, DELETE)",
    access: "read",
    note: "405 with `Allow: POST`: the MCP endpoint is stateless, with no server-initiated stream to open and no session to end",
  },
] as const satisfies readonly { path: string; access: Access; note: string }[];

/** The rule of an operation id, or undefined when the id is not in the table. */
export function authorizationRule(operationId: string): AuthorizationRule | undefined {
  return Object.hasOwn(AUTHORIZATION_TABLE, operationId)
    ? AUTHORIZATION_TABLE[operationId as OperationId]
    : undefined;
}

/** read < operate < admin: does `granted` include `required`? */
export function scopeGrants(granted: ApiScope, required: ApiScope): boolean {
  return API_SCOPES.indexOf(granted) >= API_SCOPES.indexOf(required);
}

/** The least scope the rule needs for a project in `status` (its base scope without one). */
export function requiredAccess(rule: AuthorizationRule, status?: ProjectStatus): Access {
  if (status === undefined || rule.scope === "public") return rule.scope;
  const byStatus = rule.byProjectStatus?.[status];
  return byStatus !== undefined && !scopeGrants(rule.scope, byStatus) ? byStatus : rule.scope;
}

/** The project states in which a token of `scope` may call the rule's operation. */
export function projectStatusesAllowed(rule: AuthorizationRule, scope: ApiScope): ProjectStatus[] {
  return PROJECT_STATUSES.filter((status) => {
    const needed = requiredAccess(rule, status);
    return needed === "public" || scopeGrants(scope, needed);
  });
}

/** The table as docs/http-api.md shows it (compared by test). */
export function renderAuthorizationMarkdown(): string {
  const lines = ["| operation | route | least scope | by project state |", "| --- | --- | --- | --- |"];
  for (const [id, rule] of Object.entries(AUTHORIZATION_TABLE) as [OperationId, AuthorizationRule][]) {
    const states = Object.entries(rule.byProjectStatus ?? {})
      .map(([status, scope]) => `${status}: ${scope}`)
      .join(", ");
    lines.push(
      `| \`${id}\` | \`${rule.method.toUpperCase()} ${rule.path}\` | ${rule.scope} | ${states || "—"} |`,
    );
  }
  lines.push("", "| unlisted path | access | what |", "| --- | --- | --- |");
  for (const entry of UNLISTED_PATHS) lines.push(`| \`${entry.path}\` | ${entry.access} | ${entry.note} |`);
  return lines.join("\n");
}
