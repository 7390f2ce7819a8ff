import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { applyTransition, createApiToken, createProject, getTask } from "@overseer/db";
import { taskCard } from "@overseer/test-support";
import { importTasks, startProject, TransitionApplier } from "@overseer/transitions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliGateway, type CliResult, runCapturedCli, startCliGateway } from "./cli-gateway.ts";

/** The operator verbs against a real listening gateway over a scratch database and Redis prefix. */

let env: CliGateway;
let tokens: CliGateway["tokens"];

beforeAll(async () => {
  env = await startCliGateway("clitest");
  tokens = env.tokens;
  await seed("solo", ["S00-001", "S00-002", "S00-003"]);
});

afterAll(async () => {
  await env?.close();
});

async function seed(id: string, taskIds: string[]): Promise<void> {
  await createProject(env.scratch.db, {
    id,
    repo: "/tmp/none",
    runnerConfig: {},
    objective: `Objective of ${id}`,
  });
  await importTasks(
    new TransitionApplier({ db: env.scratch.db }),
    id,
    taskIds.map((t) => ({ ...taskCard(t), scope: ["**"] })),
  );
  await startProject(new TransitionApplier({ db: env.scratch.db }), id);
}

/** Claims the next task and escalates it with a question: returns the resolver and its card. */
async function raiseQuestion(project: string): Promise<{ resolverId: string; decisionId: string }> {
  const claimed = await applyTransition(env.scratch.db, project, { kind: "claim" });
  const run = claimed.changes.runs[0];
  if (!run) throw new Error("nothing to claim");
  await applyTransition(env.scratch.db, project, {
    kind: "escalate",
    runId: run.id,
    reason: "Needs a product decision.",
    needsUser: true,
    question: "Ship now or wait?",
    options: [
      { id: "ship", label: "Ship now" },
      { id: "wait", label: "Wait" },
    ],
  });
  return { resolverId: `${run.taskId}.R1`, decisionId: `decision-${run.taskId}.R1` };
}

function cli(
  args: string[],
  token: string | null = tokens.operate,
  url = env.gateway.url,
): Promise<CliResult> {
  return runCapturedCli(args, token ? { OVERSEER_URL: url, OVERSEER_TOKEN: token } : { OVERSEER_URL: url });
}

describe("status", () => {
  it("prints the only project's status, with --json and with the --status alias", async () => {
    const quiet = await cli(["status"], tokens.read);
    expect(quiet.code).toBe(0);
    expect(quiet.out).toContain("project solo: active");
    expect(quiet.out).toContain("no unanswered questions");
    // What the project's runs spent, from the agent CLIs' own reports (none yet).
    expect(quiet.out).toContain("usage: 0 tokens in (0 cached), 0 out, $0.0000 no budget");
    const q = await raiseQuestion("solo");
    const alias = await cli(["--status"], tokens.read);
    expect(alias.code).toBe(0);
    expect(alias.out).toContain("waiting for you: 1 unanswered question(s)");
    expect(alias.out).toContain(q.decisionId);
    const json = await cli(["status", "--json", "--project", "solo"], tokens.read);
    expect(JSON.parse(json.out)).toMatchObject({
      project_id: "solo",
      pending_count: 1,
      usage: { tokens_in: 0, tokens_cached: 0, cost_usd: 0, budget_usd: null },
    });
    const unknown = await cli(["status", "--project", "nope"], tokens.read);
    expect(unknown.code).toBe(1);
    expect(unknown.err).toContain("does not exist");
    // Leave nothing pending for the next tests.
    expect((await cli(["answer", q.resolverId, "ship", "it"])).code).toBe(0);
  });
});

