import { createBullBoard } from "@bull-board/api";
import { BullMQAdapter } from "@bull-board/api/bullMQAdapter";
import { HonoAdapter } from "@bull-board/hono";
import { serveStatic } from "@hono/node-server/serve-static";
import { createRoute, z } from "@hono/zod-openapi";
import { Hono, type MiddlewareHandler } from "hono";
import { getCookie, setCookie } from "hono/cookie";
import { BoardSessions } from "../admin/board-sessions.ts";
import { ApiError } from "../http/api-error.ts";
import { errorResponses, jsonResponse, type RouteApp, type RouteContext, tableRoute } from "./route-kit.ts";

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

const BoardSessionSchema = z
  .object({
    path: z.string().openapi({ example: QUEUE_BOARD_PATH }),
    expires_in_seconds: z.number().int(),
  })
  .openapi("QueueBoardSession");

/**
 * Bull Board over the run and result queues, for admin tokens only. A browser page cannot
 * send a bearer header, so the web app first POSTs its admin token (bearer header) to
 * `/api/v1/admin/queues/session`, which sets an HttpOnly, SameSite=Strict cookie scoped to
 * `/admin/queues` holding an opaque session id (`admin/board-sessions.ts`); every request
 * under `/admin/queues` must carry a live session (401 otherwise, never the board).
 */
export function registerQueueBoardRoutes(app: RouteApp, ctx: RouteContext): void {
  const sessions = new BoardSessions(ctx.deps.redis, ctx.deps.live.prefix, ctx.options.boardSessionTtlMs);

  app.openapi(
    createRoute(
      tableRoute(ctx, "openQueueBoardSession", {
        method: "post",
        path: "/api/v1/admin/queues/session",
        tags: ["Operations"],
        summary: "Open a Bull Board session (sets the /admin/queues cookie)",
        description:
          "Sets an HttpOnly, SameSite=Strict cookie scoped to /admin/queues holding an opaque session id (the token itself is never put in the cookie); then open /admin/queues.",
        responses: {
          200: jsonResponse(BoardSessionSchema, "Session opened; the cookie is set."),
          ...errorResponses(401, 403, 429),
        },
      }),
    ),
    async (c) => {
      const token = c.get("token");
      if (!token) throw new ApiError(401, "unauthorized", "This route needs a bearer token.");
      const id = await sessions.open({ tokenId: token.id, tokenName: token.name });
      setCookie(c, COOKIE, id, {
        path: QUEUE_BOARD_PATH,
        httpOnly: true,
        sameSite: "Strict",
        secure: new URL(c.req.url).protocol === "https:",
        maxAge: sessions.ttlSeconds,
      });
      return c.json({ path: QUEUE_BOARD_PATH, expires_in_seconds: sessions.ttlSeconds }, 200);
    },
  );

  const adapter = new HonoAdapter(serveStatic);
  adapter.setBasePath(QUEUE_BOARD_PATH);
  createBullBoard({
    queues: [new BullMQAdapter(ctx.deps.queues.runs), new BullMQAdapter(ctx.deps.queues.results)],
    serverAdapter: adapter,
    options: { uiConfig: { boardTitle: "Overseer queues" } },
  });
  const board = new Hono();
  board.use("*", requireBoardSession(sessions));
  board.route("/", adapter.registerPlugin());
  app.route(QUEUE_BOARD_PATH, board as never);
}

function requireBoardSession(sessions: BoardSessions): MiddlewareHandler {
  return async (c, next) => {
    const id = getCookie(c, COOKIE);
    const session = id ? await sessions.find(id) : null;
    if (!session) {
      throw new ApiError(
        401,
        "unauthorized",
        "The queue board needs an admin session: open it from the web app's Workers & queues view (admin token), or POST /api/v1/admin/queues/session with an admin bearer token.",
      );
    }
    c.header("Content-Security-Policy", BOARD_CSP);
    await next();
  };
}
