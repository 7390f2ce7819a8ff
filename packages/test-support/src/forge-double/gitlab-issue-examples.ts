/**
 * Payloads shaped like the examples of GitLab's issue documentation: doc/api/issues.md ("Single
 * project issue"), notes.md ("List project issue notes"), issue_links.md ("List issue
 * relations"), and the issue and issue comment webhook examples in
 * user/project/integrations/webhook_events.md. The same fields, our own values; each typed by
 * gitbeaker's schema type for it, and `shapeOf` makes them the runtime check of the GitLab
 * double's issue answers (gitlab-issue-routes.ts).
 */
import type {
  IssueLinkSchema,
  IssueNoteSchema,
  IssueSchemaWithBasicLabels,
  WebhookIssueEventSchema,
  WebhookIssueNoteEventSchema,
} from "@gitbeaker/rest";
import { GITLAB_USER_EXAMPLE } from "./gitlab-examples.ts";

const WHEN = "2026-01-05T10:00:00.000Z";

/** Fields GitLab's examples show as null where gitbeaker types them optional. */
type NullInDocs =
  | "closed_at"
  | "closed_by"
  | "milestone"
  | "due_date"
  | "moved_to_id"
  | "service_desk_reply_to"
  | "health_status"
  | "weight";
const HOOK_WHEN = "2026-01-05 10:00:00 UTC";

/** `GET /projects/:id/issues/:issue_iid` (an item of `GET /projects/:id/issues` too). */
export const GITLAB_ISSUE_EXAMPLE = {
  id: 76,
  iid: 6,
  project_id: 8,
  title: "Consequatur vero maxime deserunt laboriosam est voluptas dolorem.",
  description: "Ratione dolores corrupti mollitia soluta quia.",
  state: "opened",
  created_at: WHEN,
  updated_at: WHEN,
  closed_at: null,
  closed_by: null,
  labels: ["foo", "bar"],
  milestone: null,
  assignees: [GITLAB_USER_EXAMPLE],
  author: GITLAB_USER_EXAMPLE,
  assignee: GITLAB_USER_EXAMPLE as typeof GITLAB_USER_EXAMPLE | null,
  type: "ISSUE",
  issue_type: "issue",
  user_notes_count: 1,
  merge_requests_count: 0,
  upvotes: 0,
  downvotes: 0,
  due_date: null,
  confidential: false,
  discussion_locked: false,
  web_url: "http://gitlab.example.com/my-group/my-project/issues/6",
  time_stats: {
    time_estimate: 0,
    total_time_spent: 0,
    human_time_estimate: null,
    human_total_time_spent: null,
  },
  task_completion_status: { count: 0, completed_count: 0 },
  has_tasks: false,
  _links: {
    self: "http://gitlab.example.com/api/v4/projects/8/issues/6",
    notes: "http://gitlab.example.com/api/v4/projects/8/issues/6/notes",
    award_emoji: "http://gitlab.example.com/api/v4/projects/8/issues/6/award_emoji",
    project: "http://gitlab.example.com/api/v4/projects/8",
  },
  references: { short: "#6", relative: "#6", full: "my-group/my-project#6" },
  severity: "UNKNOWN",
  subscribed: false,
  moved_to_id: null,
  service_desk_reply_to: null,
  health_status: null,
  weight: null,
} satisfies Partial<Omit<IssueSchemaWithBasicLabels, NullInDocs>>;

/** An item of `GET /projects/:id/issues/:issue_iid/notes`, and what `POST …/notes` answers. */
export const GITLAB_ISSUE_NOTE_EXAMPLE = {
  id: 302,
  body: "closed",
  attachment: null,
  author: GITLAB_USER_EXAMPLE,
  created_at: WHEN,
  updated_at: WHEN,
  system: true as boolean,
  noteable_id: 377,
  noteable_type: "Issue" as const,
  project_id: 5,
  noteable_iid: 377,
  resolvable: false as boolean,
  confidential: false,
  internal: false,
  imported: false,
  imported_from: "none",
} satisfies IssueNoteSchema;

/** An item of `GET /projects/:id/issues/:issue_iid/links`: the linked issue and the link. */
export const GITLAB_ISSUE_LINK_EXAMPLE = {
  id: 84,
  iid: 14,
  issue_link_id: 1,
  project_id: 4,
  title: "Issues with auth",
  state: "opened",
  assignees: [],
  assignee: null,
  labels: ["bug"],
  author: GITLAB_USER_EXAMPLE,
  description: null as string | null,
  created_at: WHEN,
  updated_at: WHEN,
  milestone: null,
  subscribed: true,
  user_notes_count: 0,
  due_date: null,
  web_url: "http://example.com/example/example/issues/14",
  confidential: false,
  weight: null,
  link_type: "relates_to" as IssueLinkSchema["link_type"],
  link_created_at: WHEN,
  link_updated_at: WHEN,
} satisfies Partial<Omit<IssueLinkSchema, NullInDocs | "description">>;

