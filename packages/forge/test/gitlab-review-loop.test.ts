/**
 * The GitLab adapter's loop reads against the GitLab double: the CI gate of the merge request's
 * head pipeline (jobs, external commit statuses, allowed failures), job traces cleaned for a
 * prompt, each verdict on the head it was given on, resolvable threads on the diff and on the
 * merge request, replies and comments, merge methods, and the hooks GitLab sends meanwhile.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { GitLabDouble } from "@overseer/test-support";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { traceTail } from "../src/gitlab-checks.ts";
import { createForgeAdapter, type ForgeAdapter, ForgeCallCounter } from "../src/index.ts";
import { cloneScratch, type ScratchClone } from "./scratch-clone.ts";

const PROJECT = "acme/loop";
const BOT = { username: "overseer-bot", token: "glpat-bot", accessLevel: 40 };
const ESC = "\u001b";

let forge: GitLabDouble;
let clone: ScratchClone;
let hooks: Server;
const received: { event: string; token: string; body: Record<string, unknown> }[] = [];

function adapter(counter = new ForgeCallCounter()): ForgeAdapter {
  return createForgeAdapter({
    forge: "gitlab",
    url: forge.url,
    repository: PROJECT,
    auth: { kind: "token", token: BOT.token },
    counter,
    retry: { baseDelayMs: 20 },
  });
}

async function open(head: string, files: Record<string, string>) {
  await clone.commitAndPush(head, files, head);
  const { pullRequest } = await adapter().ensurePullRequest({
    head,
    base: "main",
    title: head,
    body: "Body.",
    marker: `task:${head}`,
  });
  return pullRequest;
}

beforeAll(async () => {
  forge = await GitLabDouble.start();
  forge.addUser(BOT);
  await forge.createProject(PROJECT, { "README.md": "# loop\n", "src/a.ts": "export const a = 1;\n" });
  clone = await cloneScratch(forge.cloneUrl(PROJECT));
  hooks = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => {
      body += chunk.toString("utf8");
    });
    req.on("end", () => {
      received.push({
        event: String(req.headers["x-gitlab-event"]),
        token: String(req.headers["x-gitlab-token"]),
        body: JSON.parse(body) as Record<string, unknown>,
      });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => hooks.listen(0, "127.0.0.1", resolve));
  forge.addWebhook(`http://127.0.0.1:${(hooks.address() as AddressInfo).port}/hook`, "hook-secret");
}, 60_000);

afterAll(async () => {
  await clone?.remove();
  await forge?.close();
  hooks?.closeAllConnections();
  await new Promise<void>((resolve) => hooks?.close(() => resolve()));
});

afterEach(() => {
  expect(forge.takeViolations()).toEqual([]);
});

describe("GitLab adapter: the loop's reads and writes against the GitLab double", () => {
  it("gates on the merge request's head pipeline: its jobs, the external statuses of its sha, allowed failures", async () => {
    const pr = await open("overseer/pr/G-1", { "src/g1.ts": "export const g = 1;\n" });
    // A pipeline of an older head, and a job retried on the head: only the head pipeline counts.
    forge.setPipeline(PROJECT, pr.headSha, [{ name: "test", status: "failed", log: "old\n" }], pr.head);
    const { pipelineId, jobIds } = forge.setPipeline(
      PROJECT,
      pr.headSha,
      [
        { name: "test", status: "running" },
        { name: "lint", status: "failed", allowFailure: true, log: "warning only\n" },
      ],
      `refs/merge-requests/${pr.number}/head`,
      "merge_request_event",
    );
    forge.setStatus(PROJECT, pr.headSha, {
      name: "external/security",
      state: "pending",
      targetUrl: "https://ci.example/builds/9",
    });
    const counter = new ForgeCallCounter();
    const checks = await adapter(counter).listChecks(pr.headSha);
    expect(checks.map((c) => [c.name, c.conclusion, c.source, c.jobId])).toEqual([
      ["test", "pending", "job", jobIds[0]],
      ["lint", "neutral", "job", jobIds[1]],
      ["external/security", "pending", "status", null],
    ]);
    expect(checks[2]?.url).toBe("https://ci.example/builds/9");
    // The commit's merge requests, the merge request (head_pipeline), its jobs, the sha's statuses.
    expect(counter.snapshot()).toEqual({ listChecks: 4 });
    forge.setJob(PROJECT, jobIds[0] ?? 0, "success");
    forge.setStatus(PROJECT, pr.headSha, { name: "external/security", state: "failed" });
    const after = await adapter().listChecks(pr.headSha);
    expect(after.map((c) => [c.name, c.conclusion])).toEqual([
      ["test", "success"],
      ["lint", "neutral"],
      ["external/security", "failure"],
    ]);
    // An external status has no trace to read.
    expect(await adapter().failingLogTail(after[2] ?? after[0]!, 100)).toBeNull();
    await forge.flushWebhooks();
    const pipelineHooks = received.filter(
      (r) => r.event === "Pipeline Hook" && (r.body.object_attributes as { id: number }).id === pipelineId,
    );
    expect(pipelineHooks.length).toBeGreaterThan(0);
    const last = pipelineHooks.at(-1)?.body as {
      object_kind: string;
      object_attributes: { status: string; sha: string; source: string };
      merge_request: { iid: number; source_branch: string } | null;
      builds: { name: string; allow_failure: boolean }[];
    };
    expect(last.object_kind).toBe("pipeline");
    expect(last.object_attributes).toMatchObject({
      status: "failed",
      sha: pr.headSha,
      source: "merge_request_event",
    });
    expect(last.merge_request).toMatchObject({ iid: pr.number, source_branch: pr.head });
    expect(last.builds.map((b) => [b.name, b.allow_failure])).toEqual([
      ["test", false],
      ["lint", true],
      ["external/security", false],
    ]);
    expect(pipelineHooks.every((h) => h.token === "hook-secret")).toBe(true);
  });

  it("gives a failing job's trace tail as GitLab's job page shows it: no colours, no section markers, no progress redraws", async () => {
    const pr = await open("overseer/pr/G-2", { "src/g2.ts": "export const g = 2;\n" });
    const trace = [
      `${ESC}[0Ksection_start:1700000000:prepare_script[collapsed=true]\r${ESC}[0K${ESC}[36;1mPreparing environment${ESC}[0;m`,
      "Downloading 10%\rDownloading 60%\rDownloading 100%",
      `${ESC}[0Ksection_end:1700000001:prepare_script\r${ESC}[0K`,
      `${ESC}[32;1m$ npm test${ESC}[0;m`,
      `${ESC}[31mFAIL${ESC}[0m src/g2.test.ts`,
      "expected g to be 3, got 2",
      `${ESC}[31;1mERROR: Job failed: exit code 1${ESC}[0;m`,
      "",
    ].join("\n");
    const { jobIds } = forge.setPipeline(PROJECT, pr.headSha, [
      { name: "test", status: "failed", log: trace },
    ]);
    const [check] = await adapter().listChecks(pr.headSha);
    expect(check).toMatchObject({ name: "test", conclusion: "failure", jobId: jobIds[0] });
    const tail = await adapter().failingLogTail(check!, 4096);
    expect(tail).toBe(
      [
        "Preparing environment",
        "Downloading 100%",
        "",
        "$ npm test",
        "FAIL src/g2.test.ts",
        "expected g to be 3, got 2",
        "ERROR: Job failed: exit code 1",
        "",
      ].join("\n"),
    );
    expect(traceTail(trace, 40)).toBe("ERROR: Job failed: exit code 1\n");
  });

  it("puts each verdict on the head it was given on (system notes and diff versions), never on a later push", async () => {
    const pr = await open("overseer/pr/G-3", { "src/g3.ts": "export const g = 3;\n" });
    await forge.review(PROJECT, pr.number, "carol", "requested_changes");
    await forge.approve(PROJECT, pr.number, "dave");
    const counter = new ForgeCallCounter();
    const first = await adapter(counter).listReviews(pr.number);
    expect(first.map((r) => [r.author, r.verdict, r.commitSha])).toEqual([
      ["dave", "approved", pr.headSha],
      ["carol", "changes_requested", pr.headSha],
    ]);
    expect(first.every((r) => r.submittedAt !== null)).toBe(true);
    // Approvals, reviewers, the notes (when) and the versions (which head then).
    expect(counter.snapshot()).toEqual({ listReviews: 4 });
    // The fix is pushed; GitLab keeps carol's state and dave's approval, but both were given on the old head.
    const fixed = await clone.commitAndPush(pr.head, { "src/g3.ts": "export const g = 33;\n" }, "fix");
    expect((await adapter().getPullRequest(pr.number)).headSha).toBe(fixed);
    const stale = await adapter().listReviews(pr.number);
    expect(stale.map((r) => [r.author, r.commitSha])).toEqual([
      ["dave", pr.headSha],
      ["carol", pr.headSha],
    ]);
    // carol approves the fix: her approval is on the new head.
    await forge.review(PROJECT, pr.number, "carol", "approved");
    const now = await adapter().listReviews(pr.number);
    expect(now.map((r) => [r.author, r.verdict, r.commitSha])).toEqual([
      ["dave", "approved", pr.headSha],
      ["carol", "approved", fixed],
    ]);
    // No verdict: no notes or versions read.
    const quiet = await open("overseer/pr/G-4", { "src/g4.ts": "export const g = 4;\n" });
    const none = new ForgeCallCounter();
    expect(await adapter(none).listReviews(quiet.number)).toEqual([]);
    expect(none.snapshot()).toEqual({ listReviews: 2 });
  });

  it("reads resolvable threads on the diff and on the merge request, and answers them through the API", async () => {
    const pr = await open("overseer/pr/G-5", { "src/g5.ts": "export const g = 5;\n" });
    const inline = forge.comment(PROJECT, pr.number, {
      username: "carol",
      path: "src/g5.ts",
      line: 1,
      body: "Name the constant.",
    });
    const general = forge.comment(PROJECT, pr.number, {
      username: "carol",
      path: null,
      line: null,
      body: "Also add a changelog entry.",
    });
    forge.note(PROJECT, pr.number, "carol", "@overseer-bot thanks");
    const gitlab = adapter();
    const threads = await gitlab.listReviewThreads(pr.number);
    expect(threads.map((t) => [t.id, t.path, t.line, t.resolved, t.comments.map((c) => c.body)])).toEqual([
      [inline, "src/g5.ts", 1, false, ["Name the constant."]],
      [general, "", null, false, ["Also add a changelog entry."]],
    ]);
    // Thread notes are not conversation comments; the plain note is.
    const comments = await gitlab.readComments(pr.number, null);
    expect(comments.changed && comments.value.map((c) => c.body)).toEqual(["@overseer-bot thanks"]);
    for (const thread of threads) await gitlab.replyToThread(pr.number, thread, "Done in abc123.");
    await gitlab.addComment(pr.number, "Overseer pushed abc123.");
    const answered = await gitlab.listReviewThreads(pr.number);
    expect(answered.map((t) => t.comments.map((c) => [c.author, c.body]))).toEqual([
      [
        ["carol", "Name the constant."],
        ["overseer-bot", "Done in abc123."],
      ],
      [
        ["carol", "Also add a changelog entry."],
        ["overseer-bot", "Done in abc123."],
      ],
    ]);
    const after = await gitlab.readComments(pr.number, null);
    expect(after.changed && after.value.map((c) => [c.author, c.body])).toEqual([
      ["carol", "@overseer-bot thanks"],
      ["overseer-bot", "Overseer pushed abc123."],
    ]);
    forge.reply(PROJECT, inline, "carol", "Thanks.", true);
    expect((await gitlab.listReviewThreads(pr.number)).map((t) => t.resolved)).toEqual([true, false]);
    await forge.flushWebhooks();
    const notes = received
      .filter((r) => r.event === "Note Hook")
      .map(
        (r) =>
          r.body as {
            object_kind: string;
            object_attributes: { note: string; noteable_type: string; type: string | null };
            merge_request: { iid: number; source_branch: string };
          },
      )
      .filter((b) => b.merge_request.iid === pr.number);
    expect(notes.map((n) => [n.object_attributes.note, n.object_attributes.type])).toEqual([
      ["Name the constant.", "DiffNote"],
      ["Also add a changelog entry.", "DiscussionNote"],
      ["@overseer-bot thanks", null],
      ["Thanks.", "DiffNote"],
    ]);
    expect(notes.every((n) => n.object_kind === "note" && n.merge_request.source_branch === pr.head)).toBe(
      true,
    );
  });

  it("merges with a merge commit or squash; rebase is refused with what to set on GitLab; auto-merge waits for the pipeline", async () => {
    const pr = await open("overseer/pr/G-6", { "src/g6.ts": "export const g = 6;\n" });
    const refused = await adapter().merge(pr.number, { method: "rebase", sha: pr.headSha });
    expect(refused.kind).toBe("refused");
    expect((refused as { reason: string }).reason).toContain("merge_method to merge or squash");
    const { jobIds } = forge.setPipeline(PROJECT, pr.headSha, [{ name: "test", status: "running" }]);
    const queued = await adapter().enableAutoMerge(pr.number, { method: "merge", sha: pr.headSha });
    expect(queued).toEqual({ kind: "queued" });
    const put = forge.requests
      .filter((r) => r.method === "PUT" && r.path.endsWith(`/${pr.number}/merge`))
      .at(-1);
    expect(put?.status).toBe(200);
    forge.setJob(PROJECT, jobIds[0] ?? 0, "success");
    await forge.settleAutoMerge(PROJECT);
    const merged = await adapter().getPullRequest(pr.number);
    expect(merged.status).toBe("merged");
    const parents = await forge.git.git(PROJECT, ["log", "-1", "--format=%P", "main"]);
    expect(parents.split(" ")).toHaveLength(2);
  });
});
