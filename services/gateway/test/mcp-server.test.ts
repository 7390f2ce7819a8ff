import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { AUTHORIZATION_TABLE, requiredAccess, scopeGrants } from "@overseer/api-contract";
import { getTask, listEvents } from "@overseer/db";
import { afterEach, describe, expect, it } from "vitest";
import { MCP_TOOLS } from "../src/mcp/mcp-tools.ts";
import { useGatewayFixture, useListeningGateway, useRaisedQuestion } from "./support/gateway-fixture.ts";

/**
 * The MCP server of the gateway (`POST /mcp`) driven by the MCP SDK's own client over the
 * streamable HTTP transport, against a real gateway on real Postgres: the tools are listed
 * with argument schemas from the API contract, a decision is resolved with an operate token
 * (twice: the same answer), a read token is refused with the route's own reason, a wrong token
 * cannot connect, and bad arguments come back as tool errors that say what to fix.
 */

const fx = useGatewayFixture();
const gateway = useListeningGateway(fx);
const q = useRaisedQuestion(fx, "mcp");
const clients: Client[] = [];

afterEach(async () => {
  for (const client of clients.splice(0)) await client.close();
});

async function connect(token: string): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: "overseer-test", version: "1.0.0" });
  await client.connect(transport);
  clients.push(client);
  return client;
}

/** The text of a tool result's first content block. */
function textOf(result: Awaited<ReturnType<Client["callTool"]>>): string {
  const first = (result.content as { type: string; text?: string }[])[0];
  return first?.type === "text" ? (first.text ?? "") : "";
}

