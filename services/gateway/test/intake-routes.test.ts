// Intake routes: a project's tracker sources (add with one validated spec, list, remove, dry run
// against the GitHub double, whose every request is checked against @octokit/openapi) and the
// per-source webhook (the double's own signed deliveries, stored once, a re-read queued once).
import { INTAKE_KINDS, INTAKE_STATUS_MOMENTS } from "@overseer/api-contract";
import { intakeTaskIds, recordIntakeItem } from "@overseer/db";
import { STATUS_MOMENTS, TRACKER_KINDS } from "@overseer/intake";
import { GitHubDouble, type WebhookDelivery } from "@overseer/test-support";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { seedProject, useGatewayFixture } from "./support/gateway-fixture.ts";

const fx = useGatewayFixture();
const REPO = "acme/app";
const BOT = { login: "overseer-bot", token: "ghp_intake_routes_bot" };
const TOKEN_ENV = "OVERSEER_TEST_INTAKE_ROUTES_TOKEN";
const SECRET_ENV = "OVERSEER_TEST_INTAKE_ROUTES_SECRET";
const SECRET = "intake-routes-secret";
const NOWHERE = "http://127.0.0.1:9/hook";
let github: GitHubDouble;

beforeAll(async () => {
  process.env[TOKEN_ENV] = BOT.token;
  process.env[SECRET_ENV] = SECRET;
  await seedProject(fx, "intake");
  github = await GitHubDouble.start();
  github.addUser(BOT);
  await github.createRepository(REPO);
  github.addWebhook(NOWHERE, SECRET);
}, 60_000);

afterAll(async () => {
  delete process.env[TOKEN_ENV];
  delete process.env[SECRET_ENV];
  await github?.close();
});

afterEach(() => {
  expect(github.takeViolations()).toEqual([]);
});

async function addSource(body: Record<string, unknown> = {}) {
  const created = await fx.request("POST", "/api/v1/projects/intake/intake/sources", {
    token: fx.tokens.admin,
    body: {
      kind: "github",
      base_url: github.url,
      query: { container: REPO, labels: ["overseer"], assignee: BOT.login },
      token_env: TOKEN_ENV,
      webhook_secret_env: SECRET_ENV,
      ...body,
    },
  });
  expect(created.status, created.text).toBe(201);
  return created.body.source as { id: string; webhook_path: string };
}

