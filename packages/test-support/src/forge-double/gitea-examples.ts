/**
 * Payloads shaped like Gitea's swagger models (templates/swagger/v1_json.tmpl: PullRequest,
 * PRBranchInfo, CommitStatus, PullReview, PullReviewComment, Comment, Label, User, Repository,
 * APIError) and its documented pull_request webhook; Forgejo serves the same models. Gitea's
 * swagger is not published on npm, so each example is typed by gitea-js (generated from that
 * swagger): a field the swagger does not name is a compile error. The Actions models Gitea 1.24
 * added (ActionWorkflowRun, ActionWorkflowJob and their list responses; gitea-js 1.23 predates
 * them) are typed below from Gitea's modules/structs/repo_actions.go, field for field. `shapeOf` turns them into the
 * runtime check of what the Gitea double answers.
 */
import type {
  Comment,
  CommitStatus,
  Issue,
  Label,
  PRBranchInfo,
  PullRequest,
  PullReview,
  PullReviewComment,
  Repository,
  User,
} from "gitea-js";

const WHEN = "2026-01-05T10:00:00Z";

export const GITEA_USER_EXAMPLE = {
  id: 1,
  login: "gitea-user",
  login_name: "",
  source_id: 0,
  full_name: "",
  email: "gitea-user@noreply.example.org",
  avatar_url: "https://gitea.example.org/avatars/1",
  html_url: "https://gitea.example.org/gitea-user",
  language: "",
  is_admin: false,
  last_login: WHEN,
  created: WHEN,
  restricted: false,
  active: true,
  prohibit_login: false,
  location: "",
  website: "",
  description: "",
  visibility: "public",
  followers_count: 0,
  following_count: 0,
  starred_repos_count: 0,
} satisfies User;

export const GITEA_REPOSITORY_EXAMPLE = {
  id: 1,
  owner: GITEA_USER_EXAMPLE,
  name: "app",
  full_name: "acme/app",
  description: "",
  empty: false,
  private: true,
  fork: false,
  template: false,
  mirror: false,
  size: 1,
  html_url: "https://gitea.example.org/acme/app",
  url: "https://gitea.example.org/api/v1/repos/acme/app",
  link: "",
  ssh_url: "git@gitea.example.org:acme/app.git",
  clone_url: "https://gitea.example.org/acme/app.git",
  default_branch: "main",
  archived: false,
  created_at: WHEN,
  updated_at: WHEN,
  permissions: { admin: false as boolean, push: true as boolean, pull: true as boolean },
  has_issues: true,
  has_pull_requests: true,
  allow_merge_commits: true,
  allow_rebase: true,
  allow_rebase_explicit: true,
  allow_squash_merge: true,
  allow_fast_forward_only_merge: true,
  default_merge_style: "merge",
  default_delete_branch_after_merge: false,
  object_format_name: "sha1" as const,
} satisfies Repository;

export const GITEA_LABEL_EXAMPLE = {
  id: 1,
  name: "bug",
  exclusive: false,
  is_archived: false,
  color: "ee0701",
  description: "Something is not working",
  url: "https://gitea.example.org/api/v1/repos/acme/app/labels/1",
} satisfies Label;

const BRANCH = {
  label: "feature",
  ref: "feature",
  sha: "8888888888888888888888888888888888888888",
  repo_id: 1,
  repo: GITEA_REPOSITORY_EXAMPLE,
} satisfies PRBranchInfo;

export const GITEA_PULL_EXAMPLE = {
  id: 1,
  url: "https://gitea.example.org/acme/app/pulls/1",
  number: 1,
  user: GITEA_USER_EXAMPLE,
  title: "Add the thing",
  body: "",
  labels: [GITEA_LABEL_EXAMPLE],
  assignees: [],
  requested_reviewers: [],
  state: "open",
  draft: false,
  is_locked: false,
  comments: 0,
  review_comments: 0,
  additions: 1,
  deletions: 0,
  changed_files: 1,
  html_url: "https://gitea.example.org/acme/app/pulls/1",
  diff_url: "https://gitea.example.org/acme/app/pulls/1.diff",
  patch_url: "https://gitea.example.org/acme/app/pulls/1.patch",
  mergeable: true,
  merged: false,
  merged_at: null as unknown as string,
  merge_commit_sha: null as unknown as string,
  merged_by: null as unknown as User,
  allow_maintainer_edit: false,
  base: { ...BRANCH, label: "main", ref: "main" },
  head: BRANCH,
  merge_base: "8888888888888888888888888888888888888888",
  due_date: null as unknown as string,
  created_at: WHEN,
  updated_at: WHEN,
  closed_at: null as unknown as string,
  pin_order: 0,
} satisfies PullRequest;

