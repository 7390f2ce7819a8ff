import type { Readable, Writable } from "node:stream";
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import {
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
} from "@modelcontextprotocol/sdk/types.js";

/**
 * `overseer mcp`: the gateway's MCP server (`POST /mcp`) offered on stdin/stdout, for an MCP
 * client that starts servers as commands. Every message of the client is passed on with the
 * MCP SDK's streamable HTTP client transport (bearer token in the Authorization header) and
 * every answer passed back with its stdio server transport: the tools, their schemas and their
 * authorization are the gateway's, never a copy. When the gateway cannot be reached or refuses
 * the token, a request is answered with a JSON-RPC error saying so and what to do.
 */

export interface McpBridgeOptions {
  /** The gateway's MCP endpoint, `<OVERSEER_URL>/mcp`. */
  readonly endpoint: URL;
  readonly token: string;
  readonly stdin: Readable;
  readonly stdout: Writable;
  /** Diagnostics (stderr: stdout carries only MCP messages). */
  readonly log: (line: string) => void;
}

/** JSON-RPC "server error" code of a request the gateway did not answer. */
const GATEWAY_ERROR_CODE = -32000;

/** Runs the bridge until stdin ends (the MCP client went away). */
export async function runMcpBridge(options: McpBridgeOptions): Promise<void> {
  const upstream = new StreamableHTTPClientTransport(options.endpoint, {
    requestInit: { headers: { Authorization: `Bearer ${options.token}` } },
  });
  const local = new StdioServerTransport(options.stdin, options.stdout);
  const initializeIds = new Set<string | number>();
  const pending = new Set<Promise<void>>();

  upstream.onmessage = (message) => {
    noteProtocolVersion(upstream, message, initializeIds);
    track(pending, local.send(message));
  };
  upstream.onerror = (error) => options.log(`overseer mcp: ${explain(error, options.endpoint)}`);
  local.onerror = (error) =>
    options.log(`overseer mcp: unreadable message from the MCP client: ${error.message}`);
  local.onmessage = (message) => {
    if (isJSONRPCRequest(message) && message.method === "initialize") initializeIds.add(message.id);
    track(pending, forward(message));
  };

  /** Passes one message on; a request the gateway did not take is answered with the reason. */
  async function forward(message: JSONRPCMessage): Promise<void> {
    try {
      await upstream.send(message);
    } catch (error) {
      // The transport has reported it through onerror (logged); the client gets the reason too.
      const reason = explain(error, options.endpoint);
      if (isJSONRPCRequest(message))
        await local.send({
          jsonrpc: "2.0",
          id: message.id,
          error: { code: GATEWAY_ERROR_CODE, message: reason },
        });
    }
  }

  const ended = new Promise<void>((resolve) => {
    options.stdin.once("end", resolve);
    options.stdin.once("close", resolve);
  });
  await upstream.start();
  await local.start();
  await ended;
  await Promise.allSettled([...pending]);
  await local.close();
  await upstream.close();
}

function track(pending: Set<Promise<void>>, work: Promise<void>): void {
  const settled = work.catch(() => undefined);
  pending.add(settled);
  void settled.finally(() => pending.delete(settled));
}

/** After `initialize`, the HTTP transport sends the negotiated version with every request (MCP-Protocol-Version). */
function noteProtocolVersion(
  upstream: StreamableHTTPClientTransport,
  message: JSONRPCMessage,
  initializeIds: Set<string | number>,
): void {
  if (!isJSONRPCResultResponse(message) || !initializeIds.delete(message.id)) return;
  const version = (message.result as { protocolVersion?: unknown }).protocolVersion;
  if (typeof version === "string") upstream.setProtocolVersion(version);
}

/** What went wrong with the gateway, and what to do, in one sentence. */
export function explain(error: unknown, endpoint: URL): string {
  const gateway = endpoint.origin;
  if (error instanceof StreamableHTTPError) {
    const status = error.code ?? 0;
    const body = /\{[\s\S]*\}$/.exec(error.message)?.[0];
    let detail = "";
    try {
      const parsed = body
        ? (JSON.parse(body) as { error?: { code?: unknown; message?: unknown } })
        : undefined;
      if (typeof parsed?.error?.message === "string")
        detail = `${String(parsed.error.code ?? "")}: ${parsed.error.message}`.replace(/^: /, "");
    } catch {
      detail = "";
    }
    if (status === 401)
      return `The Overseer gateway at ${gateway} refused the token (HTTP 401${detail ? ` ${detail}` : ""}). Set OVERSEER_TOKEN to a valid token (\`overseer token create --scope operate\`).`;
    return `The Overseer gateway at ${gateway} answered HTTP ${status}${detail ? ` ${detail}` : ` (${error.message.slice(0, 300)})`}.`;
  }
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const why = cause?.code ?? cause?.message ?? (error as Error).message;
  return `Cannot reach the Overseer gateway at ${gateway} (${why}). Is it running? Set OVERSEER_URL to its address.`;
}