describe("notify, answer, resolve, release-external", () => {
  it("notify routes to the single pending question, and is refused (exit 1) when none is pending", async () => {
    const q = await raiseQuestion("solo");
    const routed = await cli(["--notify", "Ship it on Friday."]);
    expect(routed.code).toBe(0);
    expect(routed.out).toContain(`routed to ${q.decisionId}`);
    const task = await getTask(env.scratch.db, "solo", q.resolverId);
    expect(task?.answers.at(-1)?.answer).toBe("Ship it on Friday.");
    const none = await cli(["notify", "anyone?"]);
    expect(none.code).toBe(1);
    expect(none.err).toContain("No question is pending");
  });

  it("answer resolves an item's card; resolve is idempotent and refuses a stale option", async () => {
    await seed("duo", ["S00-001", "S00-002"]);
    const a = await raiseQuestion("duo");
    const b = await raiseQuestion("duo");
    const ambiguous = await cli(["notify", "yes", "--project", "duo"]);
    expect(ambiguous.code).toBe(1);
    expect(ambiguous.err).toContain(a.decisionId);
    expect(ambiguous.err).toContain(b.decisionId);
    // Without --project, status lists every project (solo and duo here), in id order.
    const every = await cli(["status"], tokens.read);
    expect(every.code).toBe(0);
    expect(every.out).toMatch(/project duo: active[\s\S]*project solo: active/);
    const everyJson = JSON.parse((await cli(["status", "--json"], tokens.read)).out);
    expect(everyJson.map((s: { project_id: string }) => s.project_id)).toEqual(["duo", "solo"]);

    const answered = await cli(["answer", a.resolverId, "Wait", "for", "QA", "--project", "duo"]);
    expect(answered.code).toBe(0);
    expect(answered.out).toContain(`${a.decisionId} resolved`);

    const resolved = await cli(["resolve", b.decisionId, "--option", "ship", "--project", "duo"]);
    expect(resolved.code).toBe(0);
    expect(resolved.out).toContain("resolved with option ship");
    const again = await cli(["resolve", b.resolverId, "--option", "ship", "--project", "duo"]);
    expect(again.code).toBe(0);
    expect(again.out).toContain("was already resolved");
    const stale = await cli(["resolve", b.decisionId, "--option", "wait", "--project", "duo"]);
    expect(stale.code).toBe(1);
    expect(stale.err).toContain("already resolved with option ship");
    const usage = await cli(["resolve", b.decisionId, "--project", "duo"]);
    expect(usage.code).toBe(2);
  });

  it("resolve with an option the card does not offer exits 2 with the gateway's message", async () => {
    await seed("tri", ["S00-001"]);
    const q = await raiseQuestion("tri");
    const bad = await cli(["resolve", q.decisionId, "--option", "maybe", "--project", "tri"]);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain("is not offered");
    const released = await cli([
      "release-external",
      q.resolverId,
      "--reason",
      "Admin created the bucket.",
      "--project",
      "tri",
    ]);
    expect(released.code).toBe(0);
    expect(released.out).toContain(`released ${q.resolverId}; it is now todo`);
    const twice = await cli(["release-external", q.resolverId, "--reason", "again", "--project", "tri"]);
    expect(twice.code).toBe(1);
  });
});

describe("tokens and configuration", () => {
  it("lists and revokes tokens with an admin token; an operate token is refused (exit 1)", async () => {
    const extra = await createApiToken(env.scratch.db, { name: "temporary", scope: "read" });
    const list = await cli(["token", "list"], tokens.admin);
    expect(list.code).toBe(0);
    expect(list.out).toContain("temporary");
    expect(list.out).not.toContain(extra.token);
    const revoked = await cli(["token", "revoke", extra.id], tokens.admin);
    expect(revoked.code).toBe(0);
    expect((await cli(["status", "--project", "solo"], extra.token)).code).toBe(1);
    const forbidden = await cli(["token", "list"], tokens.operate);
    expect(forbidden.code).toBe(1);
    expect(forbidden.err).toContain('needs a token with scope "admin"');
  });

  it("exits 2 without OVERSEER_TOKEN and 1 when the gateway is unreachable", async () => {
    const noToken = await cli(["status"], null);
    expect(noToken.code).toBe(2);
    expect(noToken.err).toContain("OVERSEER_TOKEN");
    const unreachable = await cli(["status", "--project", "solo"], tokens.read, "http://127.0.0.1:1");
    expect(unreachable.code).toBe(1);
    expect(unreachable.err).toContain("Cannot reach the Overseer gateway");
  });

  it("exits 1 naming the route and each mismatch when an answer does not match the API contract", async () => {
    // A server that speaks HTTP but not the contract (another version, a proxy's page).
    const server = createServer((req, res) => {
      res.setHeader("Content-Type", "application/json");
      if (req.url === "/api/v1/projects") res.end(JSON.stringify({ projects: [{ id: 7 }] }));
      else res.end(JSON.stringify({ text: 42 }));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const url = `http://127.0.0.1:${port}`;
      const listing = await cli(["status"], tokens.read, url);
      expect(listing.code).toBe(1);
      expect(listing.err).toContain(
        `answered GET /api/v1/projects with a body that does not match the API contract`,
      );
      expect(listing.err).toContain("projects[0].id: expected a string, received 7");
      expect(listing.err).toContain("and 22 more. Are the CLI and the gateway the same version?");
      const status = await cli(["status", "--project", "solo"], tokens.read, url);
      expect(status.code).toBe(1);
      expect(status.err).toContain("GET /api/projects/solo/status");
      expect(status.err).toContain("project_id: expected a string, received nothing (missing)");
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
