import type { Context } from "hono";
import { type SSEStreamingApi, streamSSE } from "hono/streaming";
import type { GatewayEnv } from "../gateway-env.ts";
import { ApiError } from "../http/api-error.ts";
import type { StreamHandle, StreamKind } from "../live/stream-registry.ts";
import { errorResponses, READ_ERRORS, type RouteContext } from "./route-kit.ts";

/** The responses of a stream route: the event stream, or a read's errors and 503 (too many streams). */
export const SSE_RESPONSES = {
  200: {
    description: "text/event-stream",
    content: { "text/event-stream": { schema: { type: "string" } } },
  },
  ...errorResponses(...READ_ERRORS, 503),
} as const;

/** What a stream logs when its pump fails while the client is still there. */
export interface StreamFailureLog {
  readonly message: string;
  readonly fields: Readonly<Record<string, unknown>>;
}

/**
 * Answers with a server-sent event stream of `kind` that `pump` writes until it returns or the
 * client leaves; 503 when too many streams are open or the gateway is shutting down. The
 * stream's handle is ended in every case; a failure is logged (with the request id) unless the
 * stream had already ended, when it is the expected end of a departed client or a shutdown.
 */
export function sseResponse(
  c: Context<GatewayEnv>,
  ctx: RouteContext,
  kind: StreamKind,
  failure: StreamFailureLog,
  pump: (stream: SSEStreamingApi, handle: StreamHandle) => Promise<void>,
): Response {
  const handle = ctx.streams.open(kind);
  if (!handle) throw tooManyStreams(ctx);
  return streamSSE(c, async (stream) => {
    stream.onAbort(() => handle.end());
    try {
      await pump(stream, handle);
    } catch (error) {
      if (!handle.ended)
        ctx.deps.logger.warn({ err: error, ...failure.fields, reqId: c.get("requestId") }, failure.message);
    } finally {
      handle.end();
    }
  });
}

function tooManyStreams(ctx: RouteContext): ApiError {
  return ctx.streams.isClosing
    ? new ApiError(503, "shutting_down", "The gateway is shutting down; reconnect in a moment.")
    : new ApiError(
        503,
        "too_many_streams",
        `Too many open streams (limit ${ctx.options.maxOpenStreams}); retry later.`,
        {
          max_open_streams: ctx.options.maxOpenStreams,
        },
      );
}
