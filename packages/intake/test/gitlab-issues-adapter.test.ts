import {
  GITLAB_ISSUE_HOOK_EXAMPLE,
  GITLAB_ISSUE_NOTE_HOOK_EXAMPLE,
  GitLabDouble,
} from "@overseer/test-support";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createTrackerAdapter, type TrackerAdapter, trackerWebhookVerifier } from "../src/index.ts";

const PROJECT = "acme/app";
const BOT = { username: "overseer-bot", token: "glpat-overseer" };
const HUMAN = { username: "alice", token: "glpat-alice" };
const SECRET = "gitlab-intake-secret";

let forge: GitLabDouble;

const adapter = (token = BOT.token): TrackerAdapter =>
  createTrackerAdapter({ kind: "gitlab", container: PROJECT, baseUrl: forge.url, token });

beforeAll(async () => {
  forge = await GitLabDouble.start();
  forge.addUser(BOT);
  forge.addUser(HUMAN);
  forge.addUser({ username: "reader", token: "glpat-reader", scopes: ["read_api"] });
  await forge.createProject(PROJECT);
  // Nobody listens there: the deliveries are recorded with their headers and bodies.
  forge.addWebhook("http://127.0.0.1:9/hook", SECRET);
}, 60_000);

afterAll(async () => {
  await forge?.close();
});

afterEach(() => {
  expect(forge.takeViolations()).toEqual([]);
});