describe("intake sources", () => {
  it("the contract's kinds and status moments are intake's", () => {
    expect([...INTAKE_KINDS]).toEqual([...TRACKER_KINDS]);
    expect([...INTAKE_STATUS_MOMENTS]).toEqual([...STATUS_MOMENTS]);
  });

  it("refuses a bad config with 400 naming the field", async () => {
    const bad = await fx.request("POST", "/api/v1/projects/intake/intake/sources", {
      token: fx.tokens.admin,
      body: {
        kind: "github",
        query: { container: REPO },
        config: { as: "epic" },
        token_env: "ghp_not_a_name",
      },
    });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain("config.as");
    expect(bad.text).toContain("token_env");
    const unknownKind = await fx.request("POST", "/api/v1/projects/intake/intake/sources", {
      token: fx.tokens.admin,
      body: { kind: "asana", query: { container: "x" }, token_env: TOKEN_ENV },
    });
    expect(unknownKind.status).toBe(400);
    expect(unknownKind.text).toContain("kind");
  });

  it("adds, lists (items taken, last poll, last error) and removes a source; read tokens cannot add", async () => {
    const refused = await fx.request("POST", "/api/v1/projects/intake/intake/sources", {
      token: fx.tokens.read,
      body: { kind: "github", query: { container: REPO }, token_env: TOKEN_ENV },
    });
    expect(refused.status).toBe(403);
    const source = await addSource({ config: { as: "mission", statusMap: { done: { state: "closed" } } } });
    expect(source.webhook_path).toBe(`/api/v1/intake/sources/${source.id}/webhook`);
    await recordIntakeItem(fx.scratch.db, {
      sourceId: source.id,
      issueId: "7",
      issueKey: "acme/app#7",
      projectId: "intake",
      taskId: "acme-app-7",
      commentCursor: null,
    });
    const listed = await fx.request("GET", "/api/v1/projects/intake/intake/sources", {
      token: fx.tokens.read,
    });
    expect(listed.status).toBe(200);
    const row = listed.body.sources.find((s: { id: string }) => s.id === source.id);
    expect(row).toMatchObject({
      kind: "github",
      items_taken: 1,
      polled_at: null,
      last_error: null,
      token_env: TOKEN_ENV,
      config: { as: "mission", statusMap: { done: { state: "closed" } } },
      created_by: "api:admin",
    });
    expect(listed.text).not.toContain(BOT.token);
    const removed = await fx.request("DELETE", `/api/v1/projects/intake/intake/sources/${source.id}`, {
      token: fx.tokens.admin,
    });
    expect(removed.status).toBe(200);
    const again = await fx.request("DELETE", `/api/v1/projects/intake/intake/sources/${source.id}`, {
      token: fx.tokens.admin,
    });
    expect(again.status).toBe(404);
    expect(again.text).toContain("overseer intake list");
  });

  it("dry-runs a source against the tracker without writing anything", async () => {
    const source = await addSource();
    const number = github.openIssue(REPO, {
      title: "Add a health route",
      body: "- [ ] returns ok",
      labels: ["overseer", "role:backend"],
      assignees: [BOT.login],
    });
    github.openIssue(REPO, { title: "Not assigned", labels: ["overseer"] });
    const tested = await fx.request("POST", `/api/v1/projects/intake/intake/sources/${source.id}/test`, {
      token: fx.tokens.operate,
    });
    expect(tested.status, tested.text).toBe(200);
    expect(tested.body.would_take).toEqual([
      expect.objectContaining({
        issue_id: String(number),
        task_id: `acme-app-${number}`,
        as: "task",
        title: "Add a health route",
        role: "backend",
        acceptance: ["returns ok"],
      }),
    ]);
    expect(await intakeTaskIds(fx.scratch.db, source.id)).toEqual(new Map());
    expect(github.requests.filter((r) => r.method !== "GET")).toEqual([]);
  });

  it("a dry run whose token variable is unset or empty answers 503 naming it", async () => {
    for (const tokenEnv of ["OVERSEER_TEST_INTAKE_ROUTES_UNSET", "OVERSEER_TEST_INTAKE_ROUTES_EMPTY"]) {
      process.env.OVERSEER_TEST_INTAKE_ROUTES_EMPTY = "";
      const source = await addSource({ token_env: tokenEnv });
      const tested = await fx.request("POST", `/api/v1/projects/intake/intake/sources/${source.id}/test`, {
        token: fx.tokens.operate,
      });
      expect(tested.status, tested.text).toBe(503);
      expect(tested.body.error.code).toBe("token_not_set");
      expect(tested.text).toContain(`${tokenEnv} is not set on this gateway`);
    }
    delete process.env.OVERSEER_TEST_INTAKE_ROUTES_EMPTY;
  });
});

describe("POST /api/v1/intake/sources/{source_id}/webhook", () => {
  const replay = (path: string, delivery: WebhookDelivery, headers = delivery.headers) =>
    fx.request("POST", path, { token: null, rawBody: delivery.body, headers });

  it("stores a signed delivery once, queues one re-read, and refuses a bad signature with 401", async () => {
    const source = await addSource();
    const before = github.deliveries.length;
    const number = github.openIssue(REPO, { title: "Hooked", labels: ["overseer"], assignees: [BOT.login] });
    await github.flushWebhooks();
    const delivery = github.deliveries.slice(before).find((d) => d.event === "issues");
    if (!delivery) throw new Error("the double sent no issues delivery");
    const first = await replay(source.webhook_path, delivery);
    expect(first.status, first.text).toBe(200);
    expect(first.body).toMatchObject({ stored: true, issue_id: String(number) });
    const again = await replay(source.webhook_path, delivery);
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ stored: false });
    const jobs = await fx.deps.queues.intake.queue.getJobs(["waiting", "delayed", "active"]);
    expect(jobs.filter((j) => j.data.sourceId === source.id).map((j) => j.data)).toEqual([
      { v: 1, kind: "read", sourceId: source.id, issueId: String(number) },
    ]);
    const tampered = await replay(source.webhook_path, { ...delivery, body: `${delivery.body} ` });
    expect(tampered.status).toBe(401);
    expect(tampered.body.error.code).toBe("bad_signature");
    expect(tampered.text).toContain(SECRET_ENV);
  });

  it("answers 503 saying what to set when the source has no webhook secret, 404 for an unknown source", async () => {
    const source = await addSource({ webhook_secret_env: undefined });
    github.openIssue(REPO, { title: "Unheard", labels: ["overseer"] });
    await github.flushWebhooks();
    const delivery = github.deliveries.at(-1) as WebhookDelivery;
    const unset = await replay(source.webhook_path, delivery);
    expect(unset.status).toBe(503);
    expect(unset.text).toContain("webhook_secret_env");
    const unknown = await replay("/api/v1/intake/sources/src_nope/webhook", delivery);
    expect(unknown.status).toBe(404);
  });
});
