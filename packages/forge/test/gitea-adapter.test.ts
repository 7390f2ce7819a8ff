import { createHmac } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { GiteaDouble } from "@overseer/test-support";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createForgeAdapter, type ForgeAdapter, ForgeCallCounter, ForgeError } from "../src/index.ts";
import { cloneScratch, type ScratchClone } from "./scratch-clone.ts";

const REPO = "acme/app";
const API = "/api/v1/repos/acme/app";
const BOT = { login: "overseer-bot", token: "gitea-overseer" };
const HUMAN = { login: "alice", token: "gitea-alice" };

let forge: GiteaDouble;
let clone: ScratchClone;
let bugLabel = 0;

function adapter(token = BOT.token, counter = new ForgeCallCounter()): ForgeAdapter {
  return createForgeAdapter({
    forge: "gitea",
    url: forge.url,
    repository: REPO,
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

async function pullOf(head: string) {
  const found = await adapter().findPullRequest(head, `task:${head}`);
  if (!found) throw new Error(`no pull request from ${head}`);
  return found;
}

beforeAll(async () => {
  forge = await GiteaDouble.start();
  forge.addUser(BOT);
  forge.addUser(HUMAN);
  forge.addUser({ login: "reader", token: "gitea-reader", permission: "read" });
  forge.addUser({ login: "outsider", token: "gitea-outsider", permission: "none" });
  await forge.createRepository(REPO, { "README.md": "# app\n", "src/a.ts": "export const a = 1;\n" });
  bugLabel = forge.addLabel(REPO, "bug");
  forge.addLabel(REPO, "overseer");
  await forge.protectBranch(REPO, ["main"], ["ci/test"]);
  clone = await cloneScratch(forge.cloneUrl(REPO));
}, 60_000);

afterAll(async () => {
  await clone?.remove();
  await forge?.close();
});

afterEach(() => {
  forge.clearFaults();
  expect(forge.takeViolations()).toEqual([]);
});

describe("Gitea adapter against the Gitea double (swagger-shaped, real git)", () => {
  it("refuses a push to the protected main branch with Gitea's words", async () => {
    await clone.commitAndPush("overseer/task/G-0", { "src/a.ts": "export const a = 0;\n" }, "G-0");
    const refused = await clone.push("main");
    expect(refused.ok).toBe(false);
    expect(refused.stderr).toContain("Not allowed to push to protected branch main");
  });

  it("opens one pull request per head: a second ensure updates, a third changes nothing", async () => {
    await clone.commitAndPush("overseer/task/G-1", { "src/a.ts": "export const a = 2;\n" }, "G-1");
    const counter = new ForgeCallCounter();
    const gitea = adapter(BOT.token, counter);
    const first = await gitea.ensurePullRequest(draft("overseer/task/G-1"));
    expect(first.outcome).toBe("created");
    expect(first.pullRequest).toMatchObject({ number: 1, status: "open", base: "main", mergeable: true });
    expect(first.pullRequest.url).toBe(`${forge.url}/${REPO}/pulls/1`);
    const again = await gitea.ensurePullRequest(draft("overseer/task/G-1", "Adds the thing, better."));
    expect(again.outcome).toBe("updated");
    const same = await gitea.ensurePullRequest(draft("overseer/task/G-1", "Adds the thing, better."));
    expect(same.outcome).toBe("unchanged");
    const pulls = forge.pulls(REPO).filter((p) => p.head === "overseer/task/G-1");
    expect(pulls).toHaveLength(1);
    expect(forge.labelNames(REPO, pulls[0]!)).toEqual(["overseer"]);
    expect(pulls[0]?.body).toContain("<!-- overseer:task:overseer/task/G-1 -->");
    // create: list + labels + create; update: list + edit; unchanged: list only.
    expect(counter.snapshot()).toEqual({ ensurePullRequest: 6 });
  });

  it("keeps text a person added to the body, and adds a missing label without dropping theirs", async () => {
    const gitea = adapter();
    const pull = forge.pulls(REPO).find((p) => p.head === "overseer/task/G-1");
    if (!pull) throw new Error("no pull");
    pull.body = `Reviewer note: keep.\n\n${pull.body}`;
    // A person replaced the labels with their own.
    pull.labels = [bugLabel];
    const updated = await gitea.ensurePullRequest(draft("overseer/task/G-1", "v4"));
    expect(updated.outcome).toBe("updated");
    expect(updated.pullRequest.body).toContain("Reviewer note: keep.");
    expect(updated.pullRequest.body).toContain("v4");
    expect(forge.labelNames(REPO, pull)).toEqual(["bug", "overseer"]);
  });

  it("a create whose answer is lost (502 after it took effect) still leaves one pull request", async () => {
    await clone.commitAndPush("overseer/task/G-2", { "src/b.ts": "export const b = 1;\n" }, "G-2");
    forge.fail({ status: 502, matching: new RegExp(`^POST ${API}/pulls$`), afterEffect: true });
    const before = forge.requests.length;
    const result = await adapter().ensurePullRequest(draft("overseer/task/G-2"));
    expect(result.outcome).toBe("unchanged");
    expect(forge.pulls(REPO).filter((p) => p.head === "overseer/task/G-2")).toHaveLength(1);
    const creates = forge.requests
      .slice(before)
      .filter((r) => r.method === "POST" && r.path === `${API}/pulls`);
    // The retrying fetch repeats the create; Gitea refuses the repeat (409) and the adapter adopts the first.
    expect(creates.map((r) => r.status)).toEqual([502, 409]);
  });

  it("refuses to take over a pull request someone else opened from the same branch", async () => {
    await clone.commitAndPush("feature/human", { "src/h.ts": "export const h = 1;\n" }, "human");
    await adapter(HUMAN.token).ensurePullRequest({ ...draft("feature/human"), marker: "someone-else" });
    const pull = forge.pulls(REPO).find((p) => p.head === "feature/human");
    if (pull) pull.body = "Written by a person.";
    const error = await adapter()
      .ensurePullRequest(draft("feature/human"))
      .catch((e: unknown) => e);
    expect((error as ForgeError).code).toBe("conflict");
    expect((error as ForgeError).message).toContain("was not opened by Overseer");
  });

  it("waits out a 429 with Retry-After and an exhausted X-RateLimit-Remaining, and retries 5xx", async () => {
    const counter = new ForgeCallCounter();
    forge.fail({ status: 429, retryAfter: 1, matching: new RegExp(`^GET ${API}/pulls$`) });
    forge.fail({ status: 403, rateLimitResetSeconds: 1, matching: new RegExp(`^GET ${API}/pulls/\\d+$`) });
    forge.fail({ status: 503, times: 2, matching: new RegExp(`^GET ${API}/commits/[0-9a-f]+/statuses$`) });
    const gitea = adapter(BOT.token, counter);
    const found = await gitea.findPullRequest("overseer/task/G-2", "task:overseer/task/G-2");
    expect(found?.status).toBe("open");
    const got = await gitea.getPullRequest(found?.number ?? 0);
    expect(got.head).toBe("overseer/task/G-2");
    expect(await gitea.listChecks(got.headSha)).toEqual([]);
    expect(counter.snapshot()).toEqual({ findPullRequest: 2, getPullRequest: 2, listChecks: 3 });
  });

  it("gives up after the configured retries with `unavailable`", async () => {
    forge.fail({ status: 500, times: 10, matching: new RegExp(`^GET ${API}/pulls/1$`) });
    const gitea = createForgeAdapter({
      forge: "gitea",
      url: forge.url,
      repository: REPO,
      auth: { kind: "token", token: BOT.token },
      retry: { retries: 2, baseDelayMs: 10 },
    });
    const error = await gitea.getPullRequest(1).catch((e: unknown) => e);
    expect((error as ForgeError).code).toBe("unavailable");
    expect(gitea.calls.snapshot()).toEqual({ getPullRequest: 3 });
  });

  it("finds a closed pull request by its marker, and reports an unknown token as unauthorized", async () => {
    await clone.commitAndPush("overseer/task/G-3", { "src/c.ts": "export const c = 1;\n" }, "G-3");
    const gitea = adapter();
    const { pullRequest } = await gitea.ensurePullRequest(draft("overseer/task/G-3"));
    await gitea.closePullRequest(pullRequest.number);
    const found = await gitea.findPullRequest("overseer/task/G-3", "task:overseer/task/G-3");
    expect(found).toMatchObject({ number: pullRequest.number, status: "closed", mergeable: null });
    expect(await gitea.findPullRequest("overseer/task/G-3", "task:other")).toBeNull();
    // An ensure that read the record before the close answers the closed one, opening none.
    const late = await gitea.ensurePullRequest({ ...draft("overseer/task/G-3"), number: pullRequest.number });
    expect(late).toMatchObject({ outcome: "unchanged", pullRequest: { status: "closed" } });
    expect(forge.pulls(REPO).filter((p) => p.head === "overseer/task/G-3")).toHaveLength(1);
    const merge = await gitea.merge(pullRequest.number, { method: "merge", sha: pullRequest.headSha });
    expect(merge).toMatchObject({ kind: "refused" });
    expect((merge as { reason: string }).reason).toContain("is closed");
    const error = await adapter("unknown")
      .getPullRequest(pullRequest.number)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ForgeError);
    expect((error as ForgeError).code).toBe("unauthorized");
  });

  it("creates a label the repository lacks, once, and gives Gitea its id", async () => {
    await clone.commitAndPush("overseer/task/G-8", { "src/l.ts": "export const l = 1;\n" }, "G-8");
    const counter = new ForgeCallCounter();
    const labelled = { ...draft("overseer/task/G-8"), labels: ["overseer", "needs-review"] };
    await adapter(BOT.token, counter).ensurePullRequest(labelled);
    const pull = forge.pulls(REPO).find((p) => p.head === "overseer/task/G-8");
    expect(forge.labelNames(REPO, pull!)).toEqual(["overseer", "needs-review"]);
    const creates = () => forge.requests.filter((r) => r.method === "POST" && r.path === `${API}/labels`);
    expect(creates()).toHaveLength(1);
    // list + labels + create label + create pull request.
    expect(counter.snapshot()).toEqual({ ensurePullRequest: 4 });
    const again = await adapter().ensurePullRequest({ ...labelled, body: "changed" });
    expect(again.outcome).toBe("updated");
    expect(creates()).toHaveLength(1);
    expect(forge.labelNames(REPO, pull!)).toEqual(["overseer", "needs-review"]);
  });

  it("reads a failing Gitea Actions job's log tail (Gitea ≥ 1.24), and an outside status's words", async () => {
    const head = (await pullOf("overseer/task/G-8")).headSha;
    const log = `${"setup\n".repeat(400)}FAIL src/l.test.ts\nexpected l to be 2, got 1\n`;
    const context = forge.actionsJob(REPO, head, { workflow: "CI", job: "test", state: "failure", log });
    expect(context).toBe("CI / test (pull_request)");
    forge.setStatus(REPO, head, {
      context: "ci/external",
      state: "error",
      description: "3 tests failed",
      targetUrl: "https://ci.example.org/builds/9",
    });
    const counter = new ForgeCallCounter();
    const gitea = adapter(BOT.token, counter);
    const checks = await gitea.listChecks(head);
    const job = checks.find((c) => c.name === context);
    expect(job).toMatchObject({ conclusion: "failure", source: "status" });
    expect(job?.url).toMatch(new RegExp(`^${forge.url}/${REPO}/actions/runs/\\d+/jobs/0$`));
    const logTail = await gitea.failingLogTail(job!, 256);
    expect(logTail).toContain("expected l to be 2, got 1");
    expect(Buffer.byteLength(logTail ?? "")).toBeLessThanOrEqual(256);
    const outside = checks.find((c) => c.name === "ci/external");
    const words = await gitea.failingLogTail(outside!, 256);
    expect(words).toContain("3 tests failed");
    expect(words).toContain("https://ci.example.org/builds/9");
    // The statuses; then, for the job's log only: the runs of the head, the run's jobs, the log.
    // The outside status's words cost nothing more.
    expect(counter.snapshot()).toEqual({ listChecks: 1, failingLogTail: 3 });
  });

  it("without Gitea's Actions API (older Gitea, Forgejo) gives the status's words and link", async () => {
    const head = (await pullOf("overseer/task/G-8")).headSha;
    forge.actionsApi = false;
    const gitea = adapter();
    const checks = await gitea.listChecks(head);
    const job = checks.find((c) => c.name === "CI / test (pull_request)");
    const words = await gitea.failingLogTail(job!, 1024);
    expect(words).toContain("Failing after");
    expect(words).toContain(job?.url ?? "no url");
    forge.actionsApi = true;
  });

  it("lists the newest commit status of each context", async () => {
    const head = (await pullOf("overseer/task/G-1")).headSha;
    forge.setStatus(REPO, head, { context: "ci/test", state: "pending" });
    forge.setStatus(REPO, head, { context: "ci/lint", state: "warning" });
    forge.setStatus(REPO, head, { context: "ci/test", state: "failure" });
    forge.setStatus(REPO, head, { context: "ci/build", state: "error" });
    const gitea = adapter();
    const checks = await gitea.listChecks(head);
    expect(checks.map((c) => [c.name, c.conclusion, c.source]).sort()).toEqual([
      ["ci/build", "failure", "status"],
      ["ci/lint", "neutral", "status"],
      ["ci/test", "failure", "status"],
    ]);
    expect(checks.find((c) => c.name === "ci/test")?.url).toMatch(/^https:\/\/ci\.forge-double\.test\//);
  });

  it("reads reviews and inline threads: replies grouped by line, resolution by a resolver", async () => {
    const number = (await pullOf("overseer/task/G-1")).number;
    await forge.review(REPO, number, {
      login: "carol",
      state: "REQUEST_CHANGES",
      body: "Please fix",
      comments: [
        { path: "src/a.ts", line: 1, body: "Why 2?" },
        { path: "README.md", line: 1, body: "Typo" },
      ],
    });
    await forge.review(REPO, number, {
      login: "overseer-bot",
      state: "COMMENT",
      comments: [{ path: "src/a.ts", line: 1, body: "The spec says 2." }],
    });
    forge.resolve(REPO, number, "README.md", 1, "carol");
    await forge.review(REPO, number, { login: "alice", state: "APPROVED" });
    const gitea = adapter();
    const reviews = await gitea.listReviews(number);
    expect(reviews.map((r) => [r.author, r.verdict])).toEqual([
      ["carol", "changes_requested"],
      ["overseer-bot", "commented"],
      ["alice", "approved"],
    ]);
    expect(reviews[0]?.commitSha).toMatch(/^[0-9a-f]{40}$/);
    const counter = new ForgeCallCounter();
    const threads = await adapter(BOT.token, counter).listReviewThreads(number);
    // The reviews, then the inline comments of the two reviews that have any (alice's approval has none).
    expect(counter.snapshot()).toEqual({ listReviewThreads: 3 });
    const why = threads.find((t) => t.path === "src/a.ts");
    expect(why).toMatchObject({ line: 1, resolved: false });
    expect(why?.comments.map((c) => [c.author, c.body])).toEqual([
      ["carol", "Why 2?"],
      ["overseer-bot", "The spec says 2."],
    ]);
    expect(threads.find((t) => t.path === "README.md")?.resolved).toBe(true);
    // Overseer's reply joins the conversation on that line: its last word is now Overseer's.
    await gitea.replyToThread(number, why!, "Addressed in abc123.");
    const replied = (await gitea.listReviewThreads(number)).find((t) => t.path === "src/a.ts");
    expect(replied?.comments.at(-1)).toMatchObject({ author: "overseer-bot", body: "Addressed in abc123." });
    expect(replied?.comments).toHaveLength(3);
    // A comment-only review by Overseer is no verdict.
    expect((await gitea.listReviews(number)).at(-1)).toMatchObject({
      author: "overseer-bot",
      verdict: "commented",
    });
  });

  it("refuses a merge while a required status is not green, when the head moved, or for a reader", async () => {
    const gitea = adapter();
    const pr = await pullOf("overseer/task/G-1");
    const red = await gitea.merge(pr.number, { method: "squash", sha: pr.headSha });
    expect(red.kind).toBe("refused");
    expect((red as { reason: string }).reason).toContain("not ready to be merged");
    forge.setStatus(REPO, pr.headSha, { context: "ci/test", state: "success" });
    const moved = await gitea.merge(pr.number, { method: "squash", sha: "0".repeat(40) });
    expect(moved.kind).toBe("refused");
    expect((moved as { reason: string }).reason).toContain("head out of date");
    const reader = await adapter("gitea-reader").merge(pr.number, { method: "merge", sha: pr.headSha });
    expect((reader as { reason: string }).reason).toContain("not allowed to merge");
    expect(forge.pulls(REPO).find((p) => p.number === pr.number)?.merged).toBe(false);
  });

  it("merges with squash and the approved sha once green, recording the commit and who merged", async () => {
    const gitea = adapter();
    const pr = await pullOf("overseer/task/G-1");
    const merged = await gitea.merge(pr.number, {
      method: "squash",
      sha: pr.headSha,
      commitTitle: "G-1: the thing",
    });
    expect(merged.kind).toBe("merged");
    const after = await gitea.getPullRequest(pr.number);
    expect(after).toMatchObject({ status: "merged", mergedBy: "overseer-bot", mergeable: null });
    expect(after.mergeCommitSha).toBe((merged as { sha: string }).sha);
    expect(await forge.git.git(REPO, ["log", "-1", "--format=%s", "main"])).toBe("G-1: the thing");
    const again = await gitea.merge(pr.number, { method: "squash", sha: pr.headSha });
    expect((again as { reason: string }).reason).toContain("already merged");
  });

  it("reports a conflict with the moved base as mergeable false and refuses its merge (409)", async () => {
    await clone.commitAndPush("overseer/task/G-4", { "src/a.ts": "export const a = 4;\n" }, "G-4");
    const gitea = adapter();
    const { pullRequest } = await gitea.ensurePullRequest(draft("overseer/task/G-4"));
    expect(pullRequest.mergeable).toBe(false);
    forge.setStatus(REPO, pullRequest.headSha, { context: "ci/test", state: "success" });
    const refused = await gitea.merge(pullRequest.number, { method: "merge", sha: pullRequest.headSha });
    expect(refused.kind).toBe("refused");
    expect((refused as { reason: string }).reason).toContain("409");
  });

  it("schedules Gitea's merge when checks succeed while they are pending; Gitea merges once green", async () => {
    const gitea = adapter();
    const pr = await pullOf("overseer/task/G-2");
    forge.setStatus(REPO, pr.headSha, { context: "ci/test", state: "pending" });
    expect(await gitea.enableAutoMerge(pr.number, { method: "merge", sha: pr.headSha })).toEqual({
      kind: "queued",
    });
    expect(forge.pulls(REPO).find((p) => p.number === pr.number)?.autoMerge).toEqual({
      by: "overseer-bot",
      style: "merge",
    });
    await forge.settleAutoMerge(REPO);
    expect((await gitea.getPullRequest(pr.number)).status).toBe("open");
    forge.setStatus(REPO, pr.headSha, { context: "ci/test", state: "success" });
    await forge.settleAutoMerge(REPO);
    expect(await gitea.getPullRequest(pr.number)).toMatchObject({
      status: "merged",
      mergedBy: "overseer-bot",
    });
  });

  it("records a merge a person made outside Overseer", async () => {
    await clone.commitAndPush("overseer/task/G-5", { "src/e.ts": "export const e = 1;\n" }, "G-5");
    const gitea = adapter();
    const { pullRequest } = await gitea.ensurePullRequest(draft("overseer/task/G-5"));
    forge.setStatus(REPO, pullRequest.headSha, { context: "ci/test", state: "success" });
    const sha = await forge.mergeByHuman(REPO, pullRequest.number, "alice");
    expect(await gitea.getPullRequest(pullRequest.number)).toMatchObject({
      status: "merged",
      mergedBy: "alice",
      mergeCommitSha: sha,
    });
  });

  it("reads the conversation, full reads without ETags, and retargets", async () => {
    await clone.commitAndPush("overseer/task/G-6", { "src/g.ts": "export const g = 1;\n" }, "G-6");
    const gitea = adapter();
    const { pullRequest } = await gitea.ensurePullRequest(draft("overseer/task/G-6"));
    forge.comment(REPO, pullRequest.number, "alice", "@overseer-bot please also update the README");
    const comments = await gitea.readComments(pullRequest.number, null);
    expect(comments).toMatchObject({ changed: true, etag: null });
    expect(comments.changed && comments.value.map((c) => [c.author, c.body])).toEqual([
      ["alice", "@overseer-bot please also update the README"],
    ]);
    expect(await gitea.readPullRequest(pullRequest.number, "x")).toMatchObject({ changed: true, etag: null });
    expect(await gitea.readChecks(pullRequest.headSha, null)).toEqual({
      changed: true,
      value: [],
      etag: null,
    });
    expect(await gitea.readReviews(pullRequest.number, null)).toEqual({
      changed: true,
      value: [],
      etag: null,
    });
    await forge.git.commitFiles(
      REPO,
      "overseer/pr/G-prereq",
      { "src/p.ts": "export const p = 1;\n" },
      "prereq",
    );
    const retargeted = await gitea.setBase(pullRequest.number, "overseer/pr/G-prereq");
    expect(retargeted.base).toBe("overseer/pr/G-prereq");
  });

  it("names each right a token lacks", async () => {
    expect(await adapter().checkTokenRights()).toMatchObject({ login: "overseer-bot", missing: [] });
    const reader = await adapter("gitea-reader").checkTokenRights();
    expect(reader.granted).toEqual(["read", "checks_read"]);
    expect(reader.missing).toEqual(["push", "pull_requests", "merge"]);
    expect(reader.advice[0]).toContain("write:repository");
    // Not a collaborator: Gitea answers the repository with 404, and every right is missing.
    const outsider = await adapter("gitea-outsider").checkTokenRights();
    expect(outsider).toMatchObject({ login: "outsider", granted: [] });
    expect(outsider.missing).toHaveLength(5);
  });

  it("the double refuses and reports what Gitea's swagger does not declare", async () => {
    const send = (path: string, init: RequestInit = {}) =>
      fetch(`${forge.url}${path}`, {
        ...init,
        headers: { authorization: `token ${BOT.token}`, ...init.headers },
      });
    expect((await send(`${API}/pulls?head=x`)).status).toBe(422);
    const badMerge = await send(`${API}/pulls/1/merge`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ merge_method: "squash" }),
    });
    expect(badMerge.status).toBe(422);
    const violations = forge.takeViolations();
    expect(violations).toHaveLength(3);
    expect(violations[0]).toContain("head");
    expect(violations.slice(1).join("\n")).toContain("merge_method");
    expect(violations.slice(1).join("\n")).toContain("Do");
  });

  it("signs its webhooks with X-Gitea-Signature (HMAC-SHA256 of the body) and names each event as Gitea does", async () => {
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
      await clone.commitAndPush("overseer/task/G-7", { "src/k.ts": "export const k = 1;\n" }, "G-7");
      const gitea = adapter();
      const { pullRequest } = await gitea.ensurePullRequest(draft("overseer/task/G-7"));
      forge.setStatus(REPO, pullRequest.headSha, { context: "ci/test", state: "failure" });
      await forge.review(REPO, pullRequest.number, {
        login: "alice",
        state: "REQUEST_CHANGES",
        body: "No.",
        comments: [{ path: "src/k.ts", line: 1, body: "Why k?" }],
      });
      await forge.review(REPO, pullRequest.number, { login: "alice", state: "APPROVED" });
      forge.comment(REPO, pullRequest.number, "alice", "@overseer-bot thanks");
      await forge.flushWebhooks();
      await gitea.addComment(pullRequest.number, "Overseer here.");
      await gitea.closePullRequest(pullRequest.number);
      await forge.flushWebhooks();
      for (const r of received) {
        expect(r.headers["x-gitea-signature"]).toBe(
          createHmac("sha256", "s3cret").update(r.body).digest("hex"),
        );
        expect(r.headers["x-gitea-delivery"]).toEqual(expect.any(String));
      }
      // biome-ignore lint/suspicious/noExplicitAny: a delivery's JSON is read field by field below
      const payloads = received.map((r) => JSON.parse(r.body) as Record<string, any>);
      expect(received.map((r) => [r.headers["x-gitea-event"], r.headers["x-gitea-event-type"]])).toEqual([
        ["pull_request", "pull_request"],
        ["status", "status"],
        ["pull_request_rejected", "pull_request_review_rejected"],
        ["pull_request_approved", "pull_request_review_approved"],
        ["issue_comment", "pull_request_comment"],
        ["issue_comment", "pull_request_comment"],
        ["pull_request", "pull_request"],
      ]);
      expect(payloads.map((p) => p.action ?? p.state)).toEqual([
        "opened",
        "failure",
        "reviewed",
        "reviewed",
        "created",
        "created",
        "closed",
      ]);
      expect(payloads[1]).toMatchObject({ sha: pullRequest.headSha, context: "ci/test" });
      expect(payloads[2]?.review).toEqual({ type: "pull_request_review_rejected", content: "No." });
      expect(payloads[2]?.pull_request.head.ref).toBe("overseer/task/G-7");
      expect(payloads[4]).toMatchObject({ is_pull: true, issue: { number: pullRequest.number } });
      expect(payloads[4]?.comment.body).toBe("@overseer-bot thanks");
      expect(payloads[5]?.sender.login).toBe("overseer-bot");
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
