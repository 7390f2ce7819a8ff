import { type GitHubDouble as Double, GitHubDouble } from "@overseer/test-support";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { githubWriteGroups } from "../src/github-write-pacing.ts";
import { createForgeAdapter, type ForgeAdapter } from "../src/index.ts";
import { cloneScratch, type ScratchClone } from "./scratch-clone.ts";

/**
 * OVERSEER_GITHUB_WRITE_INTERVAL_MS: how far apart the adapter sends writes, read from when they
 * reached the double. Each case has its own token: the pacing is per token (and interval), so
 * one case's writes never wait behind another's.
 */
const REPO = "acme/app";
let forge: Double;
let clone: ScratchClone;
let pull: number;
let users = 0;

function adapter(writeIntervalMs?: number, token = newToken()): ForgeAdapter {
  return createForgeAdapter({
    forge: "github",
    url: forge.url,
    repository: REPO,
    auth: { kind: "token", token },
    ...(writeIntervalMs === undefined ? {} : { githubWriteIntervalMs: writeIntervalMs }),
  });
}

function newToken(): string {
  users += 1;
  const token = `ghp_pacing_${users}`;
  forge.addUser({ login: `pacer-${users}`, token });
  return token;
}

/** When each `method` request to a path ending in `suffix` since `from` reached the double. */
function arrivedAt(from: number, method: string, suffix: string): number[] {
  return forge.requests
    .slice(from)
    .filter((request) => request.method === method && request.path.endsWith(suffix))
    .map((request) => request.receivedAt);
}

/**
 * Writes sent all at once (the same base set again, PATCH pulls/n), `count` through each adapter:
 * only the pacing spaces them out.
 */
async function setBaseTimes(adapters: readonly ForgeAdapter[], count: number): Promise<number[]> {
  // A read first: an adapter's first request sets Octokit up, which would hold its first write.
  await Promise.all(adapters.map((github) => github.getPullRequest(pull)));
  const from = forge.requests.length;
  await Promise.all(
    adapters.flatMap((github) => Array.from({ length: count }, () => github.setBase(pull, "main"))),
  );
  const times = arrivedAt(from, "PATCH", `/pulls/${pull}`).sort((a, b) => a - b);
  expect(times).toHaveLength(adapters.length * count);
  return times;
}

beforeAll(async () => {
  forge = await GitHubDouble.start();
  await forge.createRepository(REPO, { "README.md": "# app\n" });
  clone = await cloneScratch(forge.cloneUrl(REPO));
  await clone.commitAndPush("overseer/task/P-1", { "a.txt": "a\n" }, "P-1");
  const opened = await adapter(0).ensurePullRequest({
    head: "overseer/task/P-1",
    base: "main",
    title: "Task P-1",
    body: "Paced.",
    marker: "task:P-1",
    labels: [],
  });
  pull = opened.pullRequest.number;
}, 60_000);

afterAll(async () => {
  await clone?.remove();
  await forge?.close();
});

afterEach(() => {
  expect(forge.takeViolations()).toEqual([]);
});

/**
 * Writes `intervalMs` apart: Octokit lets them go at least that far apart. They reach the double
 * (in this process: its handling, and a busy host, can hold a send) up to ~100 ms either way
 * of that, so the span of them all is held to the interval, not each gap.
 */
function expectPaced(times: readonly number[], intervalMs: number): void {
  const span = (times.at(-1) as number) - (times[0] as number);
  expect(span).toBeGreaterThanOrEqual((times.length - 1) * intervalMs - 150);
}

describe("GitHub write pacing (OVERSEER_GITHUB_WRITE_INTERVAL_MS)", () => {
  it("sends writes at least a second apart by default, GitHub's guidance for github.com", async () => {
    expectPaced(await setBaseTimes([adapter()], 3), 1000);
  });

  it("sends them the configured interval apart, well within a second for a few", async () => {
    const times = await setBaseTimes([adapter(200)], 4);
    expectPaced(times, 200);
    expect((times.at(-1) as number) - (times[0] as number)).toBeLessThan(1000);
  });

  it("does not pace at 0 (an Enterprise Server with rate limits off)", async () => {
    const times = await setBaseTimes([adapter(0)], 5);
    // Paced by default they would span 4 s. Unpaced, only the double's handling (in this
    // process, so it holds the sends too) comes between them.
    expect((times.at(-1) as number) - (times[0] as number)).toBeLessThan(1000);
  });

  it("paces two adapters of one token together, as one", async () => {
    const token = newToken();
    // Each on its own would send its three at once.
    expectPaced(await setBaseTimes([adapter(200, token), adapter(200, token)], 3), 200);
  });

  it("paces writes that notify people (a comment) three intervals apart, as Octokit does", async () => {
    const github = adapter(100);
    const from = forge.requests.length;
    await Promise.all([0, 1, 2].map((i) => github.addComment(pull, `note ${i}`)));
    const times = arrivedAt(from, "POST", `/issues/${pull}/comments`).sort((a, b) => a - b);
    expect(times).toHaveLength(3);
    expectPaced(times, 300);
  });

  it("shares one pair of groups per interval in the process, as Octokit shares its own", () => {
    expect(githubWriteGroups(250)).toBe(githubWriteGroups(250));
    expect(githubWriteGroups(250).write).not.toBe(githubWriteGroups(251).write);
    expect(githubWriteGroups().write).toBe(githubWriteGroups(1000).write);
  });

  it("refuses an interval that is not a whole number of ms from 0, naming the setting", () => {
    expect(() => adapter(-1)).toThrow(/OVERSEER_GITHUB_WRITE_INTERVAL_MS/);
    expect(() => githubWriteGroups(1.5)).toThrow(/whole number of ms from 0/);
  });
});