const HOOK_USER = {
  id: 1,
  name: "Administrator",
  username: "root",
  avatar_url: "http://www.gravatar.com/avatar/e64c7d89f26bd1972efa854d13d7dd61?s=40&d=identicon",
  email: "admin@example.com",
};
const HOOK_PROJECT = {
  id: 1,
  name: "Gitlab Test",
  description: "Aut reprehenderit ut est.",
  web_url: "http://example.com/gitlabhq/gitlab-test",
  avatar_url: null,
  git_ssh_url: "git@example.com:gitlabhq/gitlab-test.git",
  git_http_url: "http://example.com/gitlabhq/gitlab-test.git",
  namespace: "GitlabHQ",
  visibility_level: 20,
  path_with_namespace: "gitlabhq/gitlab-test",
  default_branch: "master",
  ci_config_path: null,
  homepage: "http://example.com/gitlabhq/gitlab-test",
  url: "http://example.com/gitlabhq/gitlab-test.git",
  ssh_url: "git@example.com:gitlabhq/gitlab-test.git",
  http_url: "http://example.com/gitlabhq/gitlab-test.git",
};
const HOOK_LABEL = {
  id: 206,
  title: "API",
  color: "#ffffff",
  project_id: 14,
  created_at: HOOK_WHEN,
  updated_at: HOOK_WHEN,
  template: false,
  description: "API related issues",
  type: "ProjectLabel",
  group_id: 41,
};

/** `Issue Hook` (webhook_events.md "Issue events"): an issue opened, updated, closed or reopened. */
export const GITLAB_ISSUE_HOOK_EXAMPLE = {
  object_kind: "issue" as const,
  event_type: "issue" as const,
  user: HOOK_USER,
  project: HOOK_PROJECT,
  object_attributes: {
    id: 301,
    title: "New API: create/update/delete file",
    assignee_ids: [51] as number[] | null,
    assignee_id: 51 as number | null,
    author_id: 51,
    project_id: 14,
    created_at: HOOK_WHEN,
    updated_at: HOOK_WHEN,
    updated_by_id: 1,
    last_edited_at: null,
    last_edited_by_id: null,
    relative_position: 0,
    description: "Create new API for manipulations with repository",
    milestone_id: null,
    state_id: 1,
    confidential: false,
    discussion_locked: true,
    due_date: null,
    moved_to_id: null,
    duplicated_to_id: null,
    time_estimate: 0,
    total_time_spent: 0,
    time_change: 0,
    human_total_time_spent: null,
    human_time_estimate: null,
    human_time_change: null,
    weight: null,
    health_status: "at_risk",
    type: "Issue",
    iid: 23,
    url: "http://example.com/diaspora/issues/23",
    state: "opened",
    action: "open",
    severity: "high",
    escalation_status: "triggered",
    labels: [HOOK_LABEL],
  },
  repository: {
    name: "Gitlab Test",
    url: "http://example.com/gitlabhq/gitlab-test.git",
    description: "Aut reprehenderit ut est.",
    homepage: "http://example.com/gitlabhq/gitlab-test",
  },
  assignees: [HOOK_USER],
  assignee: HOOK_USER,
  labels: [HOOK_LABEL],
  changes: {} as Record<string, unknown>,
} satisfies Pick<WebhookIssueEventSchema, "object_kind" | "event_type"> & Record<string, unknown>;

/** `Note Hook` for a comment on an issue (webhook_events.md "Comment on an issue"). */
export const GITLAB_ISSUE_NOTE_HOOK_EXAMPLE = {
  object_kind: "note" as const,
  event_type: "note" as const,
  user: HOOK_USER,
  project_id: 5,
  project: HOOK_PROJECT,
  repository: {
    name: "diaspora",
    url: "git@example.com:mike/diaspora.git",
    description: "",
    homepage: "http://example.com/mike/diaspora",
  },
  object_attributes: {
    id: 1241,
    note: "Hello world",
    noteable_type: "Issue",
    author_id: 1,
    created_at: HOOK_WHEN,
    updated_at: HOOK_WHEN,
    project_id: 5,
    attachment: null,
    line_code: null,
    commit_id: "",
    noteable_id: 92 as number | null,
    system: false,
    st_diff: null,
    url: "http://example.com/gitlab-org/gitlab-test/issues/17#note_1241",
    discussion_id: "87805b7c09016a7058e91bdbe7b29d1f284a39e6",
    type: null as string | null,
  },
  issue: {
    id: 92,
    title: "test",
    assignee_ids: [] as number[] | null,
    assignee_id: null as number | null,
    author_id: 1,
    project_id: 5,
    created_at: HOOK_WHEN,
    updated_at: HOOK_WHEN,
    position: 0,
    branch_name: null,
    description: "test",
    milestone_id: null,
    state: "closed",
    iid: 17,
    labels: [HOOK_LABEL],
  },
} satisfies Pick<WebhookIssueNoteEventSchema, "object_kind" | "event_type" | "project_id"> &
  Record<string, unknown>;
