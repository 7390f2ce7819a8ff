import { createHmac } from "node:crypto";
import { LinearDouble } from "@overseer/test-support";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { LinearAdapter, linearWebhookVerifier } from "../src/linear-adapter.ts";
import { createTrackerAdapter, trackerWebhookVerifier } from "../src/tracker-registry.ts";
import { TrackerCredentialsError } from "../src/tracker-retry.ts";

const FAST = { retries: 3, baseDelayMs: 5, maxDelayMs: 50 };

describe("the Linear adapter against the Linear double (schema of @linear/sdk)", () => {
  let linear: LinearDouble;
  let adapter: LinearAdapter;

  beforeAll(async () => {
    linear = await LinearDouble.start();
    linear.workspace.addTeam("ENG", "Engineering");
    linear.workspace.addTeam("OPS", "Operations");
    adapter = new LinearAdapter({ kind: "linear", token: linear.bot.apiKey, baseUrl: linear.url }, FAST);
  }, 60_000);
  afterEach(() => {
    expect(linear.takeViolations()).toEqual([]);
    linear.clearFaults();
  });
  afterAll(async () => {
    await linear.close();
  });

  it("lists the team's open issues matching labels, assignee and states, with blocked-by from relations", async () => {
    const blocker = linear.fileIssue("ENG", {
      title: "Schema first",
      labels: ["overseer"],
      assignee: linear.bot,
    });
    const wanted = linear.fileIssue("ENG", {
      title: "Add the export",
      description: "Export as CSV.\n\n- [ ] a header row",
      labels: ["overseer", "backend"],
      assignee: linear.bot,
    });
    linear.block(wanted, blocker);
    linear.fileIssue("ENG", { title: "Not labelled", assignee: linear.bot });
    linear.fileIssue("ENG", { title: "Someone else's", labels: ["overseer"], assignee: linear.human });
    linear.fileIssue("ENG", { title: "Finished", labels: ["overseer"], assignee: linear.bot, state: "Done" });
    linear.fileIssue("OPS", { title: "Other team", labels: ["overseer"], assignee: linear.bot });

    const issues = await adapter.listIssues({ container: "ENG", labels: ["overseer"], assignee: "me" });
    expect(issues.map((i) => i.title).sort()).toEqual(["Add the export", "Schema first"]);
    const export_ = issues.find((i) => i.title === "Add the export");
    expect(export_).toMatchObject({
      id: wanted.id,
      key: `ENG-${wanted.number}`,
      body: "Export as CSV.\n\n- [ ] a header row",
      state: "Todo",
      terminal: false,
      assignees: [linear.bot.displayName, linear.bot.name, linear.bot.email, "me"],
      blockedBy: [blocker.id],
    });
    expect([...(export_?.labels ?? [])].sort()).toEqual(["backend", "overseer"]);

    const byName = await adapter.listIssues({ container: "ENG", assignee: linear.bot.displayName });
    expect(byName.length).toBeGreaterThanOrEqual(3);
    const done = await adapter.listIssues({ container: "ENG", states: ["Done"] });
    expect(done.map((i) => i.title)).toEqual(["Finished"]);
    expect(done[0]?.terminal).toBe(true);

    const since = new Date().toISOString();
    linear.move(blocker, "In Progress");
    const polled = await adapter.listIssues(
      { container: "ENG", labels: ["overseer"], assignee: "me" },
      since,
    );
    expect(polled.map((i) => i.id)).toEqual([blocker.id]);
  });

  it("reads an issue by id or key and sees it go terminal when completed or canceled", async () => {
    const issue = linear.fileIssue("ENG", { title: "Terminal", assignee: linear.bot });
    expect((await adapter.getIssue(issue.id))?.terminal).toBe(false);
    expect((await adapter.getIssue(`ENG-${issue.number}`))?.id).toBe(issue.id);
    linear.move(issue, "Canceled");
    expect(await adapter.getIssue(issue.id)).toMatchObject({ state: "Canceled", terminal: true });
    expect(await adapter.getIssue("00000000-0000-4000-8000-000000000000")).toBeNull();
  });

  it("reads comments oldest first, once each, through the cursor, and knows its own", async () => {
    const issue = linear.fileIssue("ENG", { title: "Talk", assignee: linear.bot });
    linear.comment(issue, "first");
    linear.comment(issue, "second");
    const first = await adapter.listComments(issue.id, null);
    expect(first.comments.map((c) => [c.body, c.byBot, c.author])).toEqual([
      ["first", false, linear.human.displayName],
      ["second", false, linear.human.displayName],
    ]);
    const idle = await adapter.listComments(issue.id, first.cursor);
    expect(idle).toEqual({ comments: [], cursor: first.cursor });
    await adapter.comment(issue.id, "Started.", "overseer:started");
    linear.comment(issue, "third");
    const next = await adapter.listComments(issue.id, first.cursor);
    expect(next.comments.map((c) => [c.body, c.byBot])).toEqual([
      ["Started.", true],
      ["third", false],
    ]);
  });

  it("comments once per marker, even when the first answer was lost", async () => {
    const issue = linear.fileIssue("ENG", { title: "Once", assignee: linear.bot });
    const first = await adapter.comment(issue.id, "Work started.", "overseer:start:1");
    expect(first.created).toBe(true);
    expect(await adapter.comment(issue.id, "Work started.", "overseer:start:1")).toEqual({
      id: first.id,
      created: false,
    });
    linear.fail({ status: 502, afterEffect: true, matching: /POST \/graphql/ });
    // The create takes effect, its answer is lost; the retry finds the comment under its id.
    const lost = await adapter.comment(issue.id, "PR opened.", "overseer:pr:1").catch((e: unknown) => e);
    expect(lost).not.toBeInstanceOf(Error);
    expect(linear.commentsOn(issue).map((c) => c.body)).toEqual(["Work started.", "PR opened."]);
  });

  it("moves the issue through the team's workflow states and changes labels", async () => {
    const issue = linear.fileIssue("ENG", { title: "Move me", labels: ["overseer"], assignee: linear.bot });
    await adapter.setState(issue.id, "In Progress");
    expect(linear.stateOf(issue)).toBe("In Progress");
    await adapter.setState(issue.id, "In Progress");
    await expect(adapter.setState(issue.id, "Shipped")).rejects.toThrow(
      /no workflow state "Shipped".*In Review/,
    );
    await adapter.setLabels(issue.id, ["overseer:running", "overseer"], ["overseer"]);
    expect(linear.labelsOf(issue).sort()).toEqual(["overseer:running"]);
    await adapter.setLabels(issue.id, ["overseer:running"], ["absent"]);
    expect(linear.labelsOf(issue)).toEqual(["overseer:running"]);
  });

  it("knows who it is, retries rate limits and server errors, and names the key it cannot use", async () => {
    expect(await adapter.whoAmI()).toBe(linear.bot.displayName);
    const issue = linear.fileIssue("ENG", { title: "Flaky", assignee: linear.bot });
    linear.fail({ status: 429, retryAfter: 0, times: 2 });
    linear.fail({ status: 503 });
    expect((await adapter.getIssue(issue.id))?.id).toBe(issue.id);
    const refused = new LinearAdapter({ kind: "linear", token: "lin_api_wrong", baseUrl: linear.url }, FAST);
    const error = await refused.whoAmI().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TrackerCredentialsError);
    expect(String(error)).toMatch(/Linear refused the API key.*personal API key/);
    const viaRegistry = createTrackerAdapter({
      kind: "linear",
      token: linear.bot.apiKey,
      baseUrl: linear.url,
    });
    expect(await viaRegistry.whoAmI()).toBe(linear.bot.displayName);
  });
});

