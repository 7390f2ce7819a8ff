import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { callTool, type McpDispatch } from "./mcp-tool-call.ts";
import { MCP_TOOLS, type McpToolSpec, toolDescription } from "./mcp-tools.ts";

/** How the server introduces itself to an MCP client (`initialize`). */
export const MCP_SERVER_INFO = Object.freeze({ name: "overseer", version: "1.0.0" });

const INSTRUCTIONS = [
  "Overseer runs fleets of coding agents on projects of tasks.",
  "Start with fleet_status or list_projects; list_needs_you lists the decisions waiting for an operator, resolve_decision answers one with an option id from its card.",
  "Every tool is an Overseer HTTP route called with your token: reads need a read token, changes an operate token, stop_project an admin token.",
].join(" ");

/** The `tools/list` entry of a tool. */
function listing(spec: McpToolSpec): Tool {
  return {
    name: spec.name,
    title: spec.title,
    description: toolDescription(spec),
    inputSchema: spec.inputSchema,
    annotations: { title: spec.title, ...spec.hints },
  };
}

/**
 * An MCP server (the SDK's low-level `Server`: the tools' argument schemas are rendered from
 * the API contract, and their arguments are validated by the routes themselves) whose tool
 * calls are dispatched as HTTP routes with `headers` (the caller's Authorization).
 */
export function createMcpServer(dispatch: McpDispatch, headers: Readonly<Record<string, string>>): Server {
  const byName = new Map(MCP_TOOLS.map((spec) => [spec.name, spec]));
  const tools = MCP_TOOLS.map(listing);
  const server = new Server(MCP_SERVER_INFO, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, (request) => {
    const spec = byName.get(request.params.name);
    if (!spec)
      throw new McpError(
        ErrorCode.InvalidParams,
        `Unknown tool ${JSON.stringify(request.params.name.slice(0, 100))}; the tools are ${[...byName.keys()].join(", ")} (tools/list describes them).`,
      );
    return callTool(spec, request.params.arguments, dispatch, headers);
  });
  return server;
}
