import { z } from "@hono/zod-openapi";
import { QUEUE_BOARD_SCOPE, scopeGrants } from "@overseer/api-contract";
import { type Db, findActiveApiToken } from "@overseer/db";
import { Hono, type MiddlewareHandler } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import type { BoardSession, BoardSessions } from "../admin/board-sessions.ts";
import { ApiError } from "../http/api-error.ts";
import { lazyQueueBoard } from "./queue-board-ui.ts";
import {
  errorResponses,
  guarded,
  jsonBody,
  jsonResponse,
  type RouteApp,
  type RouteContext,
  tableRoute,
} from "./route-kit.ts";

/** Where the Bull Board is mounted; its session cookie is scoped to this path only. */
export const QUEUE_BOARD_PATH = "/admin/queues";
const COOKIE = "overseer_board";

/**
 * The board serves its own scripts and styles from under its path (no CDN). It needs inline
 * styles (its loading placeholder) but no inline script; its Google Fonts link is blocked on
 * purpose and the system fonts are used instead.
 */
const BOARD_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

/** The session route takes no options: no body, or `{}`. */
const BoardSessionRequest = z.strictObject({}).openapi("QueueBoardSessionRequest");

const BoardSessionSchema = z
  .object({
    path: z.string().openapi({ example: QUEUE_BOARD_PATH }),
    expires_in_seconds: z.number().int(),
  })
  .openapi("QueueBoardSession");

/** Cookie attributes of the board session (the same when set and when cleared). */
function cookieOptions(url: string) {
  return {
    path: QUEUE_BOARD_PATH,
    httpOnly: true,
    sameSite: "Strict",
    secure: new URL(url).protocol === "https:",
  } as const;
}

/**
 * Bull Board over the run and result queues, for admin tokens only (`QUEUE_BOARD_SCOPE`, reads
 * and writes alike). A browser page cannot send a bearer header, so the web app first POSTs its
 * admin token (bearer header) to `/api/v1/admin/queues/session`, which sets an HttpOnly,
 * SameSite=Strict cookie scoped to `/admin/queues` holding an opaque session id
 * (`admin/board-sessions.ts`, one per token); every request under `/admin/queues` must carry a
 * live session whose token is still unrevoked and admin (401 otherwise, never the board), and
 * every write a same-origin `Origin` (403). `POST /admin/queues/logout` ends the session.
 */
export function registerQueueBoardRoutes(app: RouteApp, ctx: RouteContext): void {
  const sessions = ctx.boardSessions;

  app.openapi(
    guarded(
      ctx,
      tableRoute("openQueueBoardSession", {
        method: "post",
        path: "/api/v1/admin/queues/session",
        tags: ["Operations"],
        summary: "Open a Bull Board session (sets the /admin/queues cookie)",
        description:
          "Sets an HttpOnly, SameSite=Strict cookie scoped to /admin/queues holding an opaque session id (the token itself is never put in the cookie); then open /admin/queues. No body, or `{}`. One session per token: opening again ends the previous one. The session ends when the token is revoked, and by `POST /admin/queues/logout`.",
        request: { body: jsonBody(BoardSessionRequest, false) },
        responses: {
          200: jsonResponse(
            BoardSessionSchema,
            "Session opened (the token's previous one ended); the cookie is set.",
          ),
          ...errorResponses(400, 401, 403, 413, 415, 429),
        },
      }),
    ),
    async (c) => {
      const token = c.get("token");
      if (!token) throw new ApiError(401, "unauthorized", "This route needs a bearer token.");
      const id = await sessions.open({ tokenId: token.id, tokenName: token.name });
      setCookie(c, COOKIE, id, { ...cookieOptions(c.req.url), maxAge: sessions.ttlSeconds });
      return c.json({ path: QUEUE_BOARD_PATH, expires_in_seconds: sessions.ttlSeconds }, 200);
    },
  );

  const board = new Hono<BoardEnv>();
  board.use("*", requireBoardSession(sessions, ctx.deps.db));
  board.post("/logout", async (c) => {
    await sessions.end(c.get("boardSessionId"), c.get("boardSession"));
    deleteCookie(c, COOKIE, cookieOptions(c.req.url));
    return c.json({ logged_out: true }, 200);
  });
  // Behind the session check above: the board's code is loaded by its first admitted request.
  board.use("*", lazyQueueBoard(QUEUE_BOARD_PATH, ctx.deps.queues.runs));
  app.route(QUEUE_BOARD_PATH, board as never);
}

type BoardEnv = { Variables: { boardSessionId: string; boardSession: BoardSession } };

const SAFE_METHODS: ReadonlySet<string> = new Set(["GET", "HEAD", "OPTIONS"]);

function requireBoardSession(sessions: BoardSessions, db: Db): MiddlewareHandler<BoardEnv> {
  return async (c, next) => {
    const id = getCookie(c, COOKIE);
    const session = id ? await sessions.find(id) : null;
    // The session lives only while its token does: revoked elsewhere (CLI, another replica)
    // ends it at its next request.
    const token = session ? await findActiveApiToken(db, session.tokenId) : null;
    if (!id || !session || !token || !scopeGrants(token.scope, QUEUE_BOARD_SCOPE)) {
      if (id && session) await sessions.end(id, session);
      throw new ApiError(
        401,
        "unauthorized",
        "The queue board needs an admin session: open it from the web app's Workers & queues view (admin token), or POST /api/v1/admin/queues/session with an admin bearer token.",
      );
    }
    if (!SAFE_METHODS.has(c.req.method) && !sameOrigin(c.req.header("origin"), c.req.url)) {
      throw new ApiError(
        403,
        "forbidden_origin",
        "Queue board writes must come from the board's own page: the Origin header is missing or names another site.",
        { origin: (c.req.header("origin") ?? "").slice(0, 200) },
      );
    }
    c.set("boardSessionId", id);
    c.set("boardSession", session);
    c.header("Content-Security-Policy", BOARD_CSP);
    await next();
  };
}

/** Does `Origin` name this gateway's own host (any scheme: a TLS proxy may sit in front)? */
function sameOrigin(origin: string | undefined, url: string): boolean {
  if (!origin) return false;
  try {
    return new URL(origin).host === new URL(url).host;
  } catch {
    return false;
  }
}
