/**
 * GitLab's webhook deliveries for intake (doc/user/project/integrations/webhooks.md): GitLab
 * sends the webhook's secret token as it is in `X-Gitlab-Token` (no signature), compared here in
 * constant time; `X-Gitlab-Event-UUID` names the delivery. An `Issue Hook` (or its confidential
 * twin) asks for a re-read of its issue, a `Note Hook` on an issue for a read of its comments;
 * notes on merge requests, commits and snippets, and every other event, are nothing for intake.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { GitLabIssueHookSchema, GitLabNoteHookSchema } from "./gitlab-issue-schemas.ts";
import type { TrackerWebhookEvent, TrackerWebhookVerifier } from "./tracker-adapter.ts";

type Headers = Readonly<Record<string, string | undefined>>;

const header = (headers: Headers, name: string): string | undefined =>
  Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1];

const digest = (value: string) => createHash("sha256").update(value).digest();

export const gitlabIssueWebhook: TrackerWebhookVerifier = {
  kind: "gitlab",
  verify(headers, _rawBody, secret) {
    const given = header(headers, "x-gitlab-token");
    if (given === undefined || secret === "") return false;
    // Equal-length digests, so the comparison takes the same time whatever the token's length.
    return timingSafeEqual(digest(given), digest(secret));
  },
  parse(headers, rawBody): TrackerWebhookEvent | null {
    const event = header(headers, "x-gitlab-event");
    const deliveryId = header(headers, "x-gitlab-event-uuid");
    if (!deliveryId) return null;
    let body: unknown;
    try {
      body = JSON.parse(rawBody);
    } catch {
      return null;
    }
    if (event === "Issue Hook" || event === "Confidential Issue Hook") {
      const parsed = GitLabIssueHookSchema.safeParse(body);
      return parsed.success
        ? { deliveryId, issueId: String(parsed.data.object_attributes.iid), what: "issue" }
        : null;
    }
    if (event === "Note Hook" || event === "Confidential Note Hook") {
      const parsed = GitLabNoteHookSchema.safeParse(body);
      if (!parsed.success || parsed.data.object_attributes.noteable_type !== "Issue" || !parsed.data.issue)
        return null;
      return { deliveryId, issueId: String(parsed.data.issue.iid), what: "comment" };
    }
    return null;
  },
};
