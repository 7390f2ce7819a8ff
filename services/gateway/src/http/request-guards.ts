import { randomUUID } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { AUTHORIZATION_TABLE } from "@overseer/api-contract";
import type { Context, MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { GatewayEnv } from "../gateway-env.ts";
import { ApiError } from "./api-error.ts";
import type { TokenVerifier } from "./token-verifier.ts";
import type { WriteRateLimiter } from "./write-rate-limiter.ts";

/**
 * The gateway's request pipeline, in order:
 *
 *   request id → access log/metrics → security headers → CORS (only when configured)
 *   → authenticate (401) → write rate limit (429) → content type (415) → body size (413)
 *   → body text: UTF-8, nesting depth, no NUL or lone surrogate (400, `body-text-guard.ts`)
 *   → per route: the authorization table's guard (403, `authorization-guard.ts`)
 *   → zod validation of params, query, body (400) → handler
 *
 * Authentication comes before anything reads the body, so an anonymous caller cannot make
 * the gateway buffer a megabyte. The scope check is per route and runs before validation,
 * so a read token learns nothing about a write route's input rules.
 */

const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;
export const WRITE_METHODS: ReadonlySet<string> = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/** Echoes a well-formed `X-Request-Id`, otherwise generates one. */
export function requestId(): MiddlewareHandler<GatewayEnv> {
  return async (c, next) => {
    const given = c.req.header("x-request-id");
    const id = given && REQUEST_ID_PATTERN.test(given) ? given : randomUUID();
    c.set("requestId", id);
    c.header("X-Request-Id", id);
    await next();
  };
}

/**
 * API answers are private and never framed or sniffed. Pages and streams override
 * Cache-Control and add their CSP. The headers are set before the handler runs: setting one
 * on a finished response makes Hono rebuild the response (a measurable cost per request).
 */
export function securityHeaders(): MiddlewareHandler<GatewayEnv> {
  return async (c, next) => {
    c.header("X-Content-Type-Options", "nosniff");
    c.header("Referrer-Policy", "no-referrer");
    c.header("X-Frame-Options", "DENY");
    c.header("Cache-Control", "no-store");
    await next();
  };
}

/**
 * Paths served without a token: the rows of the authorization table whose access is `public`
 * (the web app and API-reference page shells). They contain no data (a browser navigation
 * cannot carry a bearer header); the pages ask for a token and send it with every data
 * request. Everything else, `/healthz` `/readyz` `/metrics` `/openapi.json` included, needs a
 * token (docs/http-api.md).
 */
const PUBLIC_PAGE_PATHS: ReadonlySet<string> = new Set(
  Object.values(AUTHORIZATION_TABLE)
    .filter((rule) => rule.scope === "public" && rule.method === "get")
    .map((rule) => rule.path),
);

/**
 * Routes that prove their caller another way than a bearer token: the public rows that are not
 * pages (forge webhooks, authenticated by the forge's signature of the shared secret in their
 * handler, which stores nothing before the signature holds).
 */
const SIGNED_ROUTES: readonly { method: string; path: RegExp }[] = Object.values(AUTHORIZATION_TABLE)
  .filter((rule) => rule.scope === "public" && rule.method !== "get")
  .map((rule) => ({
    method: rule.method.toUpperCase(),
    path: new RegExp(`^${rule.path.replace(/\{[^}]+\}/g, "[^/]+")}$`),
  }));

function isSignedRoute(method: string, path: string): boolean {
  return SIGNED_ROUTES.some((route) => route.method === method && route.path.test(path));
}

/** The page shells and the web app's built assets (`/assets/<name>`, code and styles only). */
function isPublicPath(path: string): boolean {
  return PUBLIC_PAGE_PATHS.has(path) || /^\/assets\/[A-Za-z0-9._-]+$/.test(path);
}

/**
 * `?access_token=` is accepted only on GET SSE routes, because EventSource cannot send
 * headers. It is checked exactly like the header and never logged (the access log records
 * the path without the query).
 */
function isStreamRoute(method: string, path: string): boolean {
  return method === "GET" && path.endsWith("/stream");
}

/**
 * The Bull Board (`/admin/queues` and below) is a page of its own that cannot send a bearer
 * header: it is authenticated by its session cookie in `routes/queue-board-routes.ts` instead.
 */
export function isQueueBoardPath(path: string): boolean {
  return path === "/admin/queues" || path.startsWith("/admin/queues/");
}

/** The MCP endpoint (`routes/mcp/`). */
const MCP_PATH = AUTHORIZATION_TABLE.callMcp.path;

const BEARER = /^Bearer[ ]+([^\s]+)\s*$/i;

export function authenticate(verifier: TokenVerifier): MiddlewareHandler<GatewayEnv> {
  return async (c, next) => {
    c.set("token", undefined);
    const method = c.req.method;
    if ((method === "GET" || method === "HEAD") && isPublicPath(c.req.path)) return next();
    if (method === "OPTIONS") return next();
    if (isQueueBoardPath(c.req.path)) return next();
    if (isSignedRoute(method, c.req.path)) return next();
    const header = c.req.header("authorization");
    let secret: string | undefined;
    if (header !== undefined) {
      const match = BEARER.exec(header);
      if (!match) {
        throw unauthorized("invalid_token", "The Authorization header must be `Bearer <token>`.");
      }
      secret = match[1];
    } else if (isStreamRoute(method, c.req.path)) {
      secret = c.req.query("access_token") || undefined;
    }
    if (!secret) {
      throw unauthorized(
        "unauthorized",
        "This route needs a bearer token: send `Authorization: Bearer <token>` (create one with `overseer token create`).",
      );
    }
    const token = await verifier.verify(secret);
    if (!token)
      throw unauthorized(
        "invalid_token",
        "The bearer token is unknown or revoked; create a new one with `overseer token create`.",
      );
    c.set("token", token);
    await next();
  };
}

export function unauthorized(code: string, message: string): ApiError {
  return new ApiError(401, code, message, {}, {}, { "WWW-Authenticate": 'Bearer realm="overseer"' });
}

export function rateLimitWrites(limiter: WriteRateLimiter): MiddlewareHandler<GatewayEnv> {
  return async (c, next) => {
    const token = c.get("token");
    // The MCP endpoint's POST carries reads too: each tool call that writes is counted as its own route.
    if (token && WRITE_METHODS.has(c.req.method) && c.req.path !== MCP_PATH) {
      const verdict = limiter.take(token.id);
      if (!verdict.allowed) {
        throw new ApiError(
          429,
          "rate_limited",
          `Too many write requests for this token (limit ${limiter.limitPerWindow} per minute); retry after ${verdict.retryAfterSeconds} s.`,
          { limit_per_minute: limiter.limitPerWindow, retry_after_seconds: verdict.retryAfterSeconds },
          {},
          { "Retry-After": String(verdict.retryAfterSeconds) },
        );
      }
    }
    await next();
  };
}

const JSON_TYPE = /^application\/(?:[\w.-]+\+)?json\s*(?:;.*)?$/i;
const YAML_TYPE = /^(?:application\/(?:x-)?yaml|text\/(?:x-)?yaml)\s*(?:;.*)?$/i;

/** Routes whose body may also be YAML (task files). */
function acceptsYaml(path: string): boolean {
  return path.endsWith("/tasks/import");
}

/**
 * Slack's interactivity requests are form-encoded (`payload=<JSON>`), as Slack sends them: that
 * route's handler checks its own content type, after the size and body-text checks.
 */
const SLACK_INTERACTIONS_PATH = AUTHORIZATION_TABLE.receiveSlackInteraction.path;

/**
 * A write that carries a body must say it is JSON (or YAML for task files): 415 otherwise.
 */
export function requireJsonBodies(): MiddlewareHandler<GatewayEnv> {
  return async (c, next) => {
    if (!WRITE_METHODS.has(c.req.method)) return next();
    const type = c.req.header("content-type");
    if (c.req.path === SLACK_INTERACTIONS_PATH) return next();
    const yaml = acceptsYaml(c.req.path);
    if (type !== undefined) {
      if (!JSON_TYPE.test(type) && !(yaml && YAML_TYPE.test(type))) {
        throw unsupported(type, yaml);
      }
    } else if (await hasBody(c.req.raw)) {
      throw unsupported("(none)", yaml);
    }
    await next();
  };
}

function unsupported(received: string, yaml: boolean): ApiError {
  const expected = yaml ? "application/json or application/yaml" : "application/json";
  return new ApiError(
    415,
    "unsupported_media_type",
    `Content-Type: expected ${expected}, received ${received.slice(0, 100)}; send the body as ${expected}.`,
    { expected, received: received.slice(0, 100) },
  );
}

async function hasBody(request: Request): Promise<boolean> {
  const length = request.headers.get("content-length");
  if (length !== null) return Number(length) > 0;
  if (request.body === null) return false;
  const reader = request.clone().body?.getReader();
  if (!reader) return false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return false;
      if (value.byteLength > 0) return true;
    }
  } finally {
    reader.cancel().catch(() => undefined);
  }
}

