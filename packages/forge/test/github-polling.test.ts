import { type GitHubDouble as Double, GitHubDouble } from "@overseer/test-support";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createForgeAdapter, type ForgeAdapter, ForgeCallCounter } from "../src/index.ts";

const REPO = "acme/poll";
const BOT = { login: "overseer-bot", token: "ghp_overseer" };
const HUMAN = { login: "alice", token: "ghp_alice" };

let forge: Double;

function adapter(counter = new ForgeCallCounter()): ForgeAdapter {
  return createForgeAdapter({
    forge: "github",
    url: forge.url,
    repository: REPO,
    auth: { kind: "token", token: BOT.token },
    counter,
    retry: { baseDelayMs: 20 },
    // Writes unpaced (OVERSEER_GITHUB_WRITE_INTERVAL_MS=0): pacing is github-write-pacing.test.ts's.
    githubWriteIntervalMs: 0,
  });
}

async function openPull(task: string, files: Record<string, string>, base = "main") {
  const head = `overseer/pr/${task}`;
  if (base !== "main") await forge.git.commitFiles(REPO, base, { [`${base}.txt`]: "base\n" }, "base");
  const from = (await forge.git.resolve(REPO, `refs/heads/${base}`)) ?? "";
  await forge.git.git(REPO, ["update-ref", `refs/heads/${head}`, from]);
  await forge.git.commitFiles(REPO, head, files, task);
  const { pullRequest } = await adapter().ensurePullRequest({
    head,
    base,
    title: task,
    body: `Work of ${task}.`,
    marker: `task:${task}`,
  });
  return pullRequest;
}

beforeAll(async () => {
  forge = await GitHubDouble.start();
  forge.addUser(BOT);
  forge.addUser(HUMAN);
  await forge.createRepository(REPO, { "README.md": "# poll\n", "src/a.ts": "export const a = 1;\n" });
  await forge.protectBranch(REPO, ["main"], ["ci"]);
}, 60_000);

afterAll(async () => {
  await forge?.close();
});

afterEach(() => {
  expect(forge.takeViolations()).toEqual([]);
});

describe("GitHub adapter: conditional reads for polling (ETag, 304)", () => {
  it("reads a pull request again only when it changed, and counts the 304s apart", async () => {
    const pr = await openPull("P-1", { "src/p1.ts": "export const p = 1;\n" });
    const counter = new ForgeCallCounter();
    const github = adapter(counter);
    const first = await github.readPullRequest(pr.number, null);
    if (!first.changed) throw new Error("the first read must be a full one");
    expect(first.value).toMatchObject({ number: pr.number, status: "open", mergeable: true });
    expect(first.etag).toMatch(/^"/);
    expect(await github.readPullRequest(pr.number, first.etag)).toEqual({ changed: false });
    expect(counter.notModified).toBe(1);
    // A push to the head changes it.
    const sha = await forge.git.commitFiles(REPO, pr.head, { "src/p1.ts": "export const p = 2;\n" }, "more");
    const moved = await github.readPullRequest(pr.number, first.etag);
    expect(moved).toMatchObject({ changed: true, value: { headSha: sha } });
    expect(counter.snapshot()).toEqual({ readPullRequest: 3 });
  });

  it("reads checks (check runs and statuses, one validator for both) again only when either changed", async () => {
    const pr = await openPull("P-2", { "src/p2.ts": "export const p = 1;\n" });
    const counter = new ForgeCallCounter();
    const github = adapter(counter);
    const empty = await github.readChecks(pr.headSha, null);
    expect(empty).toMatchObject({ changed: true, value: [] });
    const tag = empty.changed ? empty.etag : null;
    expect(await github.readChecks(pr.headSha, tag)).toEqual({ changed: false });
    expect(counter.notModified).toBe(2);
    forge.setStatus(REPO, pr.headSha, { context: "lint", state: "pending" });
    const one = await github.readChecks(pr.headSha, tag);
    expect(one).toMatchObject({
      changed: true,
      value: [{ name: "lint", conclusion: "pending", source: "status" }],
    });
    forge.setCheckRun(REPO, pr.headSha, { name: "ci", conclusion: "failure" });
    const two = await github.readChecks(pr.headSha, one.changed ? one.etag : null);
    if (!two.changed) throw new Error("a new check run must show");
    expect(two.value.map((c) => [c.name, c.conclusion])).toEqual([
      ["ci", "failure"],
      ["lint", "pending"],
    ]);
    expect(await github.readChecks(pr.headSha, two.etag)).toEqual({ changed: false });
  });

  it("reads reviews and conversation comments again only when a person added one", async () => {
    const pr = await openPull("P-3", { "src/p3.ts": "export const p = 1;\n" });
    const github = adapter();
    const reviews = await github.readReviews(pr.number, null);
    const comments = await github.readComments(pr.number, null);
    expect(reviews).toMatchObject({ changed: true, value: [] });
    expect(comments).toMatchObject({ changed: true, value: [] });
    const reviewTag = reviews.changed ? reviews.etag : null;
    const commentTag = comments.changed ? comments.etag : null;
    expect(await github.readReviews(pr.number, reviewTag)).toEqual({ changed: false });
    expect(await github.readComments(pr.number, commentTag)).toEqual({ changed: false });
    await forge.review(REPO, pr.number, { login: HUMAN.login, state: "APPROVED" });
    forge.comment(REPO, pr.number, HUMAN.login, "@overseer-bot please also update the changelog");
    expect(await github.readReviews(pr.number, reviewTag)).toMatchObject({
      changed: true,
      value: [{ author: "alice", verdict: "approved" }],
    });
    expect(await github.readComments(pr.number, commentTag)).toMatchObject({
      changed: true,
      value: [{ author: "alice", body: "@overseer-bot please also update the changelog" }],
    });
  });

  it("says a pull request no longer merges once its base moved with a conflict", async () => {
    const pr = await openPull("P-4", { "src/a.ts": "export const a = 4;\n" });
    expect((await adapter().getPullRequest(pr.number)).mergeable).toBe(true);
    await forge.git.commitFiles(REPO, "main", { "src/a.ts": "export const a = 40;\n" }, "moved main");
    expect((await adapter().getPullRequest(pr.number)).mergeable).toBe(false);
  });

  it("retargets a stacked pull request onto main", async () => {
    const pr = await openPull("P-6", { "src/p6.ts": "export const p = 6;\n" }, "overseer/pr/P-5");
    expect(pr.base).toBe("overseer/pr/P-5");
    const moved = await adapter().setBase(pr.number, "main");
    expect(moved).toMatchObject({ number: pr.number, base: "main" });
    expect(forge.pulls(REPO).find((p) => p.number === pr.number)?.base).toBe("main");
  });
});
