/**
 * The forge doubles' webhooks, as the doubles sign them, go through the gateway's intake: a
 * check that the doubles and the intake agree on each forge's headers and proof (GitHub's
 * X-Hub-Signature-256, GitLab's X-Gitlab-Token, Gitea's and Forgejo's HMAC), so the
 * pull-request loop's end-to-end tests on those doubles can feed their deliveries to the real
 * route. The GitHub double's payloads are recorded examples (@octokit/webhooks-examples) with
 * its values laid over them, each validated against @octokit/webhooks-schemas.
 */
import { listUnappliedForgeDeliveries } from "@overseer/db";
import { GiteaDouble, GitHubDouble, GitLabDouble, type WebhookDelivery } from "@overseer/test-support";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedProject, useGatewayFixture } from "./support/gateway-fixture.ts";

const SECRET = "double-webhook-secret";
const fx = useGatewayFixture({ forgeWebhookSecret: SECRET });
// Deliveries go to a closed port (nothing listens there); the test replays what the double sent.
const NOWHERE = "http://127.0.0.1:9/hook";

let github: GitHubDouble;
let gitlab: GitLabDouble;
let gitea: GiteaDouble;

beforeAll(async () => {
  await seedProject(fx, "doubles");
  github = await GitHubDouble.start();
  gitlab = await GitLabDouble.start();
  gitea = await GiteaDouble.start();
}, 60_000);

afterAll(async () => {
  await github?.close();
  await gitlab?.close();
  await gitea?.close();
});

function replay(forge: "github" | "gitlab" | "gitea", delivery: WebhookDelivery, headers = delivery.headers) {
  return fx.request("POST", `/api/v1/forge/doubles/webhooks/${forge}`, {
    token: null,
    rawBody: delivery.body,
    headers,
  });
}

