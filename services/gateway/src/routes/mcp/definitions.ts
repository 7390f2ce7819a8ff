import { z } from "@hono/zod-openapi";
import { McpMessageSchema } from "@overseer/api-contract";
import { errorResponses, jsonBody, jsonResponse, tableRoute } from "../route-kit.ts";

/**
 * `/mcp`: the Model Context Protocol server for operators' own agents (streamable HTTP,
 * stateless). The endpoint itself needs a read token; each tool is a route of this API called
 * with the same token, so it needs what that route needs (`src/mcp/mcp-tools.ts`).
 */

export const callMcpRoute = tableRoute("callMcp", {
  method: "post",
  path: "/mcp",
  tags: ["MCP"],
  summary: "Model Context Protocol server (streamable HTTP): tools over this API",
  description:
    "One JSON-RPC message of an MCP client (`initialize`, `tools/list`, `tools/call`, notifications), answered as JSON. Stateless: no session id, and `GET`/`DELETE /mcp` answer 405. Each tool calls its HTTP route with the same bearer token, so it is authorized as that route (README, MCP server).",
  request: { body: jsonBody(McpMessageSchema) },
  responses: {
    200: jsonResponse(z.record(z.string(), z.unknown()), "The JSON-RPC response."),
    202: { description: "A notification or response, accepted; no body." },
    ...errorResponses(400, 401, 403, 406, 413, 415, 429),
  },
});