export const GITEA_STATUS_EXAMPLE = {
  id: 1,
  status: "success",
  target_url: "https://ci.example.org/build/1",
  description: "",
  url: "https://gitea.example.org/api/v1/repos/acme/app/statuses/8888888888888888888888888888888888888888",
  context: "ci/build",
  creator: GITEA_USER_EXAMPLE,
  created_at: WHEN,
  updated_at: WHEN,
} satisfies CommitStatus;

export const GITEA_REVIEW_EXAMPLE = {
  id: 1,
  user: GITEA_USER_EXAMPLE,
  state: "APPROVED",
  body: "",
  commit_id: "8888888888888888888888888888888888888888",
  stale: false,
  official: true,
  dismissed: false,
  comments_count: 0,
  submitted_at: WHEN,
  updated_at: WHEN,
  html_url: "https://gitea.example.org/acme/app/pulls/1#issuecomment-1",
  pull_request_url: "https://gitea.example.org/acme/app/pulls/1",
} satisfies PullReview;

export const GITEA_REVIEW_COMMENT_EXAMPLE = {
  id: 1,
  body: "Why?",
  user: GITEA_USER_EXAMPLE,
  resolver: null as unknown as User,
  pull_request_review_id: 1,
  created_at: WHEN,
  updated_at: WHEN,
  path: "src/a.ts",
  commit_id: "8888888888888888888888888888888888888888",
  original_commit_id: "8888888888888888888888888888888888888888",
  diff_hunk: "@@ -1 +1 @@",
  position: 1,
  original_position: 0,
  html_url: "https://gitea.example.org/acme/app/pulls/1#issuecomment-1",
  pull_request_url: "https://gitea.example.org/acme/app/pulls/1",
} satisfies PullReviewComment;

export const GITEA_COMMENT_EXAMPLE = {
  id: 1,
  html_url: "https://gitea.example.org/acme/app/pulls/1#issuecomment-1",
  pull_request_url: "https://gitea.example.org/acme/app/pulls/1",
  issue_url: "",
  user: GITEA_USER_EXAMPLE,
  original_author: "",
  original_author_id: 0,
  body: "LGTM",
  assets: [],
  created_at: WHEN,
  updated_at: WHEN,
} satisfies Comment;

/** APIError: `{ message, url }`. */
export const GITEA_ERROR_EXAMPLE = { message: "Not Found", url: "https://gitea.example.org/api/swagger" };

/** The `pull_request` webhook (X-Gitea-Event: pull_request). */
export const GITEA_PULL_REQUEST_HOOK_EXAMPLE = {
  action: "opened",
  number: 1,
  pull_request: GITEA_PULL_EXAMPLE,
  repository: GITEA_REPOSITORY_EXAMPLE,
  sender: GITEA_USER_EXAMPLE,
  commit_id: "",
  review: null,
};

/** Gitea ≥ 1.24's ActionWorkflowRun (modules/structs/repo_actions.go). */
export interface ActionWorkflowRun {
  id: number;
  url: string;
  html_url: string;
  display_title: string;
  path: string;
  event: string;
  run_attempt: number;
  run_number: number;
  repository_id?: number;
  head_sha: string;
  head_branch?: string;
  status: string;
  actor?: User;
  trigger_actor?: User;
  repository?: Repository;
  head_repository?: Repository;
  conclusion?: string;
  started_at: string;
  completed_at: string;
}

/** Gitea ≥ 1.24's ActionWorkflowJob. */
export interface ActionWorkflowJob {
  id: number;
  url: string;
  html_url: string;
  run_id: number;
  run_url: string;
  name: string;
  labels: string[];
  run_attempt: number;
  head_sha: string;
  head_branch?: string;
  status: string;
  conclusion?: string;
  runner_id?: number;
  runner_name?: string;
  steps: {
    name: string;
    number: number;
    status: string;
    conclusion?: string;
    started_at: string;
    completed_at: string;
  }[];
  created_at: string;
  started_at: string;
  completed_at: string;
}

