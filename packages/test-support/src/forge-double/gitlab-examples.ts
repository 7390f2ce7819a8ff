/**
 * Payloads shaped like the examples in GitLab's REST v4 documentation (doc/api/
 * merge_requests.md, pipelines.md, jobs.md, discussions.md, merge_request_approvals.md,
 * users.md, personal_access_tokens.md, projects.md, and the merge request / pipeline /
 * note webhook examples in user/project/integrations/webhook_events.md): the same fields, our
 * own values. Each is typed by gitbeaker's schema type for it, so gitbeaker's types and the
 * documented example agree at compile time; `shapeOf` turns them into the runtime check of
 * what the GitLab double answers.
 */
import type {
  CommitStatusSchema,
  DiscussionNoteSchema,
  DiscussionSchema,
  ExpandedMergeRequestSchema,
  ExpandedPipelineSchema,
  JobSchema,
  MergeRequestDiffVersionsSchema,
  MergeRequestLevelMergeRequestApprovalSchema,
  MergeRequestReviewerSchema,
  MergeRequestSchemaWithBasicLabels,
  PersonalAccessTokenSchema,
  PipelineSchema,
  UserSchema,
} from "@gitbeaker/rest";

const WHEN = "2026-01-05T10:00:00.000Z";

export const GITLAB_USER_EXAMPLE = {
  id: 1,
  username: "john_smith",
  name: "John Smith",
  state: "active",
  avatar_url: "https://gitlab.example.com/uploads/user/avatar/1/cd8.jpeg",
  web_url: "https://gitlab.example.com/john_smith",
};

export const GITLAB_CURRENT_USER_EXAMPLE = {
  ...GITLAB_USER_EXAMPLE,
  created_at: WHEN,
  bio: "",
  bot: false,
  location: null,
  public_email: null,
  locked: false,
} satisfies Partial<UserSchema>;

const MERGE_REQUEST = {
  id: 1,
  iid: 1,
  project_id: 3,
  title: "test1",
  description: "fixed login page css paddings",
  state: "opened",
  created_at: WHEN,
  updated_at: WHEN,
  merged_by: null,
  merge_user: null,
  merged_at: null,
  closed_by: null,
  closed_at: null,
  target_branch: "main",
  source_branch: "test1",
  user_notes_count: 0,
  upvotes: 0,
  downvotes: 0,
  author: GITLAB_USER_EXAMPLE,
  assignees: [],
  assignee: null,
  reviewers: [],
  source_project_id: 3,
  target_project_id: 3,
  labels: ["Community contribution"],
  draft: false,
  work_in_progress: false,
  milestone: null,
  merge_when_pipeline_succeeds: false,
  merge_status: "can_be_merged",
  detailed_merge_status: "mergeable",
  sha: "8888888888888888888888888888888888888888",
  merge_commit_sha: null,
  squash_commit_sha: null,
  discussion_locked: null,
  should_remove_source_branch: null,
  force_remove_source_branch: false,
  prepared_at: WHEN,
  reference: "!1",
  references: { short: "!1", relative: "!1", full: "my-group/my-project!1" },
  web_url: "https://gitlab.example.com/my-group/my-project/-/merge_requests/1",
  time_stats: {
    time_estimate: 0,
    total_time_spent: 0,
    human_time_estimate: null,
    human_total_time_spent: null,
  },
  squash: false,
  squash_on_merge: false,
  task_completion_status: { count: 0, completed_count: 0 },
  has_conflicts: false,
  blocking_discussions_resolved: true,
  approvals_before_merge: null,
} satisfies MergeRequestSchemaWithBasicLabels;

/** An item of `GET /projects/:id/merge_requests`. */
export const GITLAB_MERGE_REQUEST_EXAMPLE: MergeRequestSchemaWithBasicLabels = MERGE_REQUEST;