describe("forge doubles' webhooks through the gateway's intake", () => {
  it("stores GitHub's deliveries by X-GitHub-Delivery, each payload valid against its event's schema", async () => {
    github.addUser({ login: "overseer-bot", token: "ghp_bot" });
    github.addUser({ login: "alice", token: "ghp_alice" });
    await github.createRepository("acme/app");
    github.addWebhook(NOWHERE, SECRET);
    await github.git.git("acme/app", ["branch", "overseer/pr/T-3", "main"]);
    const head = await github.git.commitFiles("acme/app", "overseer/pr/T-3", { "c.txt": "c\n" }, "T-3");
    const api = (method: string, path: string, body: unknown) =>
      fetch(`${github.url}/api/v3/repos/acme/app${path}`, {
        method,
        headers: { authorization: "token ghp_bot", "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    expect(
      (await api("POST", "/pulls", { head: "overseer/pr/T-3", base: "main", title: "T-3" })).status,
    ).toBe(201);
    expect((await api("POST", "/issues/1/labels", { labels: ["overseer"] })).status).toBe(200);
    github.setCheckRun("acme/app", head, { name: "ci", conclusion: null });
    github.setCheckRun("acme/app", head, { name: "ci", conclusion: "failure", log: "FAIL\n" });
    github.setStatus("acme/app", head, { context: "lint", state: "success" });
    await github.review("acme/app", 1, {
      login: "alice",
      state: "CHANGES_REQUESTED",
      body: "One thing.",
      comments: [{ path: "c.txt", line: 1, body: "Say more." }],
    });
    const thread = github.threads("acme/app", 1)[0];
    const first = thread?.comments[0]?.id;
    expect((await api("POST", `/pulls/1/comments/${first}/replies`, { body: "Done." })).status).toBe(201);
    github.comment("acme/app", 1, "alice", "@overseer-bot thanks");
    await github.review("acme/app", 1, { login: "alice", state: "APPROVED" });
    await github.mergeByHuman("acme/app", 1, "alice");
    await github.flushWebhooks();
    expect(github.takeViolations()).toEqual([]);
    const seen = github.deliveries.map((d) => {
      const payload = JSON.parse(d.body) as { action?: string; pull_request?: { merged?: boolean } };
      return `${d.event}.${payload.action ?? ""}`;
    });
    expect(seen).toEqual([
      "pull_request.opened",
      "pull_request.labeled",
      "check_run.created",
      "check_run.completed",
      "status.",
      "pull_request_review_comment.created",
      "pull_request_review.submitted",
      "pull_request_review_comment.created",
      "issue_comment.created",
      "pull_request_review.submitted",
      "pull_request.closed",
    ]);
    const closed = JSON.parse(github.deliveries.at(-1)?.body ?? "{}");
    expect(closed.pull_request).toMatchObject({ merged: true, number: 1, head: { ref: "overseer/pr/T-3" } });
    const completed = JSON.parse(github.deliveries[3]?.body ?? "{}");
    expect(completed.check_run).toMatchObject({
      head_sha: head,
      conclusion: "failure",
      pull_requests: [{ number: 1, head: { ref: "overseer/pr/T-3" } }],
    });
    for (const delivery of github.deliveries) {
      const answer = await replay("github", delivery);
      expect(answer.status).toBe(202);
      expect(answer.body).toMatchObject({ forge: "github", stored: true });
    }
    // A redelivery (same X-GitHub-Delivery) is stored once.
    const again = await replay("github", github.deliveries[0] as WebhookDelivery);
    expect(again.body).toMatchObject({ stored: false });
    const tampered = { ...(github.deliveries[0] as WebhookDelivery), body: `${github.deliveries[0]?.body} ` };
    expect((await replay("github", tampered)).status).toBe(401);
    const rows = await listUnappliedForgeDeliveries(fx.scratch.db, "doubles", 100);
    expect(rows.filter((r) => r.forge === "github")).toHaveLength(seen.length);
  });

  it("stores GitLab's Merge Request and Pipeline Hooks by their event UUID", async () => {
    gitlab.addUser({ username: "alice", token: "glpat-alice", accessLevel: 40 });
    await gitlab.createProject("team/app");
    gitlab.addWebhook(NOWHERE, SECRET);
    await gitlab.git.git("team/app", ["branch", "overseer/pr/T-1", "main"]);
    const head = await gitlab.git.commitFiles("team/app", "overseer/pr/T-1", { "a.txt": "a\n" }, "T-1");
    const created = await fetch(`${gitlab.url}/api/v4/projects/team%2Fapp/merge_requests`, {
      method: "POST",
      headers: { "private-token": "glpat-alice", "content-type": "application/json" },
      body: JSON.stringify({ source_branch: "overseer/pr/T-1", target_branch: "main", title: "T-1" }),
    });
    expect(created.status).toBe(201);
    gitlab.setPipeline("team/app", head, [{ name: "test", status: "success" }], "overseer/pr/T-1");
    await gitlab.mergeByHuman("team/app", 1, "alice");
    await gitlab.flushWebhooks();
    expect(gitlab.deliveries.map((d) => d.event)).toEqual([
      "Merge Request Hook",
      "Pipeline Hook",
      "Merge Request Hook",
    ]);
    for (const delivery of gitlab.deliveries) {
      const answer = await replay("gitlab", delivery);
      expect(answer.status).toBe(202);
      expect(answer.body).toMatchObject({ forge: "gitlab", stored: true });
    }
    const wrong = await replay("gitlab", gitlab.deliveries[0] as WebhookDelivery, {
      ...gitlab.deliveries[0]?.headers,
      "x-gitlab-token": "not-the-secret",
      "x-gitlab-event-uuid": "another-id",
    });
    expect(wrong.status).toBe(401);
    const rows = await listUnappliedForgeDeliveries(fx.scratch.db, "doubles", 100);
    expect(rows.filter((r) => r.forge === "gitlab").map((r) => [r.event, r.action])).toEqual([
      ["Merge Request Hook", "open"],
      ["Pipeline Hook", null],
      ["Merge Request Hook", "merge"],
    ]);
  });

  it("stores Gitea's deliveries by X-Gitea-Delivery under X-Gitea-Event, checking X-Gitea-Signature", async () => {
    gitea.addUser({ login: "alice", token: "gitea-alice" });
    gitea.addUser({ login: "bob", token: "gitea-bob" });
    await gitea.createRepository("team/app");
    gitea.addWebhook(NOWHERE, SECRET);
    await gitea.git.git("team/app", ["branch", "overseer/pr/T-2", "main"]);
    const head = await gitea.git.commitFiles("team/app", "overseer/pr/T-2", { "b.txt": "b\n" }, "T-2");
    const created = await fetch(`${gitea.url}/api/v1/repos/team/app/pulls`, {
      method: "POST",
      headers: { authorization: "token gitea-alice", "content-type": "application/json" },
      body: JSON.stringify({ head: "overseer/pr/T-2", base: "main", title: "T-2" }),
    });
    expect(created.status).toBe(201);
    gitea.actionsJob("team/app", head, { workflow: "CI", job: "test", state: "failure", log: "FAIL\n" });
    await gitea.review("team/app", 1, {
      login: "bob",
      state: "REQUEST_CHANGES",
      body: "Please rename.",
      comments: [{ path: "b.txt", line: 1, body: "Name?" }],
    });
    await gitea.review("team/app", 1, { login: "bob", state: "APPROVED" });
    gitea.comment("team/app", 1, "bob", "@overseer please also add a test");
    await gitea.flushWebhooks();
    await gitea.closeByHuman("team/app", 1);
    await gitea.flushWebhooks();
    expect(gitea.takeViolations()).toEqual([]);
    const events = [];
    for (const delivery of gitea.deliveries) {
      const answer = await replay("gitea", delivery);
      expect(answer.status).toBe(202);
      expect(answer.body).toMatchObject({ forge: "gitea", stored: true });
      events.push((answer.body as { event: string }).event);
    }
    expect(events).toEqual([
      "pull_request",
      "status",
      "pull_request_rejected",
      "pull_request_approved",
      "issue_comment",
      "pull_request",
    ]);
    const tampered = { ...(gitea.deliveries[0] as WebhookDelivery), body: `${gitea.deliveries[0]?.body} ` };
    expect((await replay("gitea", tampered)).status).toBe(401);
    const rows = await listUnappliedForgeDeliveries(fx.scratch.db, "doubles", 100);
    expect(rows.filter((r) => r.forge === "gitea").map((r) => [r.event, r.action])).toEqual([
      ["pull_request", "opened"],
      ["status", null],
      ["pull_request_rejected", "reviewed"],
      ["pull_request_approved", "reviewed"],
      ["issue_comment", "created"],
      ["pull_request", "closed"],
    ]);
    expect(gitlab.takeViolations()).toEqual([]);
  });
});