describe("Linear webhooks", () => {
  let linear: LinearDouble;
  const received: { headers: Record<string, string>; body: string }[] = [];
  let server: import("node:http").Server;

  beforeAll(async () => {
    linear = await LinearDouble.start();
    linear.workspace.addTeam("ENG");
    const { createServer } = await import("node:http");
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        received.push({
          headers: req.headers as Record<string, string>,
          body: Buffer.concat(chunks).toString(),
        });
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as import("node:net").AddressInfo).port;
    linear.addWebhook(`http://127.0.0.1:${port}/hooks/linear`, "linear-secret");
  });
  afterAll(async () => {
    await linear.close();
    await new Promise((resolve) => server.close(resolve));
  });

  it("verifies Linear's signature and timestamp and reduces deliveries to what to re-read", async () => {
    const issue = linear.fileIssue("ENG", { title: "Hooked", assignee: linear.bot });
    linear.comment(issue, "a human word");
    await linear.settled();
    const verifier = trackerWebhookVerifier("linear");
    expect(verifier).toBe(linearWebhookVerifier);
    expect(received).toHaveLength(2);
    const events = received.map(({ headers, body }) => {
      expect(verifier.verify(headers, body, "linear-secret")).toBe(true);
      expect(verifier.verify(headers, body, "another-secret")).toBe(false);
      expect(verifier.verify(headers, `${body} `, "linear-secret")).toBe(false);
      return verifier.parse(headers, body);
    });
    expect(events).toEqual([
      { deliveryId: received[0]?.headers["linear-delivery"], issueId: issue.id, what: "issue" },
      { deliveryId: received[1]?.headers["linear-delivery"], issueId: issue.id, what: "comment" },
    ]);
    expect(new Set(events.map((e) => e?.deliveryId)).size).toBe(2);
  });

  it("refuses a replay whose signed webhookTimestamp is more than a minute old", () => {
    const body = JSON.stringify({
      type: "Issue",
      action: "update",
      data: { id: "x" },
      webhookTimestamp: Date.now() - 120_000,
    });
    const signature = createHmac("sha256", "linear-secret").update(body).digest("hex");
    const headers = { "linear-signature": signature, "linear-delivery": "d-old" };
    expect(linearWebhookVerifier.verify(headers, body, "linear-secret")).toBe(false);
    const fresh = body.replace(/"webhookTimestamp":\d+/, `"webhookTimestamp":${Date.now()}`);
    const freshSignature = createHmac("sha256", "linear-secret").update(fresh).digest("hex");
    expect(
      linearWebhookVerifier.verify(
        { ...headers, "linear-signature": freshSignature },
        fresh,
        "linear-secret",
      ),
    ).toBe(true);
    expect(
      linearWebhookVerifier.parse(headers, JSON.stringify({ type: "Project", data: { id: "p" } })),
    ).toBeNull();
  });
});
