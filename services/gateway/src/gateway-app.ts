import { OpenAPIHono } from "@hono/zod-openapi";
import { POSTGRES_NOTIFY_CHANNEL, parseNotifyPayload } from "@overseer/db";
import { cors } from "hono/cors";
import { BoardSessions } from "./admin/board-sessions.ts";
import type { GatewayEnv } from "./gateway-env.ts";
import type { GatewayDeps, ResolvedGatewayOptions } from "./gateway-options.ts";
import { accessLog } from "./http/access-log.ts";
import { ApiError, toApiError } from "./http/api-error.ts";
import { authorizationGuard } from "./http/authorization-guard.ts";
import { guardBodyText } from "./http/body-text-guard.ts";
import { InFlightRequests } from "./http/in-flight-requests.ts";
import {
  authenticate,
  closeIfBodyUnread,
  limitBodies,
  rateLimitWrites,
  requestId,
  requireJsonBodies,
  securityHeaders,
} from "./http/request-guards.ts";
import { TokenVerifier } from "./http/token-verifier.ts";
import { validationHook } from "./http/validation-hook.ts";
import { WriteRateLimiter } from "./http/write-rate-limiter.ts";
import { FLEET_THROUGHPUT, FleetAnswer, sharedFleetAnswer } from "./live/fleet-answer.ts";
import { ProjectEventSubscriber } from "./live/project-event-subscriber.ts";
import { ProjectStatusCache } from "./live/project-status-cache.ts";
import { servedPoolsCache } from "./live/served-pools.ts";
import { StreamRegistry } from "./live/stream-registry.ts";
import { GatewayMetrics } from "./metrics/gateway-metrics.ts";
import { OperatorTransitions } from "./operations/operator-transitions.ts";
import { registerArgusRoutes } from "./routes/argus/register.ts";
import { registerEventRoutes } from "./routes/event/register.ts";
import { registerFleetRoutes } from "./routes/fleet/register.ts";
import { registerForgeRoutes } from "./routes/forge/register.ts";
import { registerIntakeRoutes } from "./routes/intake/register.ts";
import { registerMcpRoutes } from "./routes/mcp/register.ts";
import { registerNotificationRoutes } from "./routes/notification/register.ts";
import { registerWebhookDocuments } from "./routes/notification/webhook-documents.ts";
import { registerOpsRoutes } from "./routes/ops/register.ts";
import { registerPageRoutes } from "./routes/page-routes.ts";
import { registerProjectRoutes } from "./routes/project/register.ts";
import { registerQueueBoardRoutes } from "./routes/queue-board-routes.ts";
import type { RouteContext } from "./routes/route-kit.ts";
import { registerRunRoutes } from "./routes/run/register.ts";
import { registerSlackRoutes } from "./routes/slack/register.ts";
import { registerTaskRoutes } from "./routes/task/register.ts";
import { registerTokenRoutes } from "./routes/token/register.ts";
import { registerTranscriptRoutes } from "./routes/transcript/register.ts";

/** Title and version of the generated OpenAPI document. */
export const API_TITLE = "Overseer gateway API";
export const API_VERSION = "1.0.0";

export interface GatewayControls {
  /**
   * The OpenAPI 3.1 document generated from the route schemas (what `/openapi.json` serves), with
   * the outbound notifications in its `webhooks` section.
   */
  openApiDocument(): Record<string, unknown>;
  /**
   * Refuses new SSE streams, ends every open one, closes the Redis subscriber, and waits (up
   * to `shutdownDrainMs`) for running handlers and background token-use updates, so the
   * caller can close the database and Redis afterwards.
   */
  shutdown(): Promise<void>;
  /** SSE streams open right now (events and logs). */
  openStreamCount(): number;
  /** Options after defaults. */
  readonly settings: ResolvedGatewayOptions;
}

/** The Hono app itself (`app.request()`, `app.fetch`), plus lifecycle controls. */
export type GatewayApp = OpenAPIHono<GatewayEnv> & GatewayControls;

