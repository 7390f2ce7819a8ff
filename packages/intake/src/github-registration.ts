import { githubIssueWebhook } from "./github-issue-webhook.ts";
import { GitHubIssuesAdapter } from "./github-issues-adapter.ts";
import type { TrackerRegistration } from "./tracker-adapter.ts";

/** GitHub Issues: Octokit, `X-Hub-Signature-256` webhooks. */
export const githubRegistration: TrackerRegistration = {
  kind: "github",
  create: (connection) =>
    new GitHubIssuesAdapter(connection, { writeIntervalMs: connection.githubWriteIntervalMs }),
  webhook: githubIssueWebhook,
};