export const GITEA_ACTION_RUN_EXAMPLE = {
  id: 1,
  url: "https://gitea.example.org/api/v1/repos/acme/app/actions/runs/1",
  html_url: "https://gitea.example.org/acme/app/actions/runs/1",
  display_title: "Add the thing",
  path: "ci.yml@refs/pull/1/head",
  event: "pull_request",
  run_attempt: 1,
  run_number: 1,
  repository_id: 1,
  head_sha: "8888888888888888888888888888888888888888",
  head_branch: "feature",
  status: "completed",
  actor: GITEA_USER_EXAMPLE,
  trigger_actor: GITEA_USER_EXAMPLE,
  repository: GITEA_REPOSITORY_EXAMPLE,
  head_repository: GITEA_REPOSITORY_EXAMPLE,
  conclusion: "failure",
  started_at: WHEN,
  completed_at: WHEN,
} satisfies ActionWorkflowRun;

/** ActionWorkflowRunsResponse (`GET /repos/{owner}/{repo}/actions/runs`). */
export const GITEA_ACTION_RUNS_EXAMPLE = { workflow_runs: [GITEA_ACTION_RUN_EXAMPLE], total_count: 1 };

export const GITEA_ACTION_JOB_EXAMPLE = {
  id: 1,
  url: "https://gitea.example.org/api/v1/repos/acme/app/actions/jobs/1",
  html_url: "https://gitea.example.org/acme/app/actions/runs/1/jobs/0",
  run_id: 1,
  run_url: "https://gitea.example.org/api/v1/repos/acme/app/actions/runs/1",
  name: "test",
  labels: ["ubuntu-latest"],
  run_attempt: 1,
  head_sha: "8888888888888888888888888888888888888888",
  head_branch: "feature",
  status: "completed",
  conclusion: "failure",
  runner_id: 1,
  runner_name: "runner-1",
  steps: [
    {
      name: "Run tests",
      number: 1,
      status: "completed",
      conclusion: "failure",
      started_at: WHEN,
      completed_at: WHEN,
    },
  ],
  created_at: WHEN,
  started_at: WHEN,
  completed_at: WHEN,
} satisfies ActionWorkflowJob;

/** ActionWorkflowJobsResponse (`GET /repos/{owner}/{repo}/actions/runs/{run}/jobs`). */
export const GITEA_ACTION_JOBS_EXAMPLE = { jobs: [GITEA_ACTION_JOB_EXAMPLE], total_count: 1 };

const ISSUE = {
  id: 1,
  url: "https://gitea.example.org/api/v1/repos/acme/app/issues/1",
  html_url: "https://gitea.example.org/acme/app/pulls/1",
  number: 1,
  user: GITEA_USER_EXAMPLE,
  original_author: "",
  original_author_id: 0,
  title: "Add the thing",
  body: "",
  ref: "",
  assets: [],
  labels: [],
  assignees: [],
  state: "open",
  is_locked: false,
  comments: 1,
  created_at: WHEN,
  updated_at: WHEN,
  pull_request: { merged: false, html_url: "https://gitea.example.org/acme/app/pulls/1", draft: false },
  repository: { id: 1, name: "app", owner: "acme", full_name: "acme/app" },
  pin_order: 0,
} satisfies Issue;

/** The `issue_comment` webhook on a pull request (X-Gitea-Event: issue_comment, event type pull_request_comment). */
export const GITEA_ISSUE_COMMENT_HOOK_EXAMPLE = {
  action: "created",
  issue: ISSUE,
  pull_request: GITEA_PULL_EXAMPLE,
  comment: GITEA_COMMENT_EXAMPLE,
  repository: GITEA_REPOSITORY_EXAMPLE,
  sender: GITEA_USER_EXAMPLE,
  is_pull: true,
};

/** The `status` webhook (X-Gitea-Event: status): a commit status was set. */
export const GITEA_STATUS_HOOK_EXAMPLE = {
  commit: {
    id: "8888888888888888888888888888888888888888",
    message: "Add the thing\n",
    url: "https://gitea.example.org/acme/app/commit/8888888888888888888888888888888888888888",
    author: { name: "gitea-user", email: "gitea-user@noreply.example.org", username: "gitea-user" },
    committer: { name: "gitea-user", email: "gitea-user@noreply.example.org", username: "gitea-user" },
    verification: null,
    timestamp: WHEN,
    added: null,
    removed: null,
    modified: null,
  },
  context: "ci/build",
  created_at: WHEN,
  description: "",
  id: 1,
  repository: GITEA_REPOSITORY_EXAMPLE,
  sender: GITEA_USER_EXAMPLE,
  sha: "8888888888888888888888888888888888888888",
  state: "success",
  target_url: "https://ci.example.org/build/1",
  updated_at: WHEN,
};
