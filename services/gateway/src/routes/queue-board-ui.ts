/**
 * Bull Board's own UI and API, built on the first request under `/admin/queues` rather than when
 * the gateway starts: `@bull-board/api` and `@bull-board/hono` (with lodash, valibot and ejs) are
 * ~4 MB of heap that every GC would mark, in a gateway whose board may never be opened.
 * Concurrent first requests share one load; a failed load is retried by the next request.
 */

import type { BullMQAdapter as BoardQueue } from "@bull-board/api/bullMQAdapter";
import { serveStatic } from "@hono/node-server/serve-static";
import { Hono, type MiddlewareHandler } from "hono";

type Queue = ConstructorParameters<typeof BoardQueue>[0];

/** Marks the inner board's "no such route", so the gateway's own 404 answers instead. */
const MISS_HEADER = "x-overseer-board-miss";

async function buildBoard(basePath: string, runs: Queue): Promise<Hono> {
  const [{ createBullBoard }, { BullMQAdapter }, { HonoAdapter }] = await Promise.all([
    import("@bull-board/api"),
    import("@bull-board/api/bullMQAdapter"),
    import("@bull-board/hono"),
  ]);
  const adapter = new HonoAdapter(serveStatic);
  adapter.setBasePath(basePath);
  createBullBoard({
    // Run results travel on a Redis stream, not a BullMQ queue: their counts are on /ops/queues.
    queues: [new BullMQAdapter(runs)],
    serverAdapter: adapter,
    options: { uiConfig: { boardTitle: "Overseer queues" } },
  });
  const inner = new Hono();
  inner.route(basePath, adapter.registerPlugin());
  inner.notFound(() => new Response(null, { status: 404, headers: { [MISS_HEADER]: "1" } }));
  // The gateway's error handler answers, as it did when the board was mounted directly.
  inner.onError((error) => {
    throw error;
  });
  return inner;
}

/**
 * The board as a middleware for the route mounted at `basePath` (after its session check):
 * it answers what the board serves and passes anything else on.
 */
export function lazyQueueBoard(basePath: string, runs: Queue): MiddlewareHandler {
  let board: Promise<Hono> | undefined;
  return async (c, next) => {
    board ??= buildBoard(basePath, runs);
    board.catch(() => {
      board = undefined;
    });
    const response = await (await board).fetch(c.req.raw, c.env);
    if (response.headers.has(MISS_HEADER)) return next();
    // Through the context, so headers set in front of the board (its CSP) are kept, as they
    // were when its routes were mounted directly.
    return c.newResponse(response.body, response);
  };
}