/**
 * Builds the gateway: middleware pipeline (see `request-guards.ts`), then the route modules
 * (Argus-compatible `/api/projects/…`, native REST `/api/v1/…`, live SSE, operations, pages).
 * It opens no connection of its own until an SSE client subscribes; the caller owns `deps`.
 * Takes options resolved once by `resolveGatewayOptions` (`startGateway` does that).
 */
export function createGatewayApp(deps: GatewayDeps, settings: ResolvedGatewayOptions): GatewayApp {
  const metrics = new GatewayMetrics(
    deps,
    settings.metricsCacheMs,
    settings.readyTimeoutMs,
    settings.processMetrics,
    settings.workerStaleAfterMs,
  );
  const verifier = new TokenVerifier(
    deps.db,
    deps.logger,
    settings.tokenCacheTtlMs,
    settings.tokenCacheMaxEntries,
  );
  const streams = new StreamRegistry(
    {
      maxOpen: settings.maxOpenStreams,
      perToken: settings.maxStreamsPerToken,
      perAddress: settings.maxStreamsPerAddress,
    },
    metrics,
  );
  const subscriber = new ProjectEventSubscriber(deps.redis, deps.live, deps.logger);
  const statusCache = new ProjectStatusCache(deps.db, settings.statusCacheTtlMs);
  const fleet = new FleetAnswer(deps.db, FLEET_THROUGHPUT);
  const fleetCache = sharedFleetAnswer(fleet, settings, (error) =>
    deps.logger.warn({ err: error }, "fleet: cannot refresh the overview"),
  );
  const transitions = new OperatorTransitions(deps, metrics, {
    conflictRetries: settings.conflictRetries,
    redisTimeoutMs: settings.readyTimeoutMs,
    onCommit: (projectId) => {
      statusCache.invalidate(projectId);
      fleet.changed(projectId);
      fleetCache.invalidate();
    },
  });
  const ctx: RouteContext = {
    deps,
    options: settings,
    transitions,
    streams,
    subscriber,
    metrics,
    verifier,
    statusCache,
    fleetCache,
    servedPools: servedPoolsCache(deps, settings),
    authorize: authorizationGuard(deps.db),
    boardSessions: new BoardSessions(deps.redis, deps.live.prefix, settings.boardSessionTtlMs),
  };
  const unlisten = listenForChanges(deps, statusCache, fleet, subscriber);

  const inFlight = new InFlightRequests();
  const app = new OpenAPIHono<GatewayEnv>({ defaultHook: validationHook });
  app.use(
    "*",
    inFlight.middleware(),
    requestId(),
    accessLog(deps.logger, metrics, settings),
    securityHeaders(),
  );
  if (settings.corsOrigins.length > 0) {
    const origins = [...settings.corsOrigins];
    app.use(
      "*",
      cors({
        origin: origins.includes("*") ? "*" : origins,
        allowMethods: ["GET", "POST", "DELETE", "OPTIONS"],
        allowHeaders: ["Authorization", "Content-Type", "Last-Event-ID", "X-Request-Id"],
        exposeHeaders: ["X-Request-Id", "Retry-After"],
        maxAge: 600,
      }),
    );
  }
  app.use(
    "*",
    authenticate(verifier),
    rateLimitWrites(new WriteRateLimiter(settings.rateLimitWritesPerMinute)),
    requireJsonBodies(),
    limitBodies(settings.maxBodyBytes),
    guardBodyText(settings.maxBodyDepth),
  );

  app.onError((error, c) => {
    const api = toApiError(error);
    if (api) {
      for (const [name, value] of Object.entries(api.headers)) c.header(name, value);
      closeIfBodyUnread(c, api.status);
      return c.json(api.body(), api.status);
    }
    const reqId = c.get("requestId");
    deps.logger.error({ err: error, reqId, method: c.req.method, path: c.req.path }, "unexpected error");
    return c.json(
      new ApiError(500, "internal", `Unexpected server error; quote request id ${reqId} when reporting it.`, {
        request_id: reqId,
      }).body(),
      500,
    );
  });
  app.notFound((c) =>
    c.json(
      new ApiError(
        404,
        "not_found",
        `No route ${c.req.method} ${c.req.path.slice(0, 200)}; the API is described at /openapi.json and /docs.`,
      ).body(),
      404,
    ),
  );

  app.openAPIRegistry.registerComponent("securitySchemes", "bearerAuth", {
    type: "http",
    scheme: "bearer",
    description: "An Overseer API token (`ovr_…`); scopes read < operate < admin.",
  });
  registerArgusRoutes(app, ctx);
  registerProjectRoutes(app, ctx);
  registerTaskRoutes(app, ctx);
  registerRunRoutes(app, ctx);
  registerTranscriptRoutes(app, ctx);
  registerEventRoutes(app, ctx);
  registerTokenRoutes(app, ctx);
  registerOpsRoutes(app, ctx);
  registerFleetRoutes(app, ctx);
  registerForgeRoutes(app, ctx);
  registerSlackRoutes(app, ctx);
  registerNotificationRoutes(app, ctx);
  registerIntakeRoutes(app, ctx);
  registerWebhookDocuments(app);
  registerMcpRoutes(app, ctx);
  registerQueueBoardRoutes(app, ctx);

  const openApiDocument = () =>
    app.getOpenAPI31Document({
      openapi: "3.1.0",
      info: {
        title: API_TITLE,
        version: API_VERSION,
        description:
          "Argus-compatible operator routes under /api/projects/…, the native REST API under /api/v1/…, live SSE streams, operations routes. Every route except the web app's page shells (/ and /docs) and their /assets/ needs a bearer token.",
      },
      security: [{ bearerAuth: [] }],
    }) as unknown as Record<string, unknown>;
  registerPageRoutes(app, ctx, openApiDocument);

  const controls: GatewayControls = {
    openApiDocument,
    settings,
    openStreamCount: () => streams.size,
    shutdown: async () => {
      streams.closeAll();
      await subscriber.close();
      await unlisten();
      const idle = await inFlight.idle(settings.shutdownDrainMs);
      if (!idle)
        deps.logger.warn(
          { inFlight: inFlight.size },
          "shutdown: requests still running after the drain delay",
        );
      await verifier.drain();
    },
  };
  return Object.assign(app, controls);
}

