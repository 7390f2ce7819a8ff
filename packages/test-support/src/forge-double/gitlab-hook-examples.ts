/**
 * The Pipeline Hook and the merge request Note Hook, shaped like the examples of GitLab's
 * webhook documentation (user/project/integrations/webhook_events.md): the same fields, our own
 * values, typed by gitbeaker's webhook event schemas. The Merge Request Hook is in
 * gitlab-examples.ts.
 */
import type { WebhookMergeRequestNoteEventSchema, WebhookPipelineEventSchema } from "@gitbeaker/rest";

const WHEN = "2026-01-05 10:00:00 UTC";

const HOOK_USER = {
  id: 1,
  name: "Administrator",
  username: "root",
  avatar_url: "http://www.gravatar.com/avatar/e32bd13e2add097461cb96824b7a829c?s=80&d=identicon",
  email: "[REDACTED]",
};

const HOOK_PROJECT = {
  id: 1,
  name: "Gitlab Test",
  description: "Atque in sunt eos similique dolores voluptatem.",
  web_url: "http://192.168.64.1:3005/gitlab-org/gitlab-test",
  avatar_url: null,
  git_ssh_url: "git@192.168.64.1:gitlab-org/gitlab-test.git",
  git_http_url: "http://192.168.64.1:3005/gitlab-org/gitlab-test.git",
  namespace: "Gitlab Org",
  visibility_level: 20,
  path_with_namespace: "gitlab-org/gitlab-test",
  default_branch: "main",
};

const HOOK_COMMIT = {
  id: "bcbb5ec396a2c0f828686f14fac9b80b780504f2",
  message: "test\n",
  timestamp: "2016-08-12T17:23:21+02:00",
  url: "http://example.com/gitlab-org/gitlab-test/commit/bcbb5ec396a2c0f828686f14fac9b80b780504f2",
  author: { name: "User", email: "user@gitlab.com" },
};

/** `Pipeline Hook` (object_kind pipeline): the pipeline, its merge request when it has one, its builds. */
export const GITLAB_PIPELINE_HOOK_EXAMPLE = {
  object_kind: "pipeline" as const,
  object_attributes: {
    id: 31,
    iid: 3,
    name: "Pipeline for branch: main",
    ref: "main",
    tag: false,
    sha: "bcbb5ec396a2c0f828686f14fac9b80b780504f2",
    before_sha: "bcbb5ec396a2c0f828686f14fac9b80b780504f2",
    source: "merge_request_event",
    status: "success",
    detailed_status: "passed",
    stages: ["build", "test", "deploy"],
    created_at: WHEN,
    finished_at: WHEN,
    duration: 63,
    variables: [{ key: "NESTOR_PROD_ENVIRONMENT", value: "us-west-1" }],
    url: "http://example.com/gitlab-org/gitlab-test/-/pipelines/31",
  },
  merge_request: {
    id: 1,
    iid: 1,
    title: "Test",
    source_branch: "test",
    source_project_id: 1,
    target_branch: "main",
    target_project_id: 1,
    state: "opened",
    merge_status: "can_be_merged",
    detailed_merge_status: "mergeable",
    url: "http://192.168.64.1:3005/gitlab-org/gitlab-test/merge_requests/1",
  } as WebhookPipelineEventSchema["merge_request"],
  user: HOOK_USER,
  project: HOOK_PROJECT,
  commit: HOOK_COMMIT,
  builds: [
    {
      id: 380,
      stage: "deploy",
      name: "production",
      status: "skipped",
      created_at: WHEN,
      started_at: null,
      finished_at: null,
      duration: null,
      queued_duration: null,
      failure_reason: null,
      when: "manual",
      manual: true,
      allow_failure: false,
      user: HOOK_USER,
      runner: null,
      artifacts_file: { filename: null, size: null },
      environment: null,
    },
  ],
} satisfies Pick<
  WebhookPipelineEventSchema,
  "object_kind" | "object_attributes" | "merge_request" | "commit"
> &
  Record<string, unknown>;

/** `Note Hook` for a comment on a merge request (object_kind note, noteable_type MergeRequest). */
export const GITLAB_MR_NOTE_HOOK_EXAMPLE = {
  object_kind: "note" as const,
  event_type: "note" as const,
  user: HOOK_USER,
  project_id: 5,
  project: HOOK_PROJECT,
  repository: {
    name: "Gitlab Test",
    url: "http://example.com/gitlab-org/gitlab-test.git",
    description: "Aut reprehenderit ut est.",
    homepage: "http://example.com/gitlab-org/gitlab-test",
  },
  object_attributes: {
    id: 1244,
    note: "This MR needs work.",
    noteable_type: "MergeRequest",
    discussion_id: "87805b7c09016a7058e91bdbe7b29d1f284a39e6",
    author_id: 1,
    created_at: WHEN,
    updated_at: WHEN,
    project_id: 5,
    attachment: null,
    line_code: null as string | null,
    commit_id: "",
    noteable_id: 7 as number | null,
    system: false,
    st_diff: null,
    url: "http://example.com/gitlab-org/gitlab-test/merge_requests/1#note_1244",
    type: null as string | null,
    position: null as Record<string, unknown> | null,
  },
  merge_request: {
    id: 7,
    iid: 1,
    target_branch: "markdown",
    source_branch: "master",
    source_project_id: 5,
    author_id: 8,
    assignee_id: null as number | null,
    title: "Tempora et eos debitis quae laborum et.",
    created_at: WHEN,
    updated_at: WHEN,
    milestone_id: null as number | null,
    state: "opened",
    merge_status: "cannot_be_merged",
    target_project_id: 5,
    description: "Et voluptas corrupti assumenda temporibus.",
    position: 0,
    labels: [],
    source: HOOK_PROJECT,
    target: HOOK_PROJECT,
    last_commit: HOOK_COMMIT,
    work_in_progress: false,
    draft: false,
    assignee: null,
    detailed_merge_status: "not_approved",
  },
} satisfies Pick<WebhookMergeRequestNoteEventSchema, "object_kind" | "event_type" | "project_id"> &
  Record<string, unknown>;
