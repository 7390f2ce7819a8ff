/**
 * The webhook GitHub sends after a write through its REST API succeeded: which event and action
 * each route's write makes (a pull request opened, edited, merged or labelled; a comment or a
 * reply; an issue edited, closed, labelled or commented on).
 */

import type { DoubleIssue, GitHubDoubleState } from "./github-double-state.ts";
import type { GitHubWebhookEvents } from "./github-webhook-events.ts";

/** Sends the webhook of the write `login` made through `template` (with its path `params`). */
export async function hookWrite(
  state: GitHubDoubleState,
  hooks: GitHubWebhookEvents,
  template: string,
  params: Record<string, string>,
  login: string,
): Promise<void> {
  const repository = `${params.owner}/${params.repo}`;
  const repo = state.repos.get(repository);
  if (!repo) return;
  const number = Number(params.pull_number ?? params.issue_number);
  const issue = repo.issues.find((i) => i.number === number);
  if (issue) return hookIssueWrite(state, hooks, repository, template, issue, params, login);
  const pull =
    template === "/repos/{owner}/{repo}/pulls"
      ? repo.pulls.at(-1)
      : repo.pulls.find((p) => p.number === number);
  if (!pull) return;
  switch (template) {
    case "/repos/{owner}/{repo}/pulls":
      return hooks.pullRequest(repository, pull, "opened", login);
    case "/repos/{owner}/{repo}/pulls/{pull_number}":
      return hooks.pullRequest(repository, pull, pull.state === "closed" ? "closed" : "edited", login);
    case "/repos/{owner}/{repo}/pulls/{pull_number}/merge":
      return hooks.pullRequest(repository, pull, "closed", login);
    case "/repos/{owner}/{repo}/issues/{issue_number}/labels":
      return hooks.pullRequest(repository, pull, "labeled", login);
    case "/repos/{owner}/{repo}/issues/{issue_number}/comments": {
      const comment = repo.comments.at(-1);
      if (comment) await hooks.issueComment(repository, pull, comment);
      return;
    }
    case "/repos/{owner}/{repo}/pulls/{pull_number}/comments/{comment_id}/replies": {
      const thread = repo.threads.find(
        (t) => t.pull === number && t.comments[0]?.id === Number(params.comment_id),
      );
      const reply = thread?.comments.at(-1);
      if (thread && reply) await hooks.reviewComment(repository, pull, thread, reply);
      return;
    }
  }
}

/** The webhook of a write on an issue through the API. */
async function hookIssueWrite(
  state: GitHubDoubleState,
  hooks: GitHubWebhookEvents,
  repository: string,
  template: string,
  issue: DoubleIssue,
  params: Record<string, string>,
  login: string,
): Promise<void> {
  switch (template) {
    case "/repos/{owner}/{repo}/issues/{issue_number}":
      return hooks.issue(repository, issue, issue.state === "closed" ? "closed" : "edited", login);
    case "/repos/{owner}/{repo}/issues/{issue_number}/labels":
      return hooks.issue(repository, issue, "labeled", login, issue.labels.at(-1));
    case "/repos/{owner}/{repo}/issues/{issue_number}/labels/{name}":
      return hooks.issue(repository, issue, "unlabeled", login, decodeURIComponent(params.name ?? ""));
    case "/repos/{owner}/{repo}/issues/{issue_number}/comments": {
      const comment = state.repo(repository).comments.at(-1);
      if (comment) await hooks.commentOnIssue(repository, issue, comment);
      return;
    }
  }
}