describe("GitLab issues adapter against the GitLab double (GitLab's documented examples)", () => {
  it("lists the issues a query subscribes to, with their is_blocked_by links", async () => {
    const blocker = forge.openIssue(PROJECT, { title: "Schema first", labels: ["overseer"] });
    const wanted = forge.openIssue(PROJECT, {
      title: "Add a health route",
      description: "- [ ] returns ok",
      labels: ["overseer", "scope:src/**"],
      assignees: [BOT.username],
      blockedBy: [blocker],
    });
    forge.openIssue(PROJECT, { title: "Not ours", labels: ["other"] });
    const issues = await adapter().listIssues({
      container: PROJECT,
      labels: ["overseer"],
      assignee: BOT.username,
    });
    expect(issues.map((i) => i.id)).toEqual([String(wanted)]);
    expect(issues[0]).toMatchObject({
      key: `${PROJECT}#${wanted}`,
      url: `${forge.url}/${PROJECT}/-/issues/${wanted}`,
      title: "Add a health route",
      body: "- [ ] returns ok",
      state: "open",
      terminal: false,
      labels: ["overseer", "scope:src/**"],
      assignees: [BOT.username],
      blockedBy: [String(blocker)],
    });
    // The blocker's own link is `blocks`, which blocks nothing of it.
    const all = await adapter().listIssues({ container: PROJECT, labels: ["overseer"] });
    expect(all.map((i) => [i.id, i.blockedBy])).toEqual([
      [String(blocker), []],
      [String(wanted), [String(blocker)]],
    ]);
    const since = new Date(Date.now() + 60_000).toISOString();
    expect(await adapter().listIssues({ container: PROJECT, labels: ["overseer"] }, since)).toEqual([]);
  });

  it("reads one issue by iid, null when there is none", async () => {
    const iid = forge.openIssue(PROJECT, { title: "One" });
    expect((await adapter().getIssue(String(iid)))?.title).toBe("One");
    expect(await adapter().getIssue("9999")).toBeNull();
  });

  it("comments once per marker, and reads comments after a cursor, its own marked as the bot's", async () => {
    const iid = String(forge.openIssue(PROJECT, { title: "Talk" }));
    const marker = "<!-- overseer:intake:t:started:1 -->";
    const first = await adapter().comment(iid, "Overseer started.", marker);
    const again = await adapter().comment(iid, "Overseer started.", marker);
    expect(first.created).toBe(true);
    expect(again).toEqual({ id: first.id, created: false });
    forge.commentOnIssue(PROJECT, Number(iid), HUMAN.username, "Use port 8080.");
    const read = await adapter().listComments(iid, null);
    expect(read.comments.map((c) => [c.author, c.byBot, c.body])).toEqual([
      [BOT.username, true, `Overseer started.\n\n${marker}`],
      [HUMAN.username, false, "Use port 8080."],
    ]);
    expect(await adapter().listComments(iid, read.cursor)).toEqual({ comments: [], cursor: read.cursor });
  });

  it("moves labels and state idempotently (GitLab's system notes are no comments), and knows who it is", async () => {
    const iid = String(forge.openIssue(PROJECT, { title: "Status", labels: ["overseer"] }));
    const gitlab = adapter();
    await gitlab.setLabels(iid, ["overseer:working"], ["overseer:blocked"]);
    await gitlab.setLabels(iid, ["overseer:working"], []);
    expect((await gitlab.getIssue(iid))?.labels).toEqual(["overseer", "overseer:working"]);
    await gitlab.setLabels(iid, [], ["overseer:working"]);
    await gitlab.setState(iid, "closed");
    await gitlab.setState(iid, "closed");
    expect(await gitlab.getIssue(iid)).toMatchObject({
      state: "closed",
      terminal: true,
      labels: ["overseer"],
    });
    expect(
      forge
        .issue(PROJECT, Number(iid))
        .notes.filter((n) => n.system)
        .map((n) => n.body),
    ).toEqual(["closed"]);
    expect((await gitlab.listComments(iid, null)).comments).toEqual([]);
    await gitlab.setState(iid, "opened");
    expect((await gitlab.getIssue(iid))?.state).toBe("open");
    await expect(gitlab.setState(iid, "Done")).rejects.toThrow(/"open" or "closed"/);
    expect(await gitlab.whoAmI()).toBe(BOT.username);
  });

  it("is refused a write its token has no right to; a bad token names what to fix", async () => {
    const iid = String(forge.openIssue(PROJECT, { title: "Read only" }));
    await expect(adapter("glpat-reader").comment(iid, "x", "<!-- overseer:m -->")).rejects.toThrow(/403/);
    await expect(adapter("glpat-nobody").whoAmI()).rejects.toThrow(/api scope/);
  });

  it("verifies and reads the double's issue webhooks: X-Gitlab-Token, the event UUID as delivery id", async () => {
    const iid = forge.openIssue(PROJECT, { title: "Hooked" });
    forge.commentOnIssue(PROJECT, iid, HUMAN.username, "hello");
    forge.setIssueState(PROJECT, iid, "closed");
    await forge.flushWebhooks();
    const verifier = trackerWebhookVerifier("gitlab");
    const mine = forge.deliveries.filter((d) => verifier.parse(d.headers, d.body)?.issueId === String(iid));
    expect(mine.every((d) => verifier.verify(d.headers, d.body, SECRET))).toBe(true);
    expect(mine.every((d) => !verifier.verify(d.headers, d.body, "wrong"))).toBe(true);
    const events = mine.map((d) => verifier.parse(d.headers, d.body));
    expect(events.map((e) => e?.what)).toEqual(["issue", "comment", "issue"]);
    expect(events.map((e) => e?.deliveryId)).toEqual(mine.map((d) => d.headers["x-gitlab-event-uuid"]));
  });

  it("reads GitLab's documented issue and issue-comment webhook examples; a note on a merge request is nothing", () => {
    const verifier = trackerWebhookVerifier("gitlab");
    const headers = (event: string) => ({
      "X-Gitlab-Event": event,
      "X-Gitlab-Token": SECRET,
      "X-Gitlab-Event-UUID": "13792a34-cac6-4fda-95a8-c58e00a3954e",
    });
    const issueBody = JSON.stringify(GITLAB_ISSUE_HOOK_EXAMPLE);
    expect(verifier.verify(headers("Issue Hook"), issueBody, SECRET)).toBe(true);
    expect(verifier.verify({ "X-Gitlab-Event": "Issue Hook" }, issueBody, SECRET)).toBe(false);
    expect(verifier.parse(headers("Issue Hook"), issueBody)).toEqual({
      deliveryId: "13792a34-cac6-4fda-95a8-c58e00a3954e",
      issueId: "23",
      what: "issue",
    });
    const noteBody = JSON.stringify(GITLAB_ISSUE_NOTE_HOOK_EXAMPLE);
    expect(verifier.parse(headers("Note Hook"), noteBody)).toMatchObject({ issueId: "17", what: "comment" });
    const onMergeRequest = JSON.stringify({
      ...GITLAB_ISSUE_NOTE_HOOK_EXAMPLE,
      object_attributes: {
        ...GITLAB_ISSUE_NOTE_HOOK_EXAMPLE.object_attributes,
        noteable_type: "MergeRequest",
      },
      issue: undefined,
    });
    expect(verifier.parse(headers("Note Hook"), onMergeRequest)).toBeNull();
    expect(verifier.parse(headers("Push Hook"), issueBody)).toBeNull();
    expect(verifier.parse({ "X-Gitlab-Event": "Issue Hook" }, issueBody)).toBeNull();
  });
});