const PIPELINE = {
  id: 47,
  iid: 12,
  project_id: 3,
  sha: "a91957a858320c0e17f3a0eca7cfacbff50ea29a",
  ref: "new-pipeline",
  status: "pending",
  source: "push",
  created_at: WHEN,
  updated_at: WHEN,
  web_url: "https://gitlab.example.com/my-group/my-project/-/pipelines/47",
} satisfies PipelineSchema;

/** An item of `GET /projects/:id/pipelines`. */
export const GITLAB_PIPELINE_EXAMPLE: PipelineSchema = PIPELINE;

/** A merge request's `head_pipeline` (and `pipeline`): the pipeline with its details. */
export const GITLAB_HEAD_PIPELINE_EXAMPLE = {
  ...PIPELINE,
  before_sha: "a91957a858320c0e17f3a0eca7cfacbff50ea29a",
  tag: false,
  yaml_errors: null,
  user: GITLAB_USER_EXAMPLE,
  started_at: WHEN,
  finished_at: WHEN,
  committed_at: WHEN,
  duration: 34,
  queued_duration: 0.01,
  coverage: null,
  detailed_status: {
    icon: "status_pending",
    text: "pending",
    label: "pending",
    group: "pending",
    tooltip: "pending",
    has_details: true,
    details_path: "/my-group/my-project/-/pipelines/47",
    illustration: null,
    favicon: "/assets/ci_favicons/favicon_status_pending.png",
  },
} satisfies ExpandedPipelineSchema;

/** `GET /projects/:id/merge_requests/:iid` (also what create, edit and merge answer). */
export const GITLAB_SINGLE_MERGE_REQUEST_EXAMPLE = {
  ...MERGE_REQUEST,
  subscribed: false,
  changes_count: "1",
  latest_build_started_at: null,
  latest_build_finished_at: null,
  first_deployed_to_production_at: null,
  pipeline: PIPELINE as typeof PIPELINE | null,
  head_pipeline: GITLAB_HEAD_PIPELINE_EXAMPLE as typeof GITLAB_HEAD_PIPELINE_EXAMPLE | null,
  diff_refs: {
    base_sha: "c380d3acebd181f13629a25d2e2acca46ffe1e00",
    head_sha: "2be7ddb704c7b6b83732fdd5b9f09d5a397b5f8f",
    start_sha: "c380d3acebd181f13629a25d2e2acca46ffe1e00",
  },
  merge_error: null,
  first_contribution: false,
  user: { can_merge: true },
} satisfies ExpandedMergeRequestSchema;

/** An item of `GET /projects/:id/pipelines/:pipeline_id/jobs`. */
export const GITLAB_JOB_EXAMPLE = {
  id: 7,
  name: "rspec:other",
  stage: "test",
  status: "failed",
  ref: "main",
  tag: false,
  coverage: null,
  allow_failure: false,
  created_at: WHEN,
  started_at: WHEN,
  finished_at: WHEN,
  erased_at: null,
  duration: 0.465,
  queued_duration: 0.123,
  failure_reason: "script_failure",
  user: { ...GITLAB_CURRENT_USER_EXAMPLE },
  commit: {
    id: "0ff3ae198f8601a285adcf5c0fff204ee6fba5fd",
    short_id: "0ff3ae19",
    title: "Test the CI integration.",
    message: "Test the CI integration.",
    author_name: "Administrator",
    author_email: "admin@example.com",
    created_at: WHEN,
  },
  pipeline: PIPELINE,
  web_url: "https://gitlab.example.com/my-group/my-project/-/jobs/7",
  project: { ci_job_token_scope_enabled: false },
  artifacts: [],
  runner: null,
  artifacts_expire_at: null,
  tag_list: ["docker runner"],
} satisfies Omit<
  JobSchema,
  "artifacts_file" | "runner" | "coverage" | "erased_at" | "artifacts_expire_at"
> & {
  coverage: null;
  erased_at: null;
  runner: null;
  artifacts_expire_at: null;
};

