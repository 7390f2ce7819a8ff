import { GitHubDouble } from "@overseer/test-support";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createTrackerAdapter, type TrackerAdapter, trackerWebhookVerifier } from "../src/index.ts";

const REPO = "acme/app";
const BOT = { login: "overseer-bot", token: "ghp_overseer" };
const HUMAN = { login: "alice", token: "ghp_alice" };
const SECRET = "whsec-intake";

let forge: GitHubDouble;

const adapter = (token = BOT.token): TrackerAdapter =>
  createTrackerAdapter({ kind: "github", container: REPO, baseUrl: forge.url, token });

beforeAll(async () => {
  forge = await GitHubDouble.start();
  forge.addUser(BOT);
  forge.addUser(HUMAN);
  forge.addUser({ login: "reader", token: "ghp_reader", role: "read" });
  await forge.createRepository(REPO);
  // Nobody listens there: the deliveries are recorded with their headers and bodies.
  forge.addWebhook("http://127.0.0.1:9/hook", SECRET);
}, 60_000);

afterAll(async () => {
  await forge?.close();
});

afterEach(() => {
  expect(forge.takeViolations()).toEqual([]);
});

describe("GitHub Issues adapter against the GitHub double (OpenAPI-validated)", () => {
  it("lists the issues a query subscribes to, never pull requests, with blockers", async () => {
    const blocker = forge.openIssue(REPO, { title: "Schema first", labels: ["overseer"] });
    const wanted = forge.openIssue(REPO, {
      title: "Add a health route",
      body: "- [ ] returns ok",
      labels: ["overseer", "scope:src/**"],
      assignees: [BOT.login],
      blockedBy: [blocker],
    });
    forge.openIssue(REPO, { title: "Not ours", labels: ["other"] });
    const issues = await adapter().listIssues({ container: REPO, labels: ["overseer"], assignee: BOT.login });
    expect(issues.map((i) => i.id)).toEqual([String(wanted)]);
    const [issue] = issues;
    expect(issue).toMatchObject({
      key: `${REPO}#${wanted}`,
      url: `${forge.url}/${REPO}/issues/${wanted}`,
      title: "Add a health route",
      body: "- [ ] returns ok",
      state: "open",
      terminal: false,
      labels: ["overseer", "scope:src/**"],
      assignees: [BOT.login],
      blockedBy: [String(blocker)],
    });
    const all = await adapter().listIssues({ container: REPO, labels: ["overseer"] });
    expect(all.map((i) => i.id).sort()).toEqual([String(blocker), String(wanted)].sort());
  });

  it("reads one issue by id, null when there is none", async () => {
    const number = forge.openIssue(REPO, { title: "One" });
    expect((await adapter().getIssue(String(number)))?.title).toBe("One");
    expect(await adapter().getIssue("9999")).toBeNull();
  });

  it("comments once per marker, and reads comments after a cursor, its own marked as the bot's", async () => {
    const number = String(forge.openIssue(REPO, { title: "Talk" }));
    const first = await adapter().comment(
      number,
      "Overseer started.",
      "<!-- overseer:intake:t:started:1 -->",
    );
    const again = await adapter().comment(
      number,
      "Overseer started.",
      "<!-- overseer:intake:t:started:1 -->",
    );
    expect(first.created).toBe(true);
    expect(again).toEqual({ id: first.id, created: false });
    forge.commentOnIssue(REPO, Number(number), HUMAN.login, "Use port 8080.");
    const read = await adapter().listComments(number, null);
    expect(read.comments.map((c) => [c.author, c.byBot])).toEqual([
      [BOT.login, true],
      [HUMAN.login, false],
    ]);
    const after = await adapter().listComments(number, read.cursor);
    expect(after).toEqual({ comments: [], cursor: read.cursor });
  });

  it("moves labels and state idempotently, and knows who it is", async () => {
    const number = String(forge.openIssue(REPO, { title: "Status", labels: ["overseer"] }));
    const github = adapter();
    await github.setLabels(number, ["overseer:working"], ["overseer:blocked"]);
    await github.setLabels(number, ["overseer:working"], []);
    expect((await github.getIssue(number))?.labels).toEqual(["overseer", "overseer:working"]);
    await github.setLabels(number, [], ["overseer:working"]);
    await github.setState(number, "closed");
    await github.setState(number, "closed");
    const closed = await github.getIssue(number);
    expect(closed).toMatchObject({ state: "closed", terminal: true, labels: ["overseer"] });
    await expect(github.setState(number, "Done")).rejects.toThrow(/"open" or "closed"/);
    expect(await github.whoAmI()).toBe(BOT.login);
  });

  it("is refused a write its token has no right to", async () => {
    const number = String(forge.openIssue(REPO, { title: "Read only" }));
    await expect(adapter("ghp_reader").comment(number, "x", "<!-- overseer:m -->")).rejects.toThrow();
  });

  it("verifies and reads the double's issue webhooks", async () => {
    const number = forge.openIssue(REPO, { title: "Hooked" });
    forge.commentOnIssue(REPO, number, HUMAN.login, "hello");
    await forge.flushWebhooks();
    const verifier = trackerWebhookVerifier("github");
    const events = forge.deliveries
      .filter((d) => verifier.verify(d.headers, d.body, SECRET))
      .map((d) => verifier.parse(d.headers, d.body))
      .filter((e) => e?.issueId === String(number));
    expect(events.map((e) => e?.what)).toEqual(["issue", "comment"]);
    expect(forge.deliveries.every((d) => !verifier.verify(d.headers, d.body, "wrong"))).toBe(true);
  });
});
