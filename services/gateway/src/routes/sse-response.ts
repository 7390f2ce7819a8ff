import type { IncomingMessage } from "node:http";
import type { Context } from "hono";
import { type SSEStreamingApi, streamSSE } from "hono/streaming";
import type { GatewayEnv } from "../gateway-env.ts";
import { ApiError } from "../http/api-error.ts";
import type { StreamHandle, StreamKind, StreamRefusal } from "../live/stream-registry.ts";
import { errorResponses, READ_ERRORS, type RouteContext } from "./route-kit.ts";

/**
 * The responses of a stream route: the event stream, or a read's errors, 429 (this token or
 * address has too many streams open) and 503 (the gateway's streams are all taken).
 */
export const SSE_RESPONSES = {
  200: {
    description: "text/event-stream",
    content: { "text/event-stream": { schema: { type: "string" } } },
  },
  ...errorResponses(...READ_ERRORS, 429, 503),
} as const;

/** Seconds a refused stream client is told to wait: streams free up when their clients leave. */
const STREAM_RETRY_AFTER_SECONDS = 10;

/** What a stream logs when its pump fails while the client is still there. */
export interface StreamFailureLog {
  readonly message: string;
  readonly fields: Readonly<Record<string, unknown>>;
}

/**
 * Answers with a server-sent event stream of `kind` that `pump` writes until it returns or the
 * client leaves; 429 when the caller's token or address has too many streams open, 503 when
 * all the gateway's streams are taken or it is shutting down (see `StreamRegistry`). The
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
  const token = c.get("token");
  const handle = ctx.streams.open(kind, {
    tokenId: token?.id ?? "anonymous",
    address: remoteAddress(c),
    admin: token?.scope === "admin",
  });
  if (typeof handle === "string") throw tooManyStreams(ctx, handle);
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

/** The connection's remote address under @hono/node-server (`c.env.incoming`); null elsewhere. */
function remoteAddress(c: Context<GatewayEnv>): string | null {
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  return incoming?.socket?.remoteAddress ?? null;
}

function tooManyStreams(ctx: RouteContext, refusal: StreamRefusal): ApiError {
  const { caps } = ctx.streams;
  const retry = { "Retry-After": String(STREAM_RETRY_AFTER_SECONDS) };
  const details = { retry_after_seconds: STREAM_RETRY_AFTER_SECONDS };
  switch (refusal) {
    case "closing":
      return new ApiError(503, "shutting_down", "The gateway is shutting down; reconnect in a moment.");
    case "token":
      return new ApiError(
        429,
        "too_many_streams",
        `This token already has ${caps.perToken} open streams (OVERSEER_MAX_STREAMS_PER_TOKEN); close one, or retry after ${STREAM_RETRY_AFTER_SECONDS} s.`,
        { ...details, limit: "per_token", max_streams_per_token: caps.perToken },
        {},
        retry,
      );
    case "address":
      return new ApiError(
        429,
        "too_many_streams",
        `This client address already has ${caps.perAddress} open streams (OVERSEER_MAX_STREAMS_PER_ADDRESS); close one, or retry after ${STREAM_RETRY_AFTER_SECONDS} s.`,
        { ...details, limit: "per_address", max_streams_per_address: caps.perAddress },
        {},
        retry,
      );
    case "global":
      return new ApiError(
        503,
        "too_many_streams",
        `Too many open streams (limit ${caps.maxOpen}, OVERSEER_MAX_OPEN_STREAMS); retry after ${STREAM_RETRY_AFTER_SECONDS} s.`,
        { ...details, limit: "global", max_open_streams: caps.maxOpen },
        {},
        retry,
      );
  }
}
