import { zodToOpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import { z } from "./openapi-zod.ts";

/**
 * The MCP endpoint's side of the contract (`POST /mcp`, docs/http-api.md "MCP server"): the
 * JSON-RPC 2.0 envelope the gateway checks before the MCP SDK reads the message, and the JSON
 * Schema an MCP tool advertises for its arguments, rendered from the very zod schemas of the
 * route it calls (with their OpenAPI descriptions and examples), never a second copy.
 */

/** One JSON-RPC 2.0 message from an MCP client (request, notification or response); the SDK checks the rest. */
export const McpMessageSchema = z
  .looseObject({
    jsonrpc: z.literal("2.0", { error: 'the string "2.0" (a JSON-RPC 2.0 message)' }),
    method: z
      .string({ error: "an MCP method name such as tools/list" })
      .min(1, { error: "an MCP method name such as tools/list" })
      .max(200, { error: "an MCP method name of at most 200 characters" })
      .optional(),
    id: z.union([z.string().max(200), z.int()], { error: "a request id: a string or an integer" }).optional(),
    params: z.record(z.string(), z.unknown(), { error: "an object (the method's parameters)" }).optional(),
  })
  .openapi("McpMessage", {
    description:
      "A JSON-RPC 2.0 message of the Model Context Protocol (streamable HTTP transport, stateless: no session, no server-initiated stream).",
    example: { jsonrpc: "2.0", id: 1, method: "tools/list" },
  });

/** A JSON Schema object (draft 2020-12), as MCP's `tools/list` carries them. */
export type JsonSchemaObject = { type: "object"; [key: string]: unknown };

/** OpenAPI-only metadata keys that have no meaning in a JSON Schema. */
const OPENAPI_ONLY_KEYS = ["_internal", "param", "example"] as const;

/**
 * The JSON Schema of an object schema's input, with the `.openapi()` descriptions, examples
 * and types of its fields (an integer query parameter is an integer here, as in /openapi.json).
 */
export function toolInputJsonSchema(schema: z.ZodObject): JsonSchemaObject {
  const json = z.toJSONSchema(schema, {
    io: "input",
    unrepresentable: "any",
    metadata: zodToOpenAPIRegistry,
    override: ({ jsonSchema }) => {
      const node = jsonSchema as Record<string, unknown>;
      if (node.example !== undefined) node.examples = [node.example];
      for (const key of OPENAPI_ONLY_KEYS) delete node[key];
      if (node.type === "integer") delete node.pattern;
    },
  }) as Record<string, unknown>;
  delete json.$schema;
  return { ...json, type: "object" };
}
