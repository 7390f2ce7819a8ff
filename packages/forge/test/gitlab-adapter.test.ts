import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { GitLabDouble } from "@overseer/test-support";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createForgeAdapter, type ForgeAdapter, ForgeCallCounter, ForgeError } from "../src/index.ts";
import { cloneScratch, type ScratchClone } from "./scratch-clone.ts";

// A group/subgroup/project path: gitbeaker sends it URL-encoded as the project id.
const PROJECT = "acme/platform/app";
const API = "/api/v4/projects/acme%2Fplatform%2Fapp";
const BOT = { username: "overseer-bot", token: "glpat-overseer", accessLevel: 40 };
const DEV = { username: "dev", token: "glpat-dev", accessLevel: 30 };

let forge: GitLabDouble;
let clone: ScratchClone;

function adapter(token = BOT.token, counter = new ForgeCallCounter()): ForgeAdapter {
  return createForgeAdapter({
    forge: "gitlab",
    url: forge.url,
    repository: PROJECT,
    auth: { kind: "token", token },
    counter,
    retry: { baseDelayMs: 20 },
  });
}

const draft = (head: string, body = "Adds the thing.") => ({
  head,
  base: "main",
  title: `Task ${head}`,
  body,
  marker: `task:${head}`,
  labels: ["overseer"],
});

beforeAll(async () => {
  forge = await GitLabDouble.start();
  forge.addUser(BOT);
  forge.addUser(DEV);
  forge.addUser({ username: "reporter", token: "glpat-reporter", accessLevel: 20, scopes: ["read_api"] });
  forge.addUser({ username: "outsider", token: "glpat-outsider", accessLevel: 0 });
  await forge.createProject(
    PROJECT,
    { "README.md": "# app\n", "src/a.ts": "export const a = 1;\n" },
    { pipelineMustSucceed: true },
  );
  await forge.protectBranch(PROJECT, ["main"]);
  clone = await cloneScratch(forge.cloneUrl(PROJECT));
}, 60_000);

afterAll(async () => {
  await clone?.remove();
  await forge?.close();
});

afterEach(() => {
  forge.clearFaults();
  expect(forge.takeViolations()).toEqual([]);
});