/**
 * LISTENs to the transition channel when a notification listener is given: each notification
 * (payload: project id) drops that project's cached status, marks it for the fleet overview's
 * next read and wakes its event streams (the CLI applies commands without Redis: its NOTIFY is
 * what publishes them live), and both caches trust them (`notify` mode) once listening.
 * Returns the function that stops listening.
 */
function listenForChanges(
  deps: GatewayDeps,
  cache: ProjectStatusCache,
  fleet: FleetAnswer,
  subscriber: ProjectEventSubscriber,
): () => Promise<void> {
  if (!deps.notifications) return async () => {};
  const listening = deps.notifications
    .listen(
      POSTGRES_NOTIFY_CHANNEL,
      (payload) => {
        const { projectId } = parseNotifyPayload(payload);
        cache.invalidate(projectId);
        fleet.changed(projectId);
        subscriber.wake(projectId);
      },
      // Called on every (re)connection: anything sent while disconnected was missed.
      () => {
        cache.invalidateAll();
        cache.setNotified(true);
        fleet.changedAll();
        fleet.setNotified(true);
      },
    )
    .catch((error) => {
      deps.logger.warn(
        { err: error },
        "cannot LISTEN for transitions; status answers are validated per request instead",
      );
      return null;
    });
  return async () => {
    cache.setNotified(false);
    fleet.setNotified(false);
    const handle = await listening;
    await handle?.unlisten().catch(() => undefined);
  };
}
