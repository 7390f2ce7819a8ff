import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

/**
 * The tracker, forge and chat SDKs and Bull Board are loaded on first use (dynamic `import()`),
 * never by importing the modules the services are built from: together they were ~30 MB of the
 * gateway's heap (module source and compiled code) that every Mark-Compact GC marked, whether
 * or not any project used Linear, Jira, GitLab or Slack, or anyone opened the queue board.
 * A fresh Node process imports the services' entry modules with a resolve hook recording every
 * URL it resolves; none may be one of these SDKs.
 */
const ROOT = path.resolve(import.meta.dirname, "../..");
const HOOK = pathToFileURL(path.join(import.meta.dirname, "support/record-resolved-urls.mjs")).href;
const ENTRIES = [
  "@overseer/intake",
  "@overseer/forge",
  "@overseer/notify",
  pathToFileURL(path.join(ROOT, "services/gateway/src/gateway-app.ts")).href,
];
const LAZY_SDK = /\/node_modules\/(@linear\/sdk|jira\.js|@gitbeaker|@slack|@bull-board)\//;
/**
 * Linear's webhook signature check (`@linear/sdk/webhooks`, 10 KB, node:crypto only) is a
 * separate entry of the SDK and stays static: `TrackerWebhookVerifier.verify` is synchronous.
 */
const ALLOWED = /\/node_modules\/@linear\/sdk\/dist\/webhooks/;

const scratch = mkdtempSync(path.join(tmpdir(), "overseer-lazy-sdk-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function resolvedUrls(entries: readonly string[]): string[] {
  const file = path.join(scratch, "resolved.txt");
  rmSync(file, { force: true });
  const script = [
    'import { register } from "node:module";',
    `register(${JSON.stringify(HOOK)}, { data: { file: ${JSON.stringify(file)} } });`,
    `for (const entry of ${JSON.stringify(entries)}) await import(entry);`,
  ].join("\n");
  execFileSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
    cwd: ROOT,
    stdio: ["ignore", "ignore", "inherit"],
  });
  return readFileSync(file, "utf8").split("\n").filter(Boolean);
}

describe("SDKs loaded on first use", () => {
  it("importing the services' entry modules loads no Linear, Jira, GitLab, Slack or Bull Board code", () => {
    const urls = resolvedUrls(ENTRIES);
    // The hook saw the imports at all: the workspace's own modules are among the URLs.
    expect(urls.some((url) => url.endsWith("/packages/intake/src/index.ts"))).toBe(true);
    expect(urls.filter((url) => LAZY_SDK.test(url) && !ALLOWED.test(url))).toEqual([]);
  });

  it("the hook does see an SDK that is imported", () => {
    const urls = resolvedUrls(["jira.js"]);
    expect(urls.some((url) => LAZY_SDK.test(url))).toBe(true);
  });
});
