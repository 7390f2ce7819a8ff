import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningGateway, startGateway } from "../src/index.ts";
import { card, seedProject, useGatewayFixture } from "./support/gateway-fixture.ts";

/**
 * The write rate limit through the MCP server: the MCP endpoint's own POSTs (initialize,
 * tools/list, read tools) are not writes; each tool call that writes is counted as its route,
 * and the refusal comes back as a tool error with the gateway's Retry-After advice.
 */

const fx = useGatewayFixture();
let gateway: RunningGateway;
let client: Client | undefined;

beforeAll(async () => {
  gateway = await startGateway(fx.deps, { port: 0, processMetrics: false, rateLimitWritesPerMinute: 2 });
});

afterAll(async () => {
  await client?.close();
  await gateway?.close();
});

describe("MCP tools under the write rate limit", () => {
  it("counts only the writes its tools make, and answers the third with a 429 tool error", async () => {
    await seedProject(fx, "lim", [card("S00-001")]);
    client = new Client({ name: "overseer-rate-test", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${fx.tokens.operate}` } },
      }),
    );
    for (let i = 0; i < 4; i++) {
      await client.listTools();
      const read = await client.callTool({ name: "list_tasks", arguments: { project_id: "lim" } });
      expect(read.isError).toBeFalsy();
    }
    for (const id of ["S00-002", "S00-003"]) {
      const added = await client.callTool({
        name: "add_task",
        arguments: { project_id: "lim", id, title: id },
      });
      expect(added.isError, JSON.stringify(added.content)).toBeFalsy();
    }
    const third = await client.callTool({
      name: "add_task",
      arguments: { project_id: "lim", id: "S00-004", title: "one too many" },
    });
    expect(third.isError).toBe(true);
    const text = (third.content as { text: string }[])[0]?.text ?? "";
    expect(text).toMatch(
      /^add_task was refused \(HTTP 429 rate_limited\): Too many write requests for this token \(limit 2 per minute\); retry after \d+ s\. Wait as the message says/,
    );
  });
});
