/**
 * One rate limit per token per process: adapters are made per forge job, so what the forge
 * says about a token's rate limit (Retry-After, x-ratelimit-reset) must hold every adapter of
 * that token, not only the one that was told. Against the GitHub and GitLab doubles, which
 * answer rate limits with the headers each forge documents.
 */
import { GitHubDouble, GitLabDouble } from "@overseer/test-support";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ForgeRateGate, rateGateFor, rateLimitWaitMs, requestResource } from "../src/forge-rate-gate.ts";
import { createForgeAdapter, ForgeCallCounter, ForgeError } from "../src/index.ts";

const REPO = "acme/gate";
const BOT = { login: "overseer-bot", token: "ghp_gate_bot" };
const OTHER = { login: "other-bot", token: "ghp_gate_other" };

let github: GitHubDouble;
let gitlab: GitLabDouble;

beforeAll(async () => {
  github = await GitHubDouble.start();
  github.addUser(BOT);
  github.addUser(OTHER);
  await github.createRepository(REPO, { "README.md": "# gate\n" });
  await github.git.git(REPO, ["branch", "overseer/pr/G-1", "main"]);
  await github.git.commitFiles(REPO, "overseer/pr/G-1", { "a.txt": "a\n" }, "G-1");
  gitlab = await GitLabDouble.start();
  gitlab.addUser({ username: "overseer-bot", token: "glpat-gate", accessLevel: 40 });
  await gitlab.createProject("acme/gate", { "README.md": "# gate\n" });
}, 60_000);

afterAll(async () => {
  await github?.close();
  await gitlab?.close();
});

function githubAdapter(token: string, counter = new ForgeCallCounter()) {
  return createForgeAdapter({
    forge: "github",
    url: github.url,
    repository: REPO,
    auth: { kind: "token", token },
    counter,
    retry: { baseDelayMs: 20 },
  });
}

const answer = (status: number, headers: Record<string, string>) => new Response(null, { status, headers });