describe("MCP server over streamable HTTP", () => {
  it("lists every tool with its argument schema from the route", async () => {
    const client = await connect(fx.tokens.read);
    expect(client.getServerVersion()?.name).toBe("overseer");
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(MCP_TOOLS.map((t) => t.name));
    const resolve = tools.find((t) => t.name === "resolve_decision");
    expect(resolve?.inputSchema).toMatchObject({
      type: "object",
      properties: {
        project_id: { type: "string", description: "Project id (slug)." },
        decision_id: { type: "string" },
        option_id: { type: "string", maxLength: 128 },
      },
      required: expect.arrayContaining(["project_id", "decision_id", "option_id"]),
    });
    expect(resolve?.description).toContain("Scope operate.");
    expect(resolve?.annotations).toMatchObject({ readOnlyHint: false, idempotentHint: true });
    const listTasks = tools.find((t) => t.name === "list_tasks");
    expect(listTasks?.inputSchema.properties?.limit).toMatchObject({ type: "integer", maximum: 1000 });
    expect(tools.find((t) => t.name === "fleet_status")?.annotations?.readOnlyHint).toBe(true);
  });

  it("binds every tool to its route's row of the authorization table (a read token's calls)", async () => {
    const client = await connect(fx.tokens.read);
    const known: Record<string, string> = {
      project_id: "mcp",
      task_id: q.taskId,
      run_id: q.runId,
      decision_id: q.decisionId,
    };
    const before = await listEvents(fx.scratch.db, { projectId: "mcp" });
    for (const spec of MCP_TOOLS) {
      const args: Record<string, unknown> = Object.fromEntries(
        Object.keys(spec.pathArgs).map((arg) => [arg, known[arg]]),
      );
      if (spec.body.kind === "documents") args.tasks = [];
      const result = await client.callTool({ name: spec.name, arguments: args });
      const needed = requiredAccess(AUTHORIZATION_TABLE[spec.route.operationId], "active");
      if (needed !== "public" && !scopeGrants("read", needed)) {
        expect(textOf(result), spec.name).toMatch(
          `${spec.name} was refused (HTTP 403 forbidden): This route needs a token with scope "${needed}"`,
        );
      } else {
        expect(result.isError, `${spec.name}: ${textOf(result)}`).toBeFalsy();
        expect(spec.hints.readOnlyHint, spec.name).toBe(true);
      }
    }
    expect(await listEvents(fx.scratch.db, { projectId: "mcp" })).toEqual(before);
  });

  it("reads the fleet and the Needs-you list with a read token", async () => {
    const client = await connect(fx.tokens.read);
    const fleet = await client.callTool({ name: "fleet_status", arguments: {} });
    expect(fleet.isError).toBeFalsy();
    const projects = (fleet.structuredContent as { projects: { id: string }[] }).projects;
    expect(projects.map((p) => p.id)).toContain("mcp");
    const needs = await client.callTool({ name: "list_needs_you", arguments: { limit: 10 } });
    const decisions = (needs.structuredContent as { decisions: { id: string; project_id: string }[] })
      .decisions;
    expect(decisions).toContainEqual(expect.objectContaining({ id: q.decisionId, project_id: "mcp" }));
    expect(JSON.parse(textOf(needs))).toEqual(needs.structuredContent);
    const got = await client.callTool({
      name: "get_task",
      arguments: { project_id: "mcp", task_id: q.taskId },
    });
    expect(got.structuredContent).toMatchObject({ id: q.taskId, status: "blocked" });
    const log = await client.callTool({ name: "get_run_log", arguments: { run_id: q.runId } });
    expect(log.structuredContent, textOf(log)).toMatchObject({ run_id: q.runId, truncated: false });
    const diff = await client.callTool({ name: "get_run_diff", arguments: { run_id: q.runId } });
    expect(diff.structuredContent).toMatchObject({ available: false, reason: "this run made no commit" });
  });

  it("refuses to resolve with a read token, with the route's reason, and changes nothing", async () => {
    const client = await connect(fx.tokens.read);
    const result = await client.callTool({
      name: "resolve_decision",
      arguments: { project_id: "mcp", decision_id: q.decisionId, option_id: "use_postgres" },
    });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(
      /^resolve_decision was refused \(HTTP 403 forbidden\): This route needs a token with scope "operate"; this token \(reader\) has "read"\./,
    );
    expect(textOf(result)).toContain("overseer token create --scope operate");
    const events = await listEvents(fx.scratch.db, { projectId: "mcp", types: ["decision.resolved"] });
    expect(events).toEqual([]);
  });

  it("resolves a decision with an operate token; resolving again answers the same resolution", async () => {
    const client = await connect(fx.tokens.operate);
    const args = {
      project_id: "mcp",
      decision_id: q.decisionId,
      option_id: "use_postgres",
      note: "Version 16.",
    };
    const first = await client.callTool({ name: "resolve_decision", arguments: args });
    expect(first.isError, textOf(first)).toBeFalsy();
    expect(first.structuredContent).toMatchObject({
      resolved: true,
      application_status: "applied",
      decision: { resolved_by: "api:operator" },
    });
    const again = await client.callTool({ name: "resolve_decision", arguments: args });
    expect(again.structuredContent).toMatchObject({ resolved: true, application_status: "already_applied" });
    const ids = [first, again].map((r) => (r.structuredContent as { resolution_id: string }).resolution_id);
    expect(ids[1]).toBe(ids[0]);
    const resolver = await getTask(fx.scratch.db, "mcp", q.resolverId);
    expect(resolver?.status).toBe("todo");
    const events = await listEvents(fx.scratch.db, { projectId: "mcp", types: ["decision.resolved"] });
    expect(events).toHaveLength(1);
  });

  it("gives bad arguments back as tool errors that name the field and what to send", async () => {
    const client = await connect(fx.tokens.operate);
    const badId = await client.callTool({
      name: "get_task",
      arguments: { project_id: "Not A Project", task_id: "S00-001" },
    });
    expect(badId.isError).toBe(true);
    expect(textOf(badId)).toMatch(
      /^Invalid arguments for get_task: project_id: expected a project id of lowercase letters/,
    );
    const missing = await client.callTool({ name: "resolve_decision", arguments: { project_id: "mcp" } });
    expect(textOf(missing)).toMatch(/^Invalid arguments for resolve_decision: decision_id: /);
    const unknown = await client.callTool({ name: "get_run", arguments: { run: "x" } });
    expect(textOf(unknown)).toMatch(/unknown argument "run"; get_run takes run_id\./);
    const body = await client.callTool({
      name: "add_task",
      arguments: { project_id: "mcp", id: "S09-001", title: 7 },
    });
    expect(body.isError).toBe(true);
    expect(textOf(body)).toMatch(
      /^add_task was refused \(HTTP 400 invalid_request\): Invalid request body: title: expected a non-empty single-line string/,
    );
    const absent = await client.callTool({ name: "get_project", arguments: { project_id: "nope" } });
    expect(textOf(absent)).toBe(
      "get_project was refused (HTTP 404 not_found): Project nope does not exist; list projects with GET /api/v1/projects.",
    );
    await expect(client.callTool({ name: "no_such_tool", arguments: {} })).rejects.toThrow(
      /Unknown tool "no_such_tool"; the tools are fleet_status, /,
    );
  });

  it("adds and imports tasks, and starts and pauses the project, with an operate token", async () => {
    const client = await connect(fx.tokens.operate);
    const added = await client.callTool({
      name: "add_task",
      arguments: { project_id: "mcp", id: "S01-001", title: "Added over MCP", scope: ["src/**"] },
    });
    expect(added.structuredContent, textOf(added)).toMatchObject({ id: "S01-001", status: "todo" });
    const imported = await client.callTool({
      name: "import_tasks",
      arguments: {
        project_id: "mcp",
        task_file: "tasks:\n  - {id: S01-002, title: From YAML, prerequisites: [S01-001]}\n",
      },
    });
    expect(imported.isError, textOf(imported)).toBeFalsy();
    const json = await client.callTool({
      name: "import_tasks",
      arguments: { project_id: "mcp", tasks: [{ id: "S01-003", title: "From JSON" }] },
    });
    expect(json.isError, textOf(json)).toBeFalsy();
    const both = await client.callTool({ name: "import_tasks", arguments: { project_id: "mcp" } });
    expect(textOf(both)).toMatch(/give exactly one of tasks .* or task_file/);
    const paused = await client.callTool({
      name: "pause_project",
      arguments: { project_id: "mcp", reason: "mcp test" },
    });
    expect(paused.structuredContent, textOf(paused)).toMatchObject({ project: { status: "paused" } });
    const started = await client.callTool({
      name: "start_project",
      arguments: { project_id: "mcp", max_sessions: 3 },
    });
    expect(started.structuredContent, textOf(started)).toMatchObject({ project: { status: "active" } });
    const stop = await client.callTool({ name: "stop_project", arguments: { project_id: "mcp" } });
    expect(textOf(stop)).toMatch(/^stop_project was refused \(HTTP 403 forbidden\): .*"admin"/);
  });

  it("refuses a wrong token before any MCP exchange", async () => {
    await expect(connect("ovr_not_a_real_token")).rejects.toThrow(/401|unknown or revoked/);
  });

  it("answers GET and DELETE with 405 (stateless), and a client that accepts no event stream with 406", async () => {
    for (const method of ["GET", "DELETE"]) {
      const res = await fetch(`${gateway.url}/mcp`, {
        method,
        headers: { Authorization: `Bearer ${fx.tokens.read}` },
      });
      expect(res.status).toBe(405);
      expect(res.headers.get("allow")).toBe("POST");
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("method_not_allowed");
    }
    const res = await fx.request("POST", "/mcp", {
      token: fx.tokens.read,
      body: { jsonrpc: "2.0", id: 1, method: "tools/list" },
      headers: { Accept: "application/json" },
    });
    expect(res.status).toBe(406);
    expect(res.body.error.message).toContain("text/event-stream");
    const bad = await fx.request("POST", "/mcp", {
      token: fx.tokens.read,
      body: { jsonrpc: "1.0", id: 1 },
      headers: { Accept: "application/json, text/event-stream" },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain('jsonrpc: expected the string "2.0"');
  });
});
