// A GitHub App instead of a token, against the GitHub double: the adapter signs the App's JWT,
// mints an installation token (shared by the adapters of the process), acts as `<slug>[bot]`,
// and a key that is not the App's is refused.
import { generateKeyPairSync } from "node:crypto";
import { GitHubDouble } from "@overseer/test-support";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createForgeAdapter, ForgeCallCounter, ForgeError } from "../src/index.ts";
import { cloneScratch, type ScratchClone } from "./scratch-clone.ts";

const REPO = "acme/app";
const APP = { id: 4242, slug: "overseer-app", installationId: 777 };

let forge: GitHubDouble;
let clone: ScratchClone;
let privateKey: string;

function appAdapter(key = privateKey, installationId = APP.installationId, counter = new ForgeCallCounter()) {
  return createForgeAdapter({
    forge: "github",
    url: forge.url,
    repository: REPO,
    auth: { kind: "app", appId: APP.id, installationId, privateKey: key },
    counter,
    retry: { baseDelayMs: 20 },
    // Writes unpaced (OVERSEER_GITHUB_WRITE_INTERVAL_MS=0): pacing is github-write-pacing.test.ts's.
    githubWriteIntervalMs: 0,
  });
}

beforeAll(async () => {
  forge = await GitHubDouble.start();
  privateKey = forge.addApp(APP);
  await forge.createRepository(REPO, { "README.md": "# app\n" });
  await forge.protectBranch(REPO, ["main"]);
  clone = await cloneScratch(forge.cloneUrl(REPO));
}, 60_000);

afterAll(async () => {
  await clone?.remove();
  await forge?.close();
});

afterEach(() => {
  expect(forge.takeViolations()).toEqual([]);
});

describe("GitHub adapter authenticated as a GitHub App installation", () => {
  it("has every right as <slug>[bot], opens pull requests as it, and mints one token for the process", async () => {
    const rights = await appAdapter().checkTokenRights();
    expect(rights).toMatchObject({ login: "overseer-app[bot]", missing: [] });
    await clone.commitAndPush("overseer/pr/T-1", { "a.txt": "a\n" }, "T-1");
    const counter = new ForgeCallCounter();
    const { pullRequest, outcome } = await appAdapter(
      privateKey,
      APP.installationId,
      counter,
    ).ensurePullRequest({
      head: "overseer/pr/T-1",
      base: "main",
      title: "T-1: a",
      body: "Adds a.",
      marker: "task:T-1",
      labels: [],
    });
    expect(outcome).toBe("created");
    expect(forge.pulls(REPO).find((p) => p.number === pullRequest.number)?.author).toBe("overseer-app[bot]");
    // Adapters are made per job: the second one reused the first one's installation token.
    expect(forge.appTokens).toHaveLength(1);
  });

  it("is refused with a key that is not the App's, or an installation that is not its own", async () => {
    const { privateKey: stranger } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const wrongKey = stranger.export({ type: "pkcs1", format: "pem" }).toString();
    const refused = await appAdapter(wrongKey)
      .checkTokenRights()
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ForgeError);
    expect((refused as ForgeError).code).toBe("unauthorized");
    const elsewhere = await appAdapter(privateKey, 999)
      .ensurePullRequest({
        head: "overseer/pr/T-9",
        base: "main",
        title: "x",
        body: "x",
        marker: "task:T-9",
        labels: [],
      })
      .catch((error: unknown) => error);
    expect(elsewhere).toBeInstanceOf(Error);
    expect(forge.appTokens).toHaveLength(1);
  });
});
