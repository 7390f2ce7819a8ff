import { decodeStrictUtf8, findUnsafeValue, nestingDepth } from "@overseer/task-files";
import type { HonoRequest, MiddlewareHandler } from "hono";
import type { GatewayEnv } from "../gateway-env.ts";
import { ApiError } from "./api-error.ts";
import { unreadableBody, WRITE_METHODS } from "./request-guards.ts";

/**
 * The HTTP boundary for body text (after the content-type and size checks): a write's body
 * must be valid UTF-8, nest arrays and objects at most `maxDepth` deep (checked on the raw
 * text, before any recursive parser or validator sees it), and, when it is JSON, hold no NUL
 * characters or lone surrogates in any string or key (Postgres cannot store them). Each is a
 * 400 naming what was wrong; a body that is not valid JSON is left to the route's validator,
 * which answers 400 with the syntax error.
 */
export function guardBodyText(maxDepth: number): MiddlewareHandler<GatewayEnv> {
  return async (c, next) => {
    if (!WRITE_METHODS.has(c.req.method)) return next();
    const bytes = await readBody(c.req);
    if (bytes.byteLength === 0) return next();
    const text = decodeStrictUtf8(bytes);
    if (text === undefined)
      throw new ApiError(
        400,
        "invalid_text",
        "The request body is not valid UTF-8; send the body encoded as UTF-8.",
      );
    const depth = nestingDepth(text);
    if (depth > maxDepth)
      throw new ApiError(
        400,
        "too_deep",
        `The request body nests arrays and objects ${depth} deep; at most ${maxDepth} levels are accepted.`,
        { max_depth: maxDepth, depth },
      );
    if (!/yaml/i.test(c.req.header("content-type") ?? "")) {
      let value: unknown;
      try {
        value = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
      } catch {
        return next();
      }
      const unsafe = findUnsafeValue(value);
      if (unsafe)
        throw new ApiError(
          400,
          "invalid_text",
          `Invalid request: ${unsafe.path}: expected text without NUL characters or lone surrogates, received text that ${unsafe.problem}; remove that character.`,
          { field: unsafe.path },
        );
    }
    await next();
  };
}

/** The whole body (see `unreadableBody` for a body the connection cannot deliver). */
async function readBody(request: HonoRequest): Promise<Uint8Array> {
  try {
    // Through Hono's request, which keeps the bytes for the route's own parsing.
    return new Uint8Array(await request.arrayBuffer());
  } catch (error) {
    throw error instanceof ApiError ? error : unreadableBody();
  }
}