describe("GitLab adapter against the GitLab double (documented shapes, real git)", () => {
  it("refuses a push to the protected main branch with GitLab's words", async () => {
    await clone.commitAndPush("overseer/task/L-0", { "src/a.ts": "export const a = 0;\n" }, "L-0");
    const refused = await clone.push("main");
    expect(refused.ok).toBe(false);
    expect(refused.stderr).toContain("You are not allowed to push code to protected branches");
  });

  it("opens one merge request per head: a second ensure updates, a third changes nothing", async () => {
    await clone.commitAndPush("overseer/task/L-1", { "src/a.ts": "export const a = 2;\n" }, "L-1");
    const counter = new ForgeCallCounter();
    const gitlab = adapter(BOT.token, counter);
    const first = await gitlab.ensurePullRequest(draft("overseer/task/L-1"));
    expect(first.outcome).toBe("created");
    expect(first.pullRequest).toMatchObject({
      number: 1,
      status: "open",
      base: "main",
      head: "overseer/task/L-1",
    });
    expect(first.pullRequest.url).toBe(`${forge.url}/${PROJECT}/-/merge_requests/1`);
    const again = await gitlab.ensurePullRequest(draft("overseer/task/L-1", "Adds the thing, better."));
    expect(again.outcome).toBe("updated");
    expect(again.pullRequest.number).toBe(1);
    const same = await gitlab.ensurePullRequest(draft("overseer/task/L-1", "Adds the thing, better."));
    expect(same.outcome).toBe("unchanged");
    const mrs = forge.mergeRequests(PROJECT).filter((m) => m.source === "overseer/task/L-1");
    expect(mrs).toHaveLength(1);
    expect(mrs[0]?.labels).toEqual(["overseer"]);
    expect(mrs[0]?.description).toContain("<!-- overseer:task:overseer/task/L-1 -->");
    // create: list + create; update: list + edit; unchanged: list only.
    expect(counter.snapshot()).toEqual({ ensurePullRequest: 5 });
  });

  it("keeps text a person added to the description when updating Overseer's part", async () => {
    const gitlab = adapter();
    const { pullRequest } = await gitlab.ensurePullRequest(draft("overseer/task/L-1", "v3"));
    const mr = forge.mergeRequests(PROJECT).find((m) => m.iid === pullRequest.number);
    if (mr) mr.description = `Reviewer note: keep.\n\n${mr.description}`;
    const updated = await gitlab.ensurePullRequest(draft("overseer/task/L-1", "v4"));
    expect(updated.pullRequest.body).toContain("Reviewer note: keep.");
    expect(updated.pullRequest.body).toContain("v4");
    expect(updated.pullRequest.body).not.toContain("v3");
  });

  it("a create whose answer is lost (502 after it took effect) still leaves one merge request", async () => {
    await clone.commitAndPush("overseer/task/L-2", { "src/b.ts": "export const b = 1;\n" }, "L-2");
    forge.fail({ status: 502, matching: new RegExp(`^POST ${API}/merge_requests$`), afterEffect: true });
    const before = forge.requests.length;
    const result = await adapter().ensurePullRequest(draft("overseer/task/L-2"));
    // The first create took effect with the labels and body asked for: nothing left to update.
    expect(result.outcome).toBe("unchanged");
    expect(forge.mergeRequests(PROJECT).filter((m) => m.source === "overseer/task/L-2")).toHaveLength(1);
    const creates = forge.requests
      .slice(before)
      .filter((r) => r.method === "POST" && r.path === `${API}/merge_requests`);
    // The retrying fetch repeats the create; GitLab refuses the repeat (409) and the adapter adopts the first.
    expect(creates.map((r) => r.status)).toEqual([502, 409]);
  });

  it("refuses to take over a merge request someone else opened from the same branch", async () => {
    const sha = await clone.commitAndPush("feature/human", { "src/h.ts": "export const h = 1;\n" }, "human");
    const human = adapter(DEV.token);
    await human.ensurePullRequest({ ...draft("feature/human"), marker: "someone-else" });
    const mr = forge.mergeRequests(PROJECT).find((m) => m.source === "feature/human");
    if (mr) mr.description = "Written by a person.";
    const error = await adapter()
      .ensurePullRequest(draft("feature/human"))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ForgeError);
    expect((error as ForgeError).code).toBe("conflict");
    expect((error as ForgeError).message).toContain("was not opened by Overseer");
    expect(sha).toMatch(/^[0-9a-f]{40}$/);
  });

  it("waits out a 429 with Retry-After and an exhausted RateLimit-Remaining, and retries 5xx", async () => {
    const counter = new ForgeCallCounter();
    forge.fail({ status: 429, retryAfter: 1, matching: new RegExp(`^GET ${API}/merge_requests$`) });
    forge.fail({
      status: 403,
      rateLimitResetSeconds: 1,
      matching: new RegExp(`^GET ${API}/merge_requests/\\d+$`),
    });
    forge.fail({ status: 503, times: 2, matching: new RegExp(`^GET ${API}/pipelines$`) });
    const gitlab = adapter(BOT.token, counter);
    const found = await gitlab.findPullRequest("overseer/task/L-2", "task:overseer/task/L-2");
    expect(found?.status).toBe("open");
    const got = await gitlab.getPullRequest(found?.number ?? 0);
    expect(got.head).toBe("overseer/task/L-2");
    expect(await gitlab.listChecks(got.headSha)).toEqual([]);
    // listChecks: the merge requests of the sha, the one whose head it is (no head pipeline yet),
    // then the sha's pipelines (two 503s and the answer).
    expect(counter.snapshot()).toEqual({ findPullRequest: 2, getPullRequest: 2, listChecks: 5 });
  });

  it("gives up after the configured retries with `unavailable`, naming the request", async () => {
    forge.fail({ status: 502, times: 10, matching: new RegExp(`^GET ${API}/merge_requests/1$`) });
    const gitlab = createForgeAdapter({
      forge: "gitlab",
      url: forge.url,
      repository: PROJECT,
      auth: { kind: "token", token: BOT.token },
      retry: { retries: 2, baseDelayMs: 10 },
    });
    const error = await gitlab.getPullRequest(1).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ForgeError);
    expect((error as ForgeError).code).toBe("unavailable");
    expect((error as ForgeError).message).toContain("/merge_requests/1");
    expect(gitlab.calls.snapshot()).toEqual({ getPullRequest: 3 });
  });

  it("finds a closed merge request by its marker, and reports an unknown token as unauthorized", async () => {
    await clone.commitAndPush("overseer/task/L-3", { "src/c.ts": "export const c = 1;\n" }, "L-3");
    const gitlab = adapter();
    const { pullRequest } = await gitlab.ensurePullRequest(draft("overseer/task/L-3"));
    await gitlab.closePullRequest(pullRequest.number);
    const found = await gitlab.findPullRequest("overseer/task/L-3", "task:overseer/task/L-3");
    expect(found).toMatchObject({ number: pullRequest.number, status: "closed", mergeCommitSha: null });
    expect(await gitlab.findPullRequest("overseer/task/L-3", "task:other")).toBeNull();
    const error = await adapter("glpat-unknown")
      .getPullRequest(pullRequest.number)
      .catch((e: unknown) => e);
    expect((error as ForgeError).code).toBe("unauthorized");
  });

  it("lists the jobs of the head's newest pipeline, and a failing job's trace tail", async () => {
    const head = (await adapter().getPullRequest(1)).headSha;
    forge.setPipeline(PROJECT, head, [{ name: "lint", status: "failed", log: "old run\n" }]);
    const { jobIds } = forge.setPipeline(PROJECT, head, [
      { name: "build", status: "success", log: "ok\n" },
      {
        name: "test",
        status: "failed",
        log: `${"noise\n".repeat(200)}FAIL src/a.test.ts\nexpected 2, got 1\n`,
      },
      { name: "deploy", status: "manual" },
    ]);
    const gitlab = adapter();
    const checks = await gitlab.listChecks(head);
    expect(checks.map((c) => [c.name, c.conclusion, c.source])).toEqual([
      ["build", "success", "job"],
      ["test", "failure", "job"],
      ["deploy", "skipped", "job"],
    ]);
    const failing = checks.find((c) => c.name === "test");
    expect(failing?.jobId).toBe(jobIds[1]);
    expect(failing?.url).toBe(`${forge.url}/${PROJECT}/-/jobs/${jobIds[1]}`);
    const tail = await gitlab.failingLogTail(failing ?? checks[0]!, 64);
    expect(tail?.endsWith("FAIL src/a.test.ts\nexpected 2, got 1\n")).toBe(true);
    expect(Buffer.byteLength(tail ?? "")).toBeLessThanOrEqual(64);
    expect(await gitlab.failingLogTail({ ...failing!, jobId: 999_999 }, 64)).toBeNull();
    expect(await gitlab.failingLogTail({ ...failing!, jobId: null }, 64)).toBeNull();
  });

  it("reads reviews from reviewer states and approvals, including approvals by non-reviewers", async () => {
    await forge.review(PROJECT, 1, "carol", "requested_changes");
    await forge.approve(PROJECT, 1, "alice");
    const reviews = await adapter().listReviews(1);
    const head = (await adapter().getPullRequest(1)).headSha;
    expect(reviews.map((r) => r.commitSha)).toEqual([head, head]);
    expect(reviews.map((r) => [r.author, r.verdict]).sort()).toEqual([
      ["alice", "approved"],
      ["carol", "changes_requested"],
    ]);
    await forge.review(PROJECT, 1, "carol", "approved");
    const after = await adapter().listReviews(1);
    expect(after.map((r) => [r.author, r.verdict]).sort()).toEqual([
      ["alice", "approved"],
      ["carol", "approved"],
    ]);
  });

  it("lists diff discussions as threads with path, line, replies and resolution", async () => {
    const id = forge.comment(PROJECT, 1, { username: "carol", path: "src/a.ts", line: 1, body: "Why 2?" });
    forge.reply(PROJECT, id, "overseer-bot", "The spec says 2.");
    const resolvedId = forge.comment(PROJECT, 1, {
      username: "carol",
      path: "README.md",
      line: 1,
      body: "Typo",
    });
    forge.reply(PROJECT, resolvedId, "carol", "Fixed, thanks.", true);
    const threads = await adapter().listReviewThreads(1);
    expect(threads).toHaveLength(2);
    const open = threads.find((t) => t.id === id);
    expect(open).toMatchObject({ path: "src/a.ts", line: 1, resolved: false });
    expect(open?.comments.map((c) => [c.author, c.body])).toEqual([
      ["carol", "Why 2?"],
      ["overseer-bot", "The spec says 2."],
    ]);
    expect(threads.find((t) => t.id === resolvedId)?.resolved).toBe(true);
  });

  it("refuses a merge while the pipeline is red, when the head moved, or for a Developer on a protected target", async () => {
    const gitlab = adapter();
    const pr = await gitlab.getPullRequest(1);
    const red = await gitlab.merge(1, { method: "squash", sha: pr.headSha });
    expect(red).toMatchObject({ kind: "refused" });
    expect((red as { reason: string }).reason).toContain("405");
    const moved = await gitlab.merge(1, { method: "squash", sha: "0".repeat(40) });
    expect(moved.kind).toBe("refused");
    expect((moved as { reason: string }).reason).toContain("SHA does not match HEAD of source branch");
    const error = await adapter(DEV.token)
      .merge(1, { method: "merge", sha: pr.headSha })
      .catch((e: unknown) => e);
    expect((error as ForgeError).code).toBe("unauthorized");
    expect(forge.mergeRequests(PROJECT).find((m) => m.iid === 1)?.state).toBe("opened");
  });

  it("merges with squash and the approved sha once green, recording the squash commit and who merged", async () => {
    const gitlab = adapter();
    const pr = await gitlab.getPullRequest(1);
    forge.setPipeline(PROJECT, pr.headSha, [{ name: "test", status: "success" }]);
    const merged = await gitlab.merge(1, {
      method: "squash",
      sha: pr.headSha,
      commitTitle: "L-1: the thing",
    });
    expect(merged.kind).toBe("merged");
    const after = await gitlab.getPullRequest(1);
    expect(after).toMatchObject({ status: "merged", mergedBy: "overseer-bot" });
    expect(after.mergeCommitSha).toBe((merged as { sha: string }).sha);
    const subject = await forge.git.git(PROJECT, ["log", "-1", "--format=%s", "main"]);
    expect(subject).toBe("L-1: the thing");
    const again = await gitlab.merge(1, { method: "squash", sha: pr.headSha });
    expect(again.kind).toBe("refused");
  });

  it("refuses a merge with conflicts (406), and reports the conflict as mergeable false", async () => {
    await clone.commitAndPush("overseer/task/L-4", { "src/a.ts": "export const a = 4;\n" }, "L-4");
    const gitlab = adapter();
    const { pullRequest } = await gitlab.ensurePullRequest(draft("overseer/task/L-4"));
    expect(pullRequest.mergeable).toBe(false);
    forge.setPipeline(PROJECT, pullRequest.headSha, [{ name: "test", status: "success" }]);
    const refused = await gitlab.merge(pullRequest.number, { method: "merge", sha: pullRequest.headSha });
    expect(refused.kind).toBe("refused");
    expect((refused as { reason: string }).reason).toContain("Branch cannot be merged");
  });

  it("hands the merge to GitLab's auto-merge while the pipeline runs; GitLab merges when it succeeds", async () => {
    const gitlab = adapter();
    const pr = (await gitlab.findPullRequest("overseer/task/L-2", "task:overseer/task/L-2"))!;
    const { jobIds } = forge.setPipeline(PROJECT, pr.headSha, [{ name: "test", status: "running" }]);
    const queued = await gitlab.enableAutoMerge(pr.number, { method: "merge", sha: pr.headSha });
    expect(queued).toEqual({ kind: "queued" });
    expect(forge.mergeRequests(PROJECT).find((m) => m.iid === pr.number)?.autoMerge).toEqual({
      by: "overseer-bot",
      squash: false,
    });
    await forge.settleAutoMerge(PROJECT);
    expect((await gitlab.getPullRequest(pr.number)).status).toBe("open");
    forge.setJob(PROJECT, jobIds[0] ?? 0, "success");
    await forge.settleAutoMerge(PROJECT);
    const merged = await gitlab.getPullRequest(pr.number);
    expect(merged).toMatchObject({ status: "merged", mergedBy: "overseer-bot" });
    expect(merged.mergeCommitSha).toMatch(/^[0-9a-f]{40}$/);
  });

  it("reads the conversation (no system notes, no diff notes), full reads without ETags, and retargets", async () => {
    await clone.commitAndPush("overseer/task/L-7", { "src/g.ts": "export const g = 1;\n" }, "L-7");
    const gitlab = adapter();
    const { pullRequest } = await gitlab.ensurePullRequest(draft("overseer/task/L-7"));
    expect(pullRequest.mergeable).toBe(true);
    forge.note(PROJECT, pullRequest.number, "alice", "@overseer-bot please also update the README");
    forge.comment(PROJECT, pullRequest.number, {
      username: "alice",
      path: "src/g.ts",
      line: 1,
      body: "inline",
    });
    forge.note(PROJECT, pullRequest.number, "bob", "+1");
    const comments = await gitlab.readComments(pullRequest.number, null);
    expect(comments.changed).toBe(true);
    if (!comments.changed) throw new Error("unreachable");
    expect(comments.etag).toBeNull();
    expect(comments.value.map((c) => [c.author, c.body])).toEqual([
      ["alice", "@overseer-bot please also update the README"],
      ["bob", "+1"],
    ]);
    const read = await gitlab.readPullRequest(pullRequest.number, 'W/"whatever"');
    expect(read).toMatchObject({ changed: true, etag: null, value: { number: pullRequest.number } });
    expect(await gitlab.readChecks(pullRequest.headSha, null)).toEqual({
      changed: true,
      value: [],
      etag: null,
    });
    expect(await gitlab.readReviews(pullRequest.number, null)).toEqual({
      changed: true,
      value: [],
      etag: null,
    });
    await forge.git.commitFiles(
      PROJECT,
      "overseer/pr/L-prereq",
      { "src/p.ts": "export const p = 1;\n" },
      "prereq",
    );
    const retargeted = await gitlab.setBase(pullRequest.number, "overseer/pr/L-prereq");
    expect(retargeted.base).toBe("overseer/pr/L-prereq");
    expect(forge.mergeRequests(PROJECT).find((m) => m.iid === pullRequest.number)?.target).toBe(
      "overseer/pr/L-prereq",
    );
    await gitlab.closePullRequest(pullRequest.number);
    const closed = await gitlab.readComments(pullRequest.number, null);
    // The "closed" system note GitLab adds is not a comment to answer.
    expect(closed.changed && closed.value.map((c) => c.body)).toEqual([
      "@overseer-bot please also update the README",
      "+1",
    ]);
    expect((await gitlab.getPullRequest(pullRequest.number)).mergeable).toBeNull();
  });

  it("records a merge a person made outside Overseer", async () => {
    await clone.commitAndPush("overseer/task/L-5", { "src/e.ts": "export const e = 1;\n" }, "L-5");
    const gitlab = adapter();
    const { pullRequest } = await gitlab.ensurePullRequest(draft("overseer/task/L-5"));
    forge.setPipeline(PROJECT, pullRequest.headSha, [{ name: "test", status: "success" }]);
    const sha = await forge.mergeByHuman(PROJECT, pullRequest.number, "alice");
    expect(await gitlab.getPullRequest(pullRequest.number)).toMatchObject({
      status: "merged",
      mergedBy: "alice",
      mergeCommitSha: sha,
    });
  });

  it("names each right a token lacks", async () => {
    const full = await adapter().checkTokenRights();
    expect(full).toMatchObject({ login: "overseer-bot", missing: [] });
    const reporter = await adapter("glpat-reporter").checkTokenRights();
    expect(reporter.login).toBe("reporter");
    expect(reporter.granted).toEqual(["read", "checks_read"]);
    expect(reporter.missing).toEqual(["push", "pull_requests", "merge"]);
    expect(reporter.advice[0]).toContain("write_repository");
    const dev = await adapter(DEV.token).checkTokenRights();
    expect(dev.missing).toEqual(["merge"]);
    // Not a member: GitLab answers the project with 404, and every right is missing.
    const outsider = await adapter("glpat-outsider").checkTokenRights();
    expect(outsider).toMatchObject({ login: "outsider", granted: [] });
    expect(outsider.missing).toEqual(["read", "push", "pull_requests", "checks_read", "merge"]);
  });

  it("the double refuses and reports what GitLab does not document (so an adapter bug cannot pass)", async () => {
    const send = (path: string, init: RequestInit = {}) =>
      fetch(`${forge.url}${path}`, { ...init, headers: { "private-token": BOT.token, ...init.headers } });
    const unknownParam = await send(`${API}/merge_requests?source_brnch=x`);
    expect(unknownParam.status).toBe(400);
    const badBody = await send(`${API}/merge_requests/1/merge`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ merge_method: "squash" }),
    });
    expect(badBody.status).toBe(400);
    const unknownRoute = await send(`${API}/merge_requests/1/rebase`, { method: "PUT" });
    expect(unknownRoute.status).toBe(404);
    const violations = forge.takeViolations();
    expect(violations).toHaveLength(3);
    expect(violations[0]).toContain("source_brnch");
    expect(violations[1]).toContain("merge_method");
    expect(violations[2]).toContain("not a route of the GitLab double");
  });

  it("sends Merge Request Hooks carrying X-Gitlab-Token to registered webhooks", async () => {
    const received: { headers: Record<string, unknown>; body: string }[] = [];
    const server: Server = createServer((req, res) => {
      let body = "";
      req.on("data", (chunk: Buffer) => {
        body += chunk.toString("utf8");
      });
      req.on("end", () => {
        received.push({ headers: req.headers, body });
        res.writeHead(202).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      forge.addWebhook(`http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, "s3cret");
      await clone.commitAndPush("overseer/task/L-6", { "src/f.ts": "export const f = 1;\n" }, "L-6");
      const gitlab = adapter();
      const { pullRequest } = await gitlab.ensurePullRequest(draft("overseer/task/L-6"));
      await gitlab.closePullRequest(pullRequest.number);
      await forge.flushWebhooks();
      const hooks = received.map((r) => ({
        event: r.headers["x-gitlab-event"],
        token: r.headers["x-gitlab-token"],
        uuid: r.headers["x-gitlab-event-uuid"],
        payload: JSON.parse(r.body) as {
          object_kind: string;
          object_attributes: { iid: number; action: string };
        },
      }));
      expect(
        hooks.map((h) => [h.event, h.token, h.payload.object_kind, h.payload.object_attributes.action]),
      ).toEqual([
        ["Merge Request Hook", "s3cret", "merge_request", "open"],
        ["Merge Request Hook", "s3cret", "merge_request", "close"],
      ]);
      expect(new Set(hooks.map((h) => h.uuid)).size).toBe(2);
      expect(hooks[0]?.payload.object_attributes.iid).toBe(pullRequest.number);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