/** An item of `GET /projects/:id/repository/commits/:sha/statuses` (jobs and external statuses alike). */
export const GITLAB_COMMIT_STATUS_EXAMPLE = {
  status: "pending",
  created_at: WHEN,
  started_at: null,
  name: "bundler:audit",
  allow_failure: true,
  author: GITLAB_USER_EXAMPLE,
  description: null as string | null,
  sha: "18f3e63d05582537db6d183d9d557be09e1f90c8",
  target_url: "https://gitlab.example.com/janedoe/gitlab-foss/builds/91",
  finished_at: null,
  id: 91,
  ref: "master",
  coverage: null,
  pipeline_id: 47,
} satisfies Omit<CommitStatusSchema, "started_at" | "finished_at" | "description"> & {
  started_at: null;
  finished_at: null;
  description: string | null;
};

/** An item of `GET /projects/:id/merge_requests/:iid/versions` (one per push to the source branch). */
export const GITLAB_MR_VERSION_EXAMPLE = {
  id: 110,
  head_commit_sha: "33e2ee8579fda5bc36accc9c6fbd0b4fefda9e30",
  base_commit_sha: "eeb57dffe83deb686a60a71c16c32f71046868fd",
  start_commit_sha: "eeb57dffe83deb686a60a71c16c32f71046868fd",
  created_at: WHEN,
  merge_request_id: 105,
  state: "collected",
  real_size: "1",
  patch_id_sha: "d504412d5b6e6739647e752aff8e468dde093f2f",
} satisfies MergeRequestDiffVersionsSchema;

/** An item of `GET /projects/:id/merge_requests/:iid/reviewers`. */
export const GITLAB_REVIEWER_EXAMPLE = {
  user: GITLAB_USER_EXAMPLE,
  state: "unreviewed",
  created_at: WHEN,
} satisfies MergeRequestReviewerSchema;

/** `GET /projects/:id/merge_requests/:iid/approvals`. */
export const GITLAB_APPROVALS_EXAMPLE = {
  id: 5,
  iid: 5,
  project_id: 1,
  title: "Approvals API",
  description: "Test",
  state: "opened",
  created_at: WHEN,
  updated_at: WHEN,
  merge_status: "can_be_merged",
  approved: true,
  approvals_required: 0,
  approvals_left: 0,
  require_password_to_approve: false,
  approved_by: [{ user: GITLAB_USER_EXAMPLE }],
  suggested_approvers: [],
  approvers: [],
  approver_groups: [],
  user_has_approved: false,
  user_can_approve: true,
  approval_rules_left: [],
  has_approval_rules: false,
  merge_request_approvers_available: false,
  multiple_approval_rules_available: false,
  invalid_approvers_rules: [],
} satisfies MergeRequestLevelMergeRequestApprovalSchema;

const NOTE_POSITION = {
  base_sha: "b5d6e7b1613fca24d250fa8e5bc7bcc3dd6002ef",
  start_sha: "7c9c2ead8a320fb7ba0b4e234bd9529a2614e306",
  head_sha: "4803c71e6b1833ca72b8b26ef2ecd5adc8a38031",
  old_path: "package.json",
  new_path: "package.json",
  position_type: "text" as const,
  old_line: 27,
  new_line: 27,
  line_range: null,
};

/** A note of a diff discussion. */
export const GITLAB_DIFF_NOTE_EXAMPLE = {
  id: 1128,
  type: "DiffNote" as "DiffNote" | "DiscussionNote" | null,
  body: "diff comment",
  attachment: null,
  author: GITLAB_USER_EXAMPLE,
  created_at: WHEN,
  updated_at: WHEN,
  system: false,
  noteable_id: 3,
  noteable_type: "MergeRequest" as const,
  noteable_iid: 3,
  commit_id: null,
  position: NOTE_POSITION,
  resolved: false,
  resolvable: true,
  resolved_by: null as typeof GITLAB_USER_EXAMPLE | null,
  resolved_at: null as string | null,
  confidential: false,
  internal: false,
  imported: false,
  imported_from: "none",
  project_id: 5,
};