/**
 * An error answered before the request body was read to its end (413, or a 401/415/429 that
 * refused the request before its body) ends the connection: the rest of the body is still on
 * the socket, and the server stops draining it after a moment, so the answer says
 * `Connection: close` rather than offering a keep-alive it would break (a client's next request
 * on that socket would fail).
 */
export function closeIfBodyUnread(c: Context<GatewayEnv>, status: number): void {
  if (!WRITE_METHODS.has(c.req.method)) return;
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  const unread = incoming ? !incoming.readableEnded : status === 413;
  const declared =
    c.req.header("content-length") !== undefined || c.req.header("transfer-encoding") !== undefined;
  if (unread && (declared || status === 413)) c.header("Connection", "close");
}

export function limitBodies(maxBytes: number): MiddlewareHandler<GatewayEnv> {
  const limit = bodyLimit({
    maxSize: maxBytes,
    onError: () => {
      throw new ApiError(413, "payload_too_large", `The request body exceeds ${maxBytes} bytes; send less.`, {
        max_bytes: maxBytes,
      });
    },
  });
  return async (c, next) => {
    if (!WRITE_METHODS.has(c.req.method)) return next();
    // The limit reads a chunked body itself: a failure before it hands on is the body's.
    let handedOn = false;
    try {
      return await limit(c, () => {
        handedOn = true;
        return next();
      });
    } catch (error) {
      throw handedOn || error instanceof ApiError ? error : unreadableBody();
    }
  };
}

/**
 * A body the connection cannot deliver (malformed chunked encoding, a client that hung up
 * mid-body) is the client's fault: 400, the status the HTTP server itself answers on that
 * socket, so logs and metrics count what the client got (not a 503 for a dependency).
 */
export function unreadableBody(): ApiError {
  return new ApiError(
    400,
    "malformed_body",
    "The request body could not be read (malformed chunked encoding, or the connection closed mid-body); send it again, whole.",
  );
}
