import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { JiraDouble } from "@overseer/test-support";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { JiraAdapter, jiraWebhookVerifier } from "../src/jira-adapter.ts";
import { adfToText, textToAdf } from "../src/jira-adf.ts";
import { createTrackerAdapter, trackerWebhookVerifier } from "../src/tracker-registry.ts";
import { TrackerCredentialsError } from "../src/tracker-retry.ts";

const FAST = { retries: 3, baseDelayMs: 5, maxDelayMs: 50 };

describe("the Jira adapter against the Jira double (jira.js v3 models)", () => {
  let jira: JiraDouble;
  let adapter: JiraAdapter;

  beforeAll(async () => {
    jira = await JiraDouble.start();
    adapter = new JiraAdapter(
      { kind: "jira", token: jira.bot.apiToken, user: jira.bot.email, baseUrl: jira.url },
      FAST,
    );
  });
  afterEach(() => {
    expect(jira.takeViolations()).toEqual([]);
    jira.clearFaults();
  });
  afterAll(async () => {
    await jira.close();
  });

  it("searches with JQL for labels, assignee and states, reads ADF and Blocks links", async () => {
    const blocker = jira.fileIssue("PROJ", { summary: "Schema", labels: ["overseer"], assignee: jira.bot });
    const description = {
      type: "doc",
      version: 1,
      content: [
        { type: "paragraph", content: [{ type: "text", text: "Export as CSV." }] },
        {
          type: "taskList",
          attrs: { localId: "t" },
          content: [
            {
              type: "taskItem",
              attrs: { localId: "a", state: "TODO" },
              content: [{ type: "text", text: "a header row" }],
            },
          ],
        },
      ],
    };
    const wanted = jira.fileIssue("PROJ", {
      summary: "Export",
      description,
      labels: ["overseer", "backend"],
      assignee: jira.bot,
    });
    jira.link(wanted, blocker);
    jira.fileIssue("PROJ", { summary: "Unlabelled", assignee: jira.bot });
    jira.fileIssue("PROJ", { summary: "Someone else's", labels: ["overseer"], assignee: jira.human });
    jira.fileIssue("PROJ", { summary: "Finished", labels: ["overseer"], assignee: jira.bot, status: "Done" });
    jira.fileIssue("OTHER", { summary: "Other project", labels: ["overseer"], assignee: jira.bot });

    const issues = await adapter.listIssues({ container: "PROJ", labels: ["overseer"], assignee: "me" });
    expect(issues.map((i) => i.title)).toEqual(["Schema", "Export"]);
    expect(issues[1]).toMatchObject({
      id: wanted.id,
      key: wanted.key,
      url: `${jira.url}/browse/${wanted.key}`,
      body: "Export as CSV.\n\n- [ ] a header row",
      state: "To Do",
      terminal: false,
      labels: ["overseer", "backend"],
      assignees: [jira.bot.accountId, "me"],
      blockedBy: [blocker.id],
    });
    const byAccount = await adapter.listIssues({ container: "PROJ", assignee: jira.human.accountId });
    expect(byAccount.map((i) => i.title)).toEqual(["Someone else's"]);
    const done = await adapter.listIssues({ container: "PROJ", states: ["Done"] });
    expect(done.map((i) => [i.title, i.terminal])).toEqual([["Finished", true]]);

    // A poll: JQL has minutes only, in the bot's time zone (Europe/Berlin here), so it reads a
    // minute early; what changed since is in it, nothing from the future is.
    const since = new Date().toISOString();
    jira.move(blocker, "In Progress");
    const polled = await adapter.listIssues(
      { container: "PROJ", labels: ["overseer"], assignee: "me" },
      since,
    );
    expect(polled.map((i) => i.id)).toContain(blocker.id);
    const later = new Date(Date.now() + 3 * 60_000).toISOString();
    expect(await adapter.listIssues({ container: "PROJ" }, later)).toEqual([]);
  });

  it("reads an issue, and sees it terminal in status category Done whatever the status's name", async () => {
    const issue = jira.fileIssue("PROJ", { summary: "Terminal", assignee: jira.bot });
    expect((await adapter.getIssue(issue.key))?.terminal).toBe(false);
    jira.move(issue, "Won't Do");
    expect(await adapter.getIssue(issue.id)).toMatchObject({ state: "Won't Do", terminal: true });
    expect(await adapter.getIssue("PROJ-9999")).toBeNull();
  });

  it("reads comments once each through the cursor, and comments once per marker", async () => {
    const issue = jira.fileIssue("PROJ", { summary: "Talk", assignee: jira.bot });
    jira.comment(issue, "first");
    const first = await adapter.listComments(issue.id, null);
    expect(first.comments.map((c) => [c.body, c.byBot, c.author])).toEqual([
      ["first", false, jira.human.displayName],
    ]);
    const posted = await adapter.comment(
      issue.id,
      "Work started.\n\nBranch overseer/task/x.",
      "overseer:start",
    );
    expect(posted.created).toBe(true);
    expect(await adapter.comment(issue.id, "Work started.", "overseer:start")).toEqual({
      id: posted.id,
      created: false,
    });
    jira.comment(issue, "second");
    const next = await adapter.listComments(issue.id, first.cursor);
    expect(next.comments.map((c) => [c.body, c.byBot])).toEqual([
      ["Work started.\n\nBranch overseer/task/x.", true],
      ["second", false],
    ]);
    expect(await adapter.listComments(issue.id, next.cursor)).toEqual({ comments: [], cursor: next.cursor });
    expect(jira.commentsOn(issue)).toHaveLength(3);
  });

  it("moves the issue by the transition whose target status has the name, and edits labels", async () => {
    const issue = jira.fileIssue("PROJ", { summary: "Move", labels: ["overseer"], assignee: jira.bot });
    await adapter.setState(issue.id, "In Progress");
    expect(issue.status).toBe("In Progress");
    await adapter.setState(issue.id, "in progress");
    await adapter.setState(issue.id, "Done");
    expect(issue.status).toBe("Done");
    await expect(adapter.setState(issue.id, "Shipped")).rejects.toThrow(
      /no transition from "Done" to "Shipped"/,
    );
    await adapter.setLabels(issue.id, ["overseer:done"], ["overseer"]);
    expect(issue.labels).toEqual(["overseer:done"]);
  });

  it("knows who it is, retries 429 and 5xx, and names the credential Jira refused", async () => {
    expect(await adapter.whoAmI()).toBe(jira.bot.accountId);
    const issue = jira.fileIssue("PROJ", { summary: "Flaky" });
    jira.fail({ status: 429, retryAfter: 0 });
    jira.fail({ status: 502, times: 2 });
    expect((await adapter.getIssue(issue.id))?.id).toBe(issue.id);
    const wrong = new JiraAdapter(
      { kind: "jira", token: "nope", user: jira.bot.email, baseUrl: jira.url },
      FAST,
    );
    const error = await wrong.whoAmI().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TrackerCredentialsError);
    expect(String(error)).toMatch(/Jira refused the credentials \(401\).*API token/);
    const bearer = createTrackerAdapter({ kind: "jira", token: jira.bot.apiToken, baseUrl: jira.url });
    expect(await bearer.whoAmI()).toBe(jira.bot.accountId);
    const paired = createTrackerAdapter({
      kind: "jira",
      token: `${jira.bot.email}:${jira.bot.apiToken}`,
      baseUrl: jira.url,
    });
    expect(await paired.whoAmI()).toBe(jira.bot.accountId);
  });
});

