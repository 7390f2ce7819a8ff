import { GitHubDouble } from "@overseer/test-support";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  createTrackerAdapter,
  sourceAdapterOf,
  type TrackerAdapter,
  trackerWebhookVerifier,
} from "../src/index.ts";

const REPO = "acme/app";
const BOT = { login: "overseer-bot", token: "ghp_overseer" };
const HUMAN = { login: "alice", token: "ghp_alice" };
const SECRET = "whsec-intake";

let forge: GitHubDouble;

const adapter = (token = BOT.token): TrackerAdapter =>
  // Writes unpaced (OVERSEER_GITHUB_WRITE_INTERVAL_MS=0): the pacing case below sets its own.
  createTrackerAdapter({
    kind: "github",
    container: REPO,
    baseUrl: forge.url,
    token,
    githubWriteIntervalMs: 0,
  });

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

  it("paces its writes as the host sets (OVERSEER_GITHUB_WRITE_INTERVAL_MS), not at all at 0", async () => {
    const source = {
      id: "src-pacing",
      kind: "github" as const,
      token_env: "PACING_TOKEN",
      base_url: forge.url,
    };
    const env = { PACING_TOKEN: BOT.token };
    /** When the label writes of four issues labelled at once reached the double. */
    const labelWrites = async (githubWriteIntervalMs: number): Promise<number[]> => {
      const github = sourceAdapterOf(source, REPO, env, { githubWriteIntervalMs });
      const numbers = [1, 2, 3, 4].map((i) => String(forge.openIssue(REPO, { title: `Paced ${i}` })));
      const from = forge.requests.length;
      await Promise.all(
        numbers.map((number) => github.setLabels(number, [`paced-${githubWriteIntervalMs}`], [])),
      );
      return forge.requests
        .slice(from)
        .filter((r) => r.method === "POST" && r.path.endsWith("/labels"))
        .map((r) => r.receivedAt)
        .sort((a, b) => a - b);
    };
    const span = (times: readonly number[]) => (times.at(-1) as number) - (times[0] as number);
    const paced = await labelWrites(200);
    expect(paced).toHaveLength(4);
    // Three gaps of at least 200 ms (arrivals a few ms either way of the sends).
    expect(span(paced)).toBeGreaterThanOrEqual(3 * 200 - 150);
    const unpaced = await labelWrites(0);
    expect(unpaced).toHaveLength(4);
    // Paced by default they would span 3 s.
    expect(span(unpaced)).toBeLessThan(1000);
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
