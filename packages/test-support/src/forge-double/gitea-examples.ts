/**
 * Payloads shaped like Gitea's swagger models (templates/swagger/v1_json.tmpl: PullRequest,
 * PRBranchInfo, CommitStatus, PullReview, PullReviewComment, Comment, Label, User, Repository,
 * APIError) and its documented pull_request webhook; Forgejo serves the same models. Gitea's
 * swagger is not published on npm, so each example is typed by gitea-js (generated from that
 * swagger): a field the swagger does not name is a compile error. `shapeOf` turns them into the
 * runtime check of what the Gitea double answers.
 */
import type {
  Comment,
  CommitStatus,
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
