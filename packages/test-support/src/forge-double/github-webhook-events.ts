/**
 * What the GitHub double tells its webhooks, event by event, as GitHub does for the pull
 * request loop: `pull_request` (opened, edited, closed with `merged`, auto_merge_enabled),
 * `pull_request_review` (submitted), `pull_request_review_comment` (created: each inline
 * comment and reply), `issue_comment` (created, on a pull request or an issue), `issues`
 * (opened, edited, closed, labeled, assigned…), `check_run` (created / completed) and `status`. Each payload is a recorded example with the double's values laid over it and is
 * validated against the event's schema (github-webhook-payloads.ts).
 */
import type { GitHubBodies } from "./github-double-bodies.ts";
import type {
  CheckRun,
  DoubleIssue,
  DoublePull,
  GitHubDoubleState,
  IssueComment,
  RepoState,
  Review,
  Thread,
} from "./github-double-state.ts";
import { GitHubWebhookPayloads, overlay } from "./github-webhook-payloads.ts";

type Json = Record<string, unknown>;
export type SendWebhook = (event: string, payload: Json) => void;

export class GitHubWebhookEvents {
  readonly #payloads = GitHubWebhookPayloads.load();
  #last: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly state: GitHubDoubleState,
    private readonly bodies: GitHubBodies,
    private readonly send: SendWebhook,
    private readonly violations: string[],
  ) {}

  pullRequest(
    repository: string,
    pull: DoublePull,
    action: "opened" | "edited" | "closed" | "reopened" | "auto_merge_enabled" | "labeled",
    sender: string,
  ): Promise<void> {
    return this.#inOrder(async () => {
      const fields = await this.#pullFields(repository, pull, true);
      const extra: Json = {};
      if (action === "labeled") {
        const label = pull.labels.at(-1);
        if (label !== undefined) extra.label = this.#label(label);
      }
      if (action === "edited") extra.changes = {};
      if (action === "auto_merge_enabled") extra.reason = "enabled by the API";
      return [
        "pull_request",
        action,
        {
          action,
          number: pull.number,
          pull_request: fields,
          ...extra,
          ...this.#around(repository, sender),
        },
      ];
    });
  }

  review(repository: string, pull: DoublePull, review: Review): Promise<void> {
    return this.#inOrder(async () => [
      "pull_request_review",
      "submitted",
      {
        action: "submitted",
        review: {
          id: review.id,
          node_id: `PRR_${review.id}`,
          user: this.#user(review.login),
          body: review.body === "" ? null : review.body,
          commit_id: review.commitId,
          submitted_at: review.submittedAt,
          state: review.state.toLowerCase(),
          html_url: `${this.bodies.url}/${repository}/pull/${pull.number}#pullrequestreview-${review.id}`,
          pull_request_url: `${this.#api(repository)}/pulls/${pull.number}`,
          author_association: "MEMBER",
        },
        pull_request: await this.#pullFields(repository, pull),
        ...this.#around(repository, review.login),
      },
    ]);
  }

  /** An inline comment: the thread's first (a new thread) or a reply (`in_reply_to_id`). */
  reviewComment(
    repository: string,
    pull: DoublePull,
    thread: Thread,
    comment: Thread["comments"][number],
  ): Promise<void> {
    return this.#inOrder(async () => {
      const first = thread.comments[0];
      const headSha = await this.state.headSha(repository, pull);
      return [
        "pull_request_review_comment",
        "created",
        {
          action: "created",
          comment: {
            id: comment.id,
            node_id: `PRRC_${comment.id}`,
            url: `${this.#api(repository)}/pulls/comments/${comment.id}`,
            pull_request_review_id: comment.id,
            start_line: null,
            original_start_line: null,
            start_side: null,
            side: "RIGHT",
            diff_hunk: "@@ -1 +1 @@",
            path: thread.path,
            position: thread.line,
            original_position: thread.line,
            line: thread.line,
            original_line: thread.line,
            commit_id: headSha,
            original_commit_id: headSha,
            user: this.#user(comment.login),
            body: comment.body,
            created_at: comment.createdAt,
            updated_at: comment.createdAt,
            html_url: `${this.bodies.url}/${repository}/pull/${pull.number}#discussion_r${comment.id}`,
            pull_request_url: `${this.#api(repository)}/pulls/${pull.number}`,
            author_association: "MEMBER",
            reactions: this.#reactions(`${this.#api(repository)}/pulls/comments/${comment.id}`),
            ...(first && first.id !== comment.id ? { in_reply_to_id: first.id } : {}),
          },
          pull_request: await this.#pullFields(repository, pull),
          ...this.#around(repository, comment.login),
        },
      ];
    });
  }

  issueComment(repository: string, pull: DoublePull, comment: IssueComment): Promise<void> {
    const issueUrl = `${this.#api(repository)}/issues/${pull.number}`;
    const fields: Json = {
      action: "created",
      issue: {
        url: issueUrl,
        html_url: `${this.bodies.url}/${repository}/pull/${pull.number}`,
        id: Number(pull.nodeId.slice(3)),
        node_id: pull.nodeId,
        number: pull.number,
        title: pull.title,
        user: this.#user(pull.author),
        labels: pull.labels.map((name) => this.#label(name)),
        state: pull.state,
        locked: false,
        assignee: null,
        assignees: [],
        milestone: null,
        comments: this.#repo(repository).comments.filter((c) => c.issue === pull.number).length,
        created_at: pull.createdAt,
        updated_at: pull.updatedAt,
        closed_at: pull.state === "closed" ? pull.updatedAt : null,
        body: pull.body,
        active_lock_reason: null,
        reactions: this.#reactions(`${issueUrl}/reactions`),
        pull_request: {
          url: `${this.#api(repository)}/pulls/${pull.number}`,
          html_url: `${this.bodies.url}/${repository}/pull/${pull.number}`,
          diff_url: `${this.bodies.url}/${repository}/pull/${pull.number}.diff`,
          patch_url: `${this.bodies.url}/${repository}/pull/${pull.number}.patch`,
        },
      },
      comment: {
        id: comment.id,
        node_id: `IC_${comment.id}`,
        url: `${this.#api(repository)}/issues/comments/${comment.id}`,
        html_url: `${this.bodies.url}/${repository}/pull/${pull.number}#issuecomment-${comment.id}`,
        issue_url: issueUrl,
        user: this.#user(comment.login),
        body: comment.body,
        created_at: comment.createdAt,
        updated_at: comment.createdAt,
        author_association: "MEMBER",
        performed_via_github_app: null,
        reactions: this.#reactions(`${this.#api(repository)}/issues/comments/${comment.id}/reactions`),
      },
      ...this.#around(repository, comment.login),
    };
    return this.#inOrder(async () => ["issue_comment", "created", fields]);
  }

  /** An `issues` event: an issue opened, edited, closed, reopened, (un)labeled or (un)assigned. */
  issue(
    repository: string,
    issue: DoubleIssue,
    action: "opened" | "edited" | "closed" | "reopened" | "labeled" | "unlabeled" | "assigned" | "unassigned",
    sender: string,
    label?: string,
  ): Promise<void> {
    const extra: Json = {};
    if (label !== undefined) extra.label = this.#label(label);
    if (action === "edited") extra.changes = {};
    if (action === "assigned" || action === "unassigned")
      extra.assignee = issue.assignees[0] ? this.#user(issue.assignees[0]) : null;
    return this.#inOrder(async () => [
      "issues",
      action,
      { action, issue: this.#issueFields(repository, issue), ...extra, ...this.#around(repository, sender) },
    ]);
  }

  /** A comment on an issue's conversation (`issue_comment` without `pull_request`). */
  commentOnIssue(repository: string, issue: DoubleIssue, comment: IssueComment): Promise<void> {
    const page = `${this.bodies.url}/${repository}/issues/${issue.number}`;
    return this.#inOrder(async () => [
      "issue_comment",
      "created",
      {
        action: "created",
        issue: this.#issueFields(repository, issue),
        comment: {
          id: comment.id,
          node_id: `IC_${comment.id}`,
          url: `${this.#api(repository)}/issues/comments/${comment.id}`,
          html_url: `${page}#issuecomment-${comment.id}`,
          issue_url: `${this.#api(repository)}/issues/${issue.number}`,
          user: this.#user(comment.login),
          body: comment.body,
          created_at: comment.createdAt,
          updated_at: comment.createdAt,
          author_association: "MEMBER",
          performed_via_github_app: null,
          reactions: this.#reactions(`${this.#api(repository)}/issues/comments/${comment.id}/reactions`),
        },
        ...this.#around(repository, comment.login),
      },
    ]);
  }

  #issueFields(repository: string, issue: DoubleIssue): Json {
    const url = `${this.#api(repository)}/issues/${issue.number}`;
    return {
      url,
      repository_url: this.#api(repository),
      labels_url: `${url}/labels{/name}`,
      comments_url: `${url}/comments`,
      events_url: `${url}/events`,
      html_url: `${this.bodies.url}/${repository}/issues/${issue.number}`,
      id: issue.number * 7919,
      node_id: `I_${issue.number}`,
      number: issue.number,
      title: issue.title,
      user: this.#user(issue.author),
      labels: issue.labels.map((name) => this.#label(name)),
      state: issue.state,
      state_reason: issue.stateReason,
      locked: false,
      assignee: issue.assignees[0] ? this.#user(issue.assignees[0]) : null,
      assignees: issue.assignees.map((login) => this.#user(login)),
      milestone: null,
      comments: this.#repo(repository).comments.filter((c) => c.issue === issue.number).length,
      created_at: issue.createdAt,
      updated_at: issue.updatedAt,
      closed_at: issue.closedAt,
      body: issue.body,
      active_lock_reason: null,
      author_association: "MEMBER",
      reactions: this.#reactions(`${url}/reactions`),
    };
  }

  /** A check run reported on a sha: `created` while it runs, `completed` once it concluded. */
  checkRun(repository: string, run: CheckRun): Promise<void> {
    return this.#inOrder(async () => {
      const action = run.status === "completed" ? "completed" : "created";
      const now = new Date().toISOString();
      const pulls = await this.#pullsAt(repository, run.sha);
      const suiteId = run.id + 1_000_000;
      return [
        "check_run",
        action,
        {
          action,
          check_run: {
            id: run.id,
            node_id: `CR_${run.id}`,
            name: run.name,
            head_sha: run.sha,
            external_id: "",
            url: `${this.#api(repository)}/check-runs/${run.id}`,
            html_url: `${this.bodies.url}/${repository}/runs/${run.id}`,
            details_url: `${this.bodies.url}/${repository}/actions/runs/${run.id}/job/${run.id}`,
            status: run.status,
            conclusion: run.conclusion,
            started_at: now,
            completed_at: run.status === "completed" ? now : null,
            check_suite: {
              id: suiteId,
              node_id: `CS_${suiteId}`,
              head_branch: pulls[0]?.head ?? null,
              head_sha: run.sha,
              status: run.status,
              conclusion: run.conclusion,
              url: `${this.#api(repository)}/check-suites/${suiteId}`,
              pull_requests: pulls.map((p) => this.#pullRef(repository, p, run.sha)),
            },
            pull_requests: pulls.map((p) => this.#pullRef(repository, p, run.sha)),
          },
          ...this.#around(repository, "github-actions[bot]"),
        },
      ];
    });
  }

  status(repository: string, status: RepoState["statuses"][number]): Promise<void> {
    const fields: Json = {
      id: status.id,
      sha: status.sha,
      name: repository,
      target_url: status.targetUrl,
      context: status.context,
      description: null,
      state: status.state,
      commit: {
        sha: status.sha,
        node_id: `C_${status.sha}`,
        url: `${this.#api(repository)}/commits/${status.sha}`,
        html_url: `${this.bodies.url}/${repository}/commit/${status.sha}`,
        comments_url: `${this.#api(repository)}/commits/${status.sha}/comments`,
      },
      branches: [],
      created_at: status.createdAt,
      updated_at: status.createdAt,
      ...this.#around(repository, "github-actions[bot]"),
    };
    return this.#inOrder(async () => ["status", null, fields]);
  }

  /**
   * Builds a delivery now (so it describes the state of the moment) and sends it after every
   * delivery asked for before it, so deliveries leave in the order things happened.
   */
  #inOrder(build: () => Promise<[event: string, action: string | null, fields: Json]>): Promise<void> {
    const built = build();
    const sent = Promise.all([built, this.#last]).then(([[event, action, fields]]) =>
      this.#emit(event, action, fields),
    );
    this.#last = sent.catch(() => undefined);
    return sent;
  }

  #emit(event: string, action: string | null, fields: Json): void {
    // issues.closed has no recorded example; issues.reopened has its shape.
    const like = event === "issues" ? "reopened" : undefined;
    const { payload, problems } = this.#payloads.build(event, action, fields, like);
    this.violations.push(...problems);
    this.send(event, payload);
  }

  /** The pull request as a webhook carries it: in full (`pull_request` events) or simple (reviews, comments). */
  async #pullFields(repository: string, pull: DoublePull, full = false): Promise<Json> {
    const owner = repository.split("/")[0] ?? "";
    const headSha = await this.state.headSha(repository, pull);
    const baseSha = (await this.state.git.resolve(repository, `refs/heads/${pull.base}`)) ?? headSha;
    const repo = this.#repository(repository);
    const fields: Json = {
      url: `${this.#api(repository)}/pulls/${pull.number}`,
      id: Number(pull.nodeId.slice(3)),
      node_id: pull.nodeId,
      html_url: `${this.bodies.url}/${repository}/pull/${pull.number}`,
      number: pull.number,
      state: pull.state,
      locked: false,
      title: pull.title,
      user: this.#user(pull.author),
      body: pull.body,
      labels: pull.labels.map((name) => this.#label(name)),
      created_at: pull.createdAt,
      updated_at: pull.updatedAt,
      closed_at: pull.state === "closed" ? pull.updatedAt : null,
      merged_at: pull.mergedAt,
      merge_commit_sha: pull.mergeCommitSha,
      assignee: null,
      assignees: [],
      requested_reviewers: [],
      requested_teams: [],
      milestone: null,
      draft: false,
      head: { label: `${owner}:${pull.head}`, ref: pull.head, sha: headSha, user: this.#user(owner), repo },
      base: { label: `${owner}:${pull.base}`, ref: pull.base, sha: baseSha, user: this.#user(owner), repo },
      author_association: "MEMBER",
      auto_merge: pull.autoMerge
        ? {
            enabled_by: this.#user(pull.autoMerge.by),
            merge_method: pull.autoMerge.method,
            commit_title: "",
            commit_message: "",
          }
        : null,
      active_lock_reason: null,
    };
    if (!full) return fields;
    return {
      ...fields,
      merged: pull.mergedAt !== null,
      mergeable: null,
      rebaseable: null,
      mergeable_state: "unknown",
      merged_by: pull.mergedBy ? this.#user(pull.mergedBy) : null,
    };
  }

  /** The open pull requests whose head is `sha` (what GitHub lists on a check run). */
  async #pullsAt(repository: string, sha: string): Promise<DoublePull[]> {
    const open = this.#repo(repository).pulls.filter((p) => p.state === "open");
    const heads = await Promise.all(open.map((p) => this.state.headSha(repository, p)));
    return open.filter((_, i) => heads[i] === sha);
  }

  #pullRef(repository: string, pull: DoublePull, sha: string): Json {
    const repo = { id: 1, url: this.#api(repository), name: repository.split("/")[1] ?? "" };
    return {
      url: `${this.#api(repository)}/pulls/${pull.number}`,
      id: Number(pull.nodeId.slice(3)),
      number: pull.number,
      head: { ref: pull.head, sha, repo },
      base: { ref: pull.base, sha, repo },
    };
  }

  #around(repository: string, sender: string): Json {
    return { repository: this.#repository(repository), sender: this.#user(sender) };
  }

  #repository(repository: string): Json {
    const owner = repository.split("/")[0] ?? "";
    const fields = this.bodies.repoFields(repository, owner);
    return {
      ...fields,
      owner: this.#user(owner),
      url: this.#api(repository),
      ssh_url: `git@127.0.0.1:${repository}.git`,
      git_url: `git://127.0.0.1/${repository}.git`,
      svn_url: `${this.bodies.url}/${repository}`,
      is_template: false,
      web_commit_signoff_required: false,
      topics: [],
      visibility: "private",
      custom_properties: {},
    };
  }

  /** A user as webhooks carry one: the recorded example's sender with the double's login, id and links. */
  #user(login: string): Json {
    const { name: _name, email: _email, ...fields } = this.bodies.userFields(login);
    const path = encodeURIComponent(login);
    const api = `${this.bodies.url}/api/v3/users/${path}`;
    return overlay(this.#payloads.exampleUser(), {
      ...fields,
      avatar_url: `${this.bodies.url}/avatars/${path}`,
      gravatar_id: "",
      html_url: `${this.bodies.url}/${path}`,
      url: api,
      followers_url: `${api}/followers`,
      following_url: `${api}/following{/other_user}`,
      gists_url: `${api}/gists{/gist_id}`,
      starred_url: `${api}/starred{/owner}{/repo}`,
      subscriptions_url: `${api}/subscriptions`,
      organizations_url: `${api}/orgs`,
      repos_url: `${api}/repos`,
      events_url: `${api}/events{/privacy}`,
      received_events_url: `${api}/received_events`,
      site_admin: false,
    }) as Json;
  }

  #reactions(url: string): Json {
    const counts = ["+1", "-1", "laugh", "hooray", "confused", "heart", "rocket", "eyes"];
    return { url, total_count: 0, ...Object.fromEntries(counts.map((c) => [c, 0])) };
  }

  #label(name: string): Json {
    return this.bodies.label(name);
  }

  #repo(repository: string): RepoState {
    return this.state.repo(repository);
  }

  #api(repository: string): string {
    return `${this.bodies.url}/api/v3/repos/${repository}`;
  }
}
