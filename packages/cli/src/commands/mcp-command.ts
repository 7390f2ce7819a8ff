import { parseCommandArgs } from "../arg-parser.ts";
import { settingsFrom } from "../cli-context.ts";
import { EXIT_OK } from "../cli-errors.ts";
import type { CliCommand } from "../command-registry.ts";
import { GatewayClient } from "../gateway-client.ts";
import { runMcpBridge } from "../mcp-bridge.ts";

const usage =
  "overseer mcp   (an MCP client starts it; OVERSEER_URL and OVERSEER_TOKEN select the gateway and token)";

/** `overseer mcp`: the gateway's MCP server on stdin/stdout (`mcp-bridge.ts`, README "MCP server"). */
export const mcpCommand: CliCommand = {
  path: ["mcp"],
  summary: "MCP server on stdin/stdout for your own agents: the gateway's tools with your token",
  usage,
  async run(args, io) {
    parseCommandArgs(args, {}, usage, false);
    // The same configuration checks as every gateway verb (no token: exit 2 with what to set).
    const client = GatewayClient.fromIo(io);
    const token = settingsFrom(io).token ?? "";
    await runMcpBridge({
      endpoint: new URL(`${client.baseUrl}/mcp`),
      token,
      stdin: process.stdin,
      stdout: process.stdout,
      log: (line) => io.err(line),
    });
    return EXIT_OK;
  },
};