/** An item of `GET /projects/:id/merge_requests/:iid/notes` (a comment on the merge request). */
export const GITLAB_NOTE_EXAMPLE = {
  id: 302,
  type: null as "DiffNote" | "DiscussionNote" | null,
  body: "closed",
  attachment: null,
  author: GITLAB_USER_EXAMPLE,
  created_at: WHEN,
  updated_at: WHEN,
  system: true as boolean,
  noteable_id: 377,
  noteable_type: "MergeRequest" as const,
  noteable_iid: 377,
  project_id: 5,
  resolvable: false as boolean,
  confidential: false,
  internal: false,
  imported: false,
  imported_from: "none",
} satisfies DiscussionNoteSchema;

/** An item of `GET /projects/:id/merge_requests/:iid/discussions` (a thread on the diff). */
export const GITLAB_DISCUSSION_EXAMPLE = {
  id: "87805b7c09016a7058e91bdbe7b29d1f284a39e6",
  individual_note: false,
  notes: [GITLAB_DIFF_NOTE_EXAMPLE],
} satisfies DiscussionSchema;

/** `GET /personal_access_tokens/self`. */
export const GITLAB_TOKEN_SELF_EXAMPLE = {
  id: 4,
  name: "Test Token",
  revoked: false,
  created_at: WHEN,
  description: "Test Token description",
  scopes: ["api"],
  user_id: 3,
  last_used_at: WHEN,
  active: true,
  expires_at: null,
} satisfies Omit<PersonalAccessTokenSchema, "token" | "expires_at"> & { expires_at: null };

/** `GET /projects/:id` (the fields Overseer reads, and the ones around them in the documented example). */
export const GITLAB_PROJECT_EXAMPLE = {
  id: 3,
  description: null,
  default_branch: "main",
  visibility: "private",
  ssh_url_to_repo: "git@example.com:diaspora/diaspora-project-site.git",
  http_url_to_repo: "https://example.com/diaspora/diaspora-project-site.git",
  web_url: "https://example.com/diaspora/diaspora-project-site",
  name: "Diaspora Project Site",
  name_with_namespace: "Diaspora / Diaspora Project Site",
  path: "diaspora-project-site",
  path_with_namespace: "diaspora/diaspora-project-site",
  created_at: WHEN,
  merge_method: "merge",
  squash_option: "default_off",
  only_allow_merge_if_pipeline_succeeds: false,
  merge_trains_enabled: false,
  permissions: {
    project_access: { access_level: 10, notification_level: 3 },
    group_access: { access_level: 50, notification_level: 3 },
  },
};

/** Errors: GitLab answers `{"message": …}` (a string, or field → messages on validation). */
export const GITLAB_ERROR_EXAMPLE = { message: "404 Not found" };
export const GITLAB_VALIDATION_ERROR_EXAMPLE = { message: ["Another open merge request already exists"] };

/** The `Merge Request Hook` webhook example (object_kind merge_request). */
export const GITLAB_MERGE_REQUEST_HOOK_EXAMPLE = {
  object_kind: "merge_request",
  event_type: "merge_request",
  user: { id: 1, name: "Administrator", username: "root", avatar_url: null, email: "[REDACTED]" },
  project: {
    id: 1,
    name: "Gitlab Test",
    web_url: "http://example.com/gitlabhq/gitlab-test",
    path_with_namespace: "gitlabhq/gitlab-test",
    default_branch: "master",
    git_http_url: "http://example.com/gitlabhq/gitlab-test.git",
  },
  object_attributes: {
    id: 99,
    iid: 1,
    target_branch: "master",
    source_branch: "ms-viewport",
    title: "MS-Viewport",
    description: "",
    state: "opened",
    merge_status: "unchecked",
    detailed_merge_status: "not_open",
    url: "http://example.com/diaspora/merge_requests/1",
    action: "open",
    last_commit: { id: "da1560886d4f094c3e6c9ef40349f7d38b5d27d7", message: "fixed readme" },
    merge_commit_sha: null,
    created_at: WHEN,
    updated_at: WHEN,
  },
  labels: [],
};
