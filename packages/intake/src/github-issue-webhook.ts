/**
 * GitHub's webhook deliveries for intake: `X-Hub-Signature-256` is `sha256=` and the HMAC-SHA256
 * of the raw body under the webhook's secret (GitHub docs, "Validating webhook deliveries"),
 * compared in constant time. `issues` (any action) and `issue_comment` on an issue (not a pull
 * request) ask for a re-read of that issue; `ping` and everything else is nothing for intake.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { GitHubIssueHookSchema } from "./github-issue-schemas.ts";
import type { TrackerWebhookEvent, TrackerWebhookVerifier } from "./tracker-adapter.ts";

type Headers = Readonly<Record<string, string | undefined>>;

const header = (headers: Headers, name: string): string | undefined =>
  Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1];

export const githubIssueWebhook: TrackerWebhookVerifier = {
  kind: "github",
  verify(headers, rawBody, secret) {
    const given = header(headers, "x-hub-signature-256") ?? "";
    if (!given.startsWith("sha256=") || secret === "") return false;
    const expected = `sha256=${createHmac("sha256", secret).update(rawBody).digest("hex")}`;
    const a = Buffer.from(given);
    const b = Buffer.from(expected);
    return a.length === b.length && timingSafeEqual(a, b);
  },
  parse(headers, rawBody): TrackerWebhookEvent | null {
    const event = header(headers, "x-github-event");
    const deliveryId = header(headers, "x-github-delivery");
    if ((event !== "issues" && event !== "issue_comment") || !deliveryId) return null;
    let body: unknown;
    try {
      body = JSON.parse(rawBody);
    } catch {
      return null;
    }
    const parsed = GitHubIssueHookSchema.safeParse(body);
    if (!parsed.success || parsed.data.issue.pull_request !== undefined) return null;
    return {
      deliveryId,
      issueId: String(parsed.data.issue.number),
      what: event === "issues" ? "issue" : "comment",
    };
  },
};