describe("rate limits shared per (forge, token) in the process", () => {
  it("reads the wait GitHub and GitLab ask for: Retry-After, or the reset of an exhausted window", () => {
    const now = 1_700_000_000_000;
    expect(rateLimitWaitMs(answer(429, { "retry-after": "3" }), now)).toBe(3000);
    expect(rateLimitWaitMs(answer(403, { "retry-after": new Date(now + 5000).toUTCString() }), now)).toBe(
      5000,
    );
    const reset = String(now / 1000 + 10);
    expect(
      rateLimitWaitMs(answer(403, { "x-ratelimit-remaining": "0", "x-ratelimit-reset": reset }), now),
    ).toBe(11_000);
    // The last call of the window succeeded: the next one would be refused, so wait too.
    expect(rateLimitWaitMs(answer(200, { "ratelimit-remaining": "0", "ratelimit-reset": reset }), now)).toBe(
      11_000,
    );
    expect(
      rateLimitWaitMs(answer(200, { "x-ratelimit-remaining": "12", "x-ratelimit-reset": reset }), now),
    ).toBe(null);
    expect(rateLimitWaitMs(answer(500, {}), now)).toBe(null);
    expect(rateLimitWaitMs(answer(403, {}), now)).toBe(null);
  });

  it("a gate holding longer than the caller may wait answers at once with the time left", async () => {
    const gate = new ForgeRateGate();
    gate.observe(answer(429, { "retry-after": "30" }));
    expect(gate.heldUntil).toBeGreaterThan(Date.now() + 25_000);
    const left = await gate.pass(1000);
    expect(left).toBeGreaterThan(25_000);
    expect(await new ForgeRateGate().pass(1000)).toBe(0);
  });

  it("an exhausted GitHub window holds only its own resource (REST, GraphQL, search); a Retry-After holds all", async () => {
    const reset = String(Math.ceil(Date.now() / 1000) + 30);
    const gate = new ForgeRateGate();
    gate.observe(
      answer(200, {
        "x-ratelimit-remaining": "0",
        "x-ratelimit-reset": reset,
        "x-ratelimit-resource": "core",
      }),
    );
    expect(
      await gate.pass(1000, requestResource("https://ghe.test/api/v3/repos/o/r/pulls/1")),
    ).toBeGreaterThan(25_000);
    expect(await gate.pass(1000, requestResource("https://ghe.test/api/graphql"))).toBe(0);
    expect(await gate.pass(1000, requestResource("https://api.github.com/search/issues?q=x"))).toBe(0);
    // A secondary limit (Retry-After) is about every request of the token.
    gate.observe(answer(403, { "retry-after": "20", "x-ratelimit-resource": "graphql" }));
    expect(await gate.pass(1000, "graphql")).toBeGreaterThan(15_000);
    expect(await gate.pass(1000, "search")).toBeGreaterThan(15_000);
    // GitLab and Gitea name no resource: their one window holds everything.
    const single = new ForgeRateGate();
    single.observe(answer(429, { "ratelimit-remaining": "0", "ratelimit-reset": reset }));
    expect(await single.pass(1000, "graphql")).toBeGreaterThan(25_000);
  });

  it("GitHub: a Retry-After told to one job's adapter holds every adapter of the token, and only of that token", async () => {
    const opened = await githubAdapter(BOT.token).ensurePullRequest({
      head: "overseer/pr/G-1",
      base: "main",
      title: "G-1",
      body: "Gate.",
      marker: "task:G-1",
    });
    const number = opened.pullRequest.number;
    const pullPath = `/api/v3/repos/${REPO}/pulls/${number}`;
    github.fail({ status: 429, retryAfter: 2, matching: new RegExp(`^GET ${pullPath}$`) });
    const before = github.requests.length;
    const first = githubAdapter(BOT.token).getPullRequest(number);
    // The second job's adapter starts once the first has been told to wait.
    const deadline = Date.now() + 30_000;
    while (!github.requests.slice(before).some((r) => r.status === 429)) {
      if (Date.now() > deadline) throw new Error("the rate limit was never answered");
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const limitedAt = github.requests.slice(before).find((r) => r.status === 429)?.at ?? 0;
    const counter = new ForgeCallCounter();
    const held = "0".repeat(40);
    const second = githubAdapter(BOT.token, counter).listChecks(held);
    // Another token of the same forge is not held.
    expect(rateGateFor(`github:${github.url}/api/v3`, OTHER.token).heldUntil).toBe(0);
    await githubAdapter(OTHER.token).listChecks("1".repeat(40));
    expect((await first).number).toBe(number);
    await second;
    const after = github.requests.slice(before);
    const botChecks = after.filter((r) => r.path.includes(`/commits/${held}/`));
    const botPull = after.filter((r) => r.path === pullPath && r.status === 200);
    expect(botChecks.length).toBeGreaterThan(0);
    expect(botPull).toHaveLength(1);
    // Nothing of the held token reached GitHub before the 2 s it asked for were over.
    for (const r of [...botChecks, ...botPull]) expect(r.at).toBeGreaterThanOrEqual(limitedAt + 1900);
    // Held requests were never sent, so they cost nothing: one request per read of the checks.
    expect(counter.total).toBe(botChecks.length);
    expect(github.takeViolations()).toEqual([]);
  }, 60_000);

  it("GitLab: a token held longer than the adapter may wait fails at once as rate_limited, spending no call", async () => {
    const token = "glpat-gate";
    const adapter = (counter: ForgeCallCounter) =>
      createForgeAdapter({
        forge: "gitlab",
        url: gitlab.url,
        repository: "acme/gate",
        auth: { kind: "token", token },
        counter,
        retry: { baseDelayMs: 20, maxDelayMs: 1000, retries: 1 },
      });
    gitlab.fail({
      status: 429,
      rateLimitResetSeconds: 30,
      matching: /^GET \/api\/v4\/projects\/[^/]+\/merge_requests/,
    });
    const firstCalls = new ForgeCallCounter();
    const first = await adapter(firstCalls)
      .findPullRequest("overseer/pr/G-2", "task:G-2")
      .catch((e: unknown) => e);
    expect(first).toBeInstanceOf(ForgeError);
    expect((first as ForgeError).code).toBe("rate_limited");
    expect(firstCalls.total).toBe(1);
    const before = gitlab.requests.length;
    const secondCalls = new ForgeCallCounter();
    const second = await adapter(secondCalls)
      .findPullRequest("overseer/pr/G-2", "task:G-2")
      .catch((e: unknown) => e);
    expect((second as ForgeError).code).toBe("rate_limited");
    expect(gitlab.requests.length).toBe(before);
    expect(secondCalls.total).toBe(0);
    gitlab.clearFaults();
    expect(gitlab.takeViolations()).toEqual([]);
  }, 60_000);
});
