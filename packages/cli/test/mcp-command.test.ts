import { type AddressInfo, createServer } from "node:net";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { applyTransition, createProject, getTask } from "@overseer/db";
import { taskCard } from "@overseer/test-support";
import { importTasks, startProject, TransitionApplier } from "@overseer/transitions";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type CliGateway, runCapturedCli, startCliGateway } from "./cli-gateway.ts";

/**
 * `overseer mcp` as an MCP client starts it: the SDK's StdioClientTransport spawns the real
 * CLI (`packages/cli/bin/overseer mcp`) with OVERSEER_URL and OVERSEER_TOKEN, and the SDK's
 * Client talks to it over stdin/stdout; the CLI passes every message to a real gateway on real
 * Postgres. The tools are the gateway's; a decision is resolved with an operate token (again:
 * the same resolution), refused with a read token; a wrong token and an unreachable gateway
 * come back as errors that say what to set.
 */

const BIN = fileURLToPath(new URL("../bin/overseer", import.meta.url));
/** tsx starts the CLI from TypeScript: generous on a loaded machine. */
const SPAWN_TIMEOUT = 120_000;

let env: CliGateway;
let db: CliGateway["scratch"];
let gateway: CliGateway["gateway"];
let tokens: CliGateway["tokens"];
let decisionId = "";
let resolverId = "";
const clients: Client[] = [];

beforeAll(async () => {
  env = await startCliGateway("climcp", (scope) =>
    scope === "read" ? "agent-reader" : scope === "operate" ? "agent-operator" : "agent-admin",
  );
  ({ scratch: db, gateway, tokens } = env);
  await createProject(db.db, { id: "agents", repo: "/tmp/none", runnerConfig: {}, objective: "MCP" });
  const applier = new TransitionApplier({ db: db.db });
  await importTasks(applier, "agents", [taskCard("S00-001")]);
  await startProject(applier, "agents");
  const claimed = await applyTransition(db.db, "agents", { kind: "claim" });
  const run = claimed.changes.runs[0];
  if (!run) throw new Error("nothing claimed");
  await applyTransition(db.db, "agents", {
    kind: "escalate",
    runId: run.id,
    reason: "A product decision.",
    needsUser: true,
    question: "Which database?",
    options: [
      { id: "use_postgres", label: "Use Postgres" },
      { id: "use_sqlite", label: "Use SQLite" },
    ],
  });
  resolverId = `${run.taskId}.R1`;
  decisionId = `decision-${resolverId}`;
});

afterEach(async () => {
  for (const client of clients.splice(0)) await client.close();
});

afterAll(async () => {
  await env?.close();
});

/** An MCP client that starts `overseer mcp` with this gateway URL and token. */
async function spawnMcp(env: Record<string, string>): Promise<{ client: Client; stderr: () => string }> {
  const transport = new StdioClientTransport({
    command: BIN,
    args: ["mcp"],
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...env },
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk) => {
    stderr += String(chunk);
  });
  const client = new Client({ name: "overseer-cli-test", version: "1.0.0" });
  clients.push(client);
  await client.connect(transport, { timeout: SPAWN_TIMEOUT });
  return { client, stderr: () => stderr };
}

/** A local port nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function textOf(result: Awaited<ReturnType<Client["callTool"]>>): string {
  const first = (result.content as { type: string; text?: string }[])[0];
  return first?.text ?? "";
}

describe("overseer mcp (stdio)", () => {
  it("lists the gateway's tools and resolves a decision with an operate token, twice with one resolution", {
    timeout: SPAWN_TIMEOUT * 2,
  }, async () => {
    const { client } = await spawnMcp({ OVERSEER_URL: gateway.url, OVERSEER_TOKEN: tokens.operate });
    expect(client.getServerVersion()?.name).toBe("overseer");
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(
      expect.arrayContaining([
        "fleet_status",
        "list_needs_you",
        "resolve_decision",
        "add_task",
        "import_tasks",
      ]),
    );
    const needs = await client.callTool({ name: "list_needs_you", arguments: {} });
    expect((needs.structuredContent as { decisions: { id: string }[] }).decisions.map((d) => d.id)).toContain(
      decisionId,
    );
    const args = { project_id: "agents", decision_id: decisionId, option_id: "use_postgres" };
    const first = await client.callTool({ name: "resolve_decision", arguments: args });
    expect(first.structuredContent, textOf(first)).toMatchObject({
      application_status: "applied",
      decision: { resolved_by: "api:agent-operator" },
    });
    const again = await client.callTool({ name: "resolve_decision", arguments: args });
    expect(again.structuredContent).toMatchObject({ application_status: "already_applied" });
    expect((await getTask(db.db, "agents", resolverId))?.status).toBe("todo");
  });

  it("refuses a change with a read token: a tool error naming the scope to use", {
    timeout: SPAWN_TIMEOUT * 2,
  }, async () => {
    const { client } = await spawnMcp({ OVERSEER_URL: gateway.url, OVERSEER_TOKEN: tokens.read });
    const result = await client.callTool({
      name: "add_task",
      arguments: { project_id: "agents", id: "S00-009", title: "Not with a read token" },
    });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^add_task was refused \(HTTP 403 forbidden\): .*scope "operate"/);
    expect(await getTask(db.db, "agents", "S00-009")).toBeFalsy();
  });

  it("answers initialize with the reason when the token is wrong or the gateway unreachable", {
    timeout: SPAWN_TIMEOUT * 3,
  }, async () => {
    await expect(spawnMcp({ OVERSEER_URL: gateway.url, OVERSEER_TOKEN: "ovr_wrong" })).rejects.toThrow(
      /refused the token \(HTTP 401 invalid_token: The bearer token is unknown or revoked.*\)\. Set OVERSEER_TOKEN/,
    );
    const port = await closedPort();
    await expect(
      spawnMcp({ OVERSEER_URL: `http://127.0.0.1:${port}`, OVERSEER_TOKEN: tokens.read }),
    ).rejects.toThrow(
      `Cannot reach the Overseer gateway at http://127.0.0.1:${port} (ECONNREFUSED). Is it running? Set OVERSEER_URL to its address.`,
    );
  });

  it("without a token, exits 2 saying what to set", async () => {
    const result = await runCapturedCli(["mcp"], { OVERSEER_URL: gateway.url }, { cwd: "/" });
    expect(result.code).toBe(2);
    expect(result.err).toContain("OVERSEER_URL is set");
  });
});