describe("ADF", () => {
  it("round-trips plain paragraphs and line breaks", () => {
    expect(adfToText(textToAdf("one\ntwo\n\nthree"))).toBe("one\ntwo\n\nthree");
  });
});

describe("Jira webhooks", () => {
  let jira: JiraDouble;
  let server: Server;
  const received: { headers: Record<string, string>; body: string }[] = [];

  beforeAll(async () => {
    jira = await JiraDouble.start();
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
    jira.addWebhook(`http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/jira`, "jira-secret");
  });
  afterAll(async () => {
    await jira.close();
    await new Promise((resolve) => server.close(resolve));
  });

  it("verifies X-Hub-Signature and reduces deliveries to what to re-read", async () => {
    const issue = jira.fileIssue("PROJ", { summary: "Hooked" });
    jira.comment(issue, "hello");
    await jira.settled();
    const verifier = trackerWebhookVerifier("jira");
    expect(verifier).toBe(jiraWebhookVerifier);
    const events = received.map(({ headers, body }) => {
      expect(verifier.verify(headers, body, "jira-secret")).toBe(true);
      expect(verifier.verify(headers, body, "other")).toBe(false);
      expect(verifier.verify({ ...headers, "x-hub-signature": "" }, body, "jira-secret")).toBe(false);
      return verifier.parse(headers, body);
    });
    expect(events).toEqual([
      {
        deliveryId: received[0]?.headers["x-atlassian-webhook-identifier"],
        issueId: issue.id,
        what: "issue",
      },
      {
        deliveryId: received[1]?.headers["x-atlassian-webhook-identifier"],
        issueId: issue.id,
        what: "comment",
      },
    ]);
    expect(
      verifier.parse(
        { "x-atlassian-webhook-identifier": "d" },
        JSON.stringify({ webhookEvent: "sprint_started" }),
      ),
    ).toBeNull();
  });
});
