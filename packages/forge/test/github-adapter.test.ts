import { type GitHubDouble as Double, GitHubDouble } from "@overseer/test-support";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createForgeAdapter, type ForgeAdapter, ForgeCallCounter, ForgeError } from "../src/index.ts";
import { cloneScratch, type ScratchClone } from "./scratch-clone.ts";

const REPO = "acme/app";
const BOT = { login: "overseer-bot", token: "ghp_overseer" };
const HUMAN = { login: "alice", token: "ghp_alice" };

let forge: Double;
let clone: ScratchClone;

function adapter(token = BOT.token, counter = new ForgeCallCounter()): ForgeAdapter {
  return createForgeAdapter({
    forge: "github",
    url: forge.url,
    repository: REPO,
    auth: { kind: "token", token },
    counter,
    // Backoff after a 5xx in tens of ms, so the test stays quick; rate-limit waits stay what the forge asks.
    retry: { baseDelayMs: 20 },
    // Writes unpaced (OVERSEER_GITHUB_WRITE_INTERVAL_MS=0): pacing is github-write-pacing.test.ts's.
    githubWriteIntervalMs: 0,
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
  forge = await GitHubDouble.start();
  forge.addUser(BOT);
  forge.addUser(HUMAN);
  forge.addUser({ login: "reader", token: "ghp_reader", role: "read" });
  forge.addUser({ login: "nochecks", token: "ghp_nochecks", checksRead: false });
  await forge.createRepository(REPO, { "README.md": "# app\n", "src/a.ts": "export const a = 1;\n" });
  await forge.protectBranch(REPO, ["main"], ["ci"]);
  clone = await cloneScratch(forge.cloneUrl(REPO));
}, 60_000);

afterAll(async () => {
  await clone?.remove();
  await forge?.close();
});

afterEach(() => {
  expect(forge.takeViolations()).toEqual([]);
});

describe("GitHub adapter against the GitHub double (OpenAPI-validated, real git)", () => {
  it("refuses a push to the protected main branch with GitHub's words", async () => {
    await clone.commitAndPush("overseer/task/T-0", { "src/a.ts": "export const a = 0;\n" }, "T-0");
    const refused = await clone.push("main");
    expect(refused.ok).toBe(false);
    expect(refused.stderr).toContain("GH006: Protected branch update failed for refs/heads/main");
  });

  it("opens a pull request once per head: a second ensure updates, a third changes nothing", async () => {
    await clone.commitAndPush("overseer/task/T-1", { "src/a.ts": "export const a = 2;\n" }, "T-1");
    const counter = new ForgeCallCounter();
    const github = adapter(BOT.token, counter);
    const first = await github.ensurePullRequest(draft("overseer/task/T-1"));
    expect(first.outcome).toBe("created");
    expect(first.pullRequest).toMatchObject({ number: expect.any(Number), status: "open", base: "main" });
    const again = await github.ensurePullRequest(draft("overseer/task/T-1", "Adds the thing, better."));
    expect(again.outcome).toBe("updated");
    expect(again.pullRequest.number).toBe(first.pullRequest.number);
    const same = await github.ensurePullRequest(draft("overseer/task/T-1", "Adds the thing, better."));
    expect(same.outcome).toBe("unchanged");
    const open = forge.pulls(REPO).filter((p) => p.head === "overseer/task/T-1");
    expect(open).toHaveLength(1);
    expect(open[0]?.labels).toEqual(["overseer"]);
    expect(open[0]?.body).toContain("<!-- overseer:task:overseer/task/T-1 -->");
    // create: list + create + labels; update: list + patch; unchanged: list only.
    expect(counter.snapshot()).toEqual({ ensurePullRequest: 6 });
  });

  it("keeps text a person added to the body when updating Overseer's part", async () => {
    const github = adapter();
    const { pullRequest } = await github.ensurePullRequest(draft("overseer/task/T-1", "v3"));
    const pull = forge.pulls(REPO).find((p) => p.number === pullRequest.number);
    if (pull) pull.body = `Reviewer note: please keep.\n\n${pull.body}`;
    const updated = await github.ensurePullRequest(draft("overseer/task/T-1", "v4"));
    expect(updated.pullRequest.body).toContain("Reviewer note: please keep.");
    expect(updated.pullRequest.body).toContain("v4");
    expect(updated.pullRequest.body).not.toContain("v3");
  });

  it("a create whose answer is lost (502 after it took effect) still leaves one pull request", async () => {
    await clone.commitAndPush("overseer/task/T-2", { "src/b.ts": "export const b = 1;\n" }, "T-2");
    forge.fail({ status: 502, matching: /^POST \/api\/v3\/repos\/acme\/app\/pulls$/, afterEffect: true });
    const before = forge.requests.length;
    const result = await adapter().ensurePullRequest(draft("overseer/task/T-2"));
    expect(result.outcome).toBe("updated");
    expect(forge.pulls(REPO).filter((p) => p.head === "overseer/task/T-2")).toHaveLength(1);
    const creates = forge.requests
      .slice(before)
      .filter((r) => r.method === "POST" && r.path === "/api/v3/repos/acme/app/pulls");
    // The retry plugin repeats the create; GitHub refuses the repeat (422), and the adapter adopts the first.
    expect(creates[0]?.status).toBe(502);
    expect(creates.slice(1).map((r) => r.status)).toContain(422);
    expect(creates.slice(1).every((r) => r.status === 422)).toBe(true);
  });

  it("waits out a primary rate limit (403, x-ratelimit-remaining 0) and a 429 with Retry-After", async () => {
    const counter = new ForgeCallCounter();
    forge.fail({
      status: 403,
      rateLimitResetSeconds: 1,
      matching: /^GET \/api\/v3\/repos\/acme\/app\/pulls$/,
    });
    forge.fail({ status: 429, retryAfter: 1, matching: /^GET \/api\/v3\/repos\/acme\/app\/pulls\/\d+$/ });
    const github = adapter(BOT.token, counter);
    const found = await github.findPullRequest("overseer/task/T-2", "task:overseer/task/T-2");
    expect(found?.status).toBe("open");
    const got = await github.getPullRequest(found?.number ?? 0);
    expect(got.head).toBe("overseer/task/T-2");
    expect(counter.snapshot()).toEqual({ findPullRequest: 2, getPullRequest: 2 });
  }, 30_000);

  it("gives up on a 5xx after its retries with an `unavailable` error", async () => {
    forge.fail({ status: 503, times: 10, matching: /^GET \/api\/v3\/repos\/acme\/app\/pulls\/1$/ });
    const before = forge.requests.length;
    const error = await adapter()
      .getPullRequest(1)
      .catch((e: unknown) => e);
    forge.clearFaults();
    expect(error).toBeInstanceOf(ForgeError);
    expect((error as ForgeError).code).toBe("unavailable");
    expect(forge.requests.slice(before).map((r) => r.status)).toEqual([503, 503, 503, 503]);
  }, 60_000);

  it("reads checks and statuses of a head, and the failing job's log tail", async () => {
    const github = adapter();
    const pr = await github.findPullRequest("overseer/task/T-1", "task:overseer/task/T-1");
    const sha = pr?.headSha ?? "";
    forge.setCheckRun(REPO, sha, { name: "ci", conclusion: null });
    forge.setCheckRun(REPO, sha, {
      name: "ci",
      conclusion: "failure",
      log: `${"noise\n".repeat(500)}FAIL src/a.test.ts\nexpected 2, got 3\n`,
    });
    forge.setStatus(REPO, sha, { context: "lint", state: "success" });
    const checks = await github.listChecks(sha);
    expect(checks.map((c) => [c.name, c.conclusion, c.source])).toEqual([
      ["ci", "failure", "check_run"],
      ["lint", "success", "status"],
    ]);
    const failing = checks.find((c) => c.conclusion === "failure");
    const log = failing ? await github.failingLogTail(failing, 200) : null;
    expect(log).toContain("expected 2, got 3");
    expect(Buffer.byteLength(log ?? "")).toBeLessThanOrEqual(200);
  });

  it("reads reviews and every review thread with file, line, comment and replies", async () => {
    const github = adapter();
    const pr = await github.findPullRequest("overseer/task/T-1", "task:overseer/task/T-1");
    const number = pr?.number ?? 0;
    await forge.review(REPO, number, {
      login: HUMAN.login,
      state: "CHANGES_REQUESTED",
      body: "Two things.",
      comments: [
        { path: "src/a.ts", line: 1, body: "Use a named constant." },
        { path: "README.md", line: 1, body: "Mention it here." },
      ],
    });
    const [first, second] = forge.threads(REPO, number);
    forge.reply(REPO, first?.id ?? "", HUMAN.login, "And a comment above it.");
    forge.reply(REPO, second?.id ?? "", HUMAN.login, "Never mind.", true);
    const reviews = await github.listReviews(number);
    expect(reviews).toEqual([
      expect.objectContaining({
        author: "alice",
        verdict: "changes_requested",
        body: "Two things.",
        commitSha: pr?.headSha,
      }),
    ]);
    const threads = await github.listReviewThreads(number);
    expect(threads.filter((t) => !t.resolved)).toEqual([
      expect.objectContaining({
        path: "src/a.ts",
        line: 1,
        comments: [
          expect.objectContaining({ author: "alice", body: "Use a named constant." }),
          expect.objectContaining({ author: "alice", body: "And a comment above it." }),
        ],
      }),
    ]);
    expect(threads.filter((t) => t.resolved).map((t) => t.path)).toEqual(["README.md"]);
  });

  it("merges only the approved, green head: a moved head or a red required check is refused", async () => {
    const github = adapter();
    const pr = await github.findPullRequest("overseer/task/T-1", "task:overseer/task/T-1");
    const number = pr?.number ?? 0;
    const sha = pr?.headSha ?? "";
    const moved = await github.merge(number, { method: "squash", sha: "0".repeat(40) });
    expect(moved).toMatchObject({
      kind: "refused",
      reason: expect.stringContaining("Head branch was modified"),
    });
    const red = await github.merge(number, { method: "squash", sha });
    expect(red).toMatchObject({
      kind: "refused",
      reason: expect.stringContaining('Required status check "ci"'),
    });
    forge.setCheckRun(REPO, sha, { name: "ci", conclusion: "success" });
    const merged = await github.merge(number, { method: "squash", sha, commitTitle: "T-1: the thing" });
    expect(merged.kind).toBe("merged");
    const main = await forge.git.resolve(REPO, "refs/heads/main");
    expect(merged).toEqual({ kind: "merged", sha: main });
    const state = await github.getPullRequest(number);
    expect(state).toMatchObject({ status: "merged", mergeCommitSha: main, mergedBy: BOT.login });
  });

  it("sees a merge or a close done by a person", async () => {
    const github = adapter();
    await clone.commitAndPush("overseer/task/T-3", { "src/c.ts": "export const c = 1;\n" }, "T-3");
    await clone.commitAndPush("overseer/task/T-4", { "src/d.ts": "export const d = 1;\n" }, "T-4");
    const three = (await github.ensurePullRequest(draft("overseer/task/T-3"))).pullRequest;
    const four = (await github.ensurePullRequest(draft("overseer/task/T-4"))).pullRequest;
    forge.setCheckRun(REPO, three.headSha, { name: "ci", conclusion: "success" });
    const sha = await forge.mergeByHuman(REPO, three.number, HUMAN.login, "merge");
    expect(await github.getPullRequest(three.number)).toMatchObject({
      status: "merged",
      mergeCommitSha: sha,
      mergedBy: "alice",
    });
    await forge.closeByHuman(REPO, four.number);
    expect(await github.getPullRequest(four.number)).toMatchObject({
      status: "closed",
      mergeCommitSha: null,
    });
    // The closed one is still found by its marker, and a new ensure opens a fresh one.
    expect((await github.findPullRequest("overseer/task/T-4", "task:overseer/task/T-4"))?.status).toBe(
      "closed",
    );
    const reopened = await github.ensurePullRequest(draft("overseer/task/T-4"));
    expect(reopened.outcome).toBe("created");
    expect(reopened.pullRequest.number).not.toBe(four.number);
  });

  it("enables auto-merge through GraphQL; the forge merges once the head is green", async () => {
    const github = adapter();
    await clone.commitAndPush("overseer/task/T-5", { "src/e.ts": "export const e = 1;\n" }, "T-5");
    const pr = (await github.ensurePullRequest(draft("overseer/task/T-5"))).pullRequest;
    expect(await github.enableAutoMerge(pr.number, { method: "rebase", sha: pr.headSha })).toEqual({
      kind: "queued",
    });
    forge.setCheckRun(REPO, pr.headSha, { name: "ci", conclusion: "success" });
    await forge.settleAutoMerge(REPO);
    expect((await github.getPullRequest(pr.number)).status).toBe("merged");
  });

  it("refuses a pull request from the same branch that Overseer did not open", async () => {
    await clone.commitAndPush("overseer/task/T-6", { "src/f.ts": "export const f = 1;\n" }, "T-6");
    await adapter(HUMAN.token).ensurePullRequest({ ...draft("overseer/task/T-6"), marker: "someone-else" });
    const error = await adapter()
      .ensurePullRequest(draft("overseer/task/T-6"))
      .catch((e: unknown) => e);
    expect(error).toMatchObject({
      code: "conflict",
      message: expect.stringContaining("was not opened by Overseer"),
    });
  });

  it("checks a token's rights: write, read-only, no checks, unknown", async () => {
    expect(await adapter().checkTokenRights()).toMatchObject({
      login: BOT.login,
      missing: [],
    });
    const reader = await adapter("ghp_reader").checkTokenRights();
    expect(reader.missing).toEqual(["push", "pull_requests", "merge"]);
    expect(reader.advice[0]).toContain("Contents: read and write");
    const nochecks = await adapter("ghp_nochecks").checkTokenRights();
    expect(nochecks.missing).toEqual(["checks_read"]);
    const unknown = await adapter("ghp_bogus")
      .checkTokenRights()
      .catch((e: unknown) => e);
    expect(unknown).toMatchObject({ code: "unauthorized" });
  });
});
