import { gitlabIssueWebhook } from "./gitlab-issue-webhook.ts";
import { GitLabIssuesAdapter } from "./gitlab-issues-adapter.ts";
import type { TrackerRegistration } from "./tracker-adapter.ts";

/** GitLab issues: gitbeaker, `X-Gitlab-Token` webhooks. */
export const gitlabRegistration: TrackerRegistration = {
  kind: "gitlab",
  create: (connection) => new GitLabIssuesAdapter(connection),
  webhook: gitlabIssueWebhook,
};
