import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { Context } from "hono";
import type { GatewayEnv } from "../../gateway-env.ts";
import { ApiError } from "../../http/api-error.ts";
import { createMcpServer } from "../../mcp/mcp-server.ts";
import type { McpDispatch } from "../../mcp/mcp-tool-call.ts";
import type { GatewayHandler } from "../route-kit.ts";
import type { callMcpRoute } from "./definitions.ts";

/** The Accept header of an MCP client of the streamable HTTP transport names both. */
function acceptsMcpAnswers(accept: string): boolean {
  return /application\/json|\*\/\*/i.test(accept) && /text\/event-stream|\*\/\*/i.test(accept);
}

/**
 * One message of an MCP client: a fresh SDK server and stateless transport answer it as JSON,
 * and its tool calls go through `dispatch` (this gateway's own pipeline) with the caller's
 * Authorization header and request id.
 */
export function callMcp(dispatch: McpDispatch): GatewayHandler<typeof callMcpRoute> {
  return async (c) => {
    if (!acceptsMcpAnswers(c.req.header("accept") ?? ""))
      throw new ApiError(
        406,
        "not_acceptable",
        "An MCP request must accept application/json and text/event-stream (Accept header); connect with an MCP client of the streamable HTTP transport.",
        { expected: "application/json, text/event-stream" },
      );
    const message = c.req.valid("json");
    const headers = {
      Authorization: c.req.header("authorization") ?? "",
      "X-Request-Id": c.get("requestId"),
    };
    const server = createMcpServer(dispatch, headers);
    const transport = new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: true });
    await server.connect(transport);
    try {
      const answer = await transport.handleRequest(c.req.raw, { parsedBody: message });
      const body = await answer.text();
      const type = answer.headers.get("content-type");
      // The status is the SDK's (200, 202, or a JSON-RPC refusal such as 400 for a protocol version).
      if (!body) return c.body(null, answer.status as 202);
      return c.body(body, answer.status as 200, type ? { "Content-Type": type } : {});
    } finally {
      await server.close();
    }
  };
}

/** `GET` and `DELETE /mcp`: the stateless server has no stream to open and no session to end. */
export function mcpMethodNotAllowed(c: Context<GatewayEnv>): Response {
  c.header("Allow", "POST");
  return c.json(
    new ApiError(
      405,
      "method_not_allowed",
      "The MCP endpoint is stateless: POST each JSON-RPC message to /mcp; there is no stream to open (GET) and no session to end (DELETE).",
    ).body(),
    405,
  );
}
