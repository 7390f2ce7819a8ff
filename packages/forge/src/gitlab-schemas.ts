/**
 * The parts of GitLab's REST v4 answers the GitLab adapter reads (gitbeaker's types describe
 * the rest; the forge double serves bodies typed by them and shaped like GitLab's documented
 * examples). Unknown fields are dropped.
 */
import { z } from "zod";

const User = z.object({ username: z.string() });

export const GitLabMergeRequestSchema = z.object({
  iid: z.number().int(),
  web_url: z.string(),
  source_branch: z.string(),
  target_branch: z.string(),
  sha: z.string(),
  title: z.string(),
  description: z.string().nullable(),
  state: z.enum(["opened", "closed", "locked", "merged"]),
  merge_commit_sha: z.string().nullable().optional(),
  squash_commit_sha: z.string().nullable().optional(),
  merged_by: User.nullable().optional(),
  merge_user: User.nullable().optional(),
  labels: z.array(z.string()),
  has_conflicts: z.boolean().optional(),
  /** `mergeable`, `conflict`, `checking`, `unchecked`, … (GitLab 15.6+). */
  detailed_merge_status: z.string().optional(),
  /** The pipeline of the merge request's head (single reads only; a merged-results pipeline runs on a merge ref's sha). */
  head_pipeline: z
    .object({ id: z.number().int(), sha: z.string(), status: z.string() })
    .nullable()
    .optional(),
});
export type GitLabMergeRequest = z.infer<typeof GitLabMergeRequestSchema>;

export const GitLabPipelinesSchema = z.array(
  z.object({ id: z.number().int(), sha: z.string(), status: z.string() }),
);

export const GitLabJobsSchema = z.array(
  z.object({
    id: z.number().int(),
    name: z.string(),
    status: z.string(),
    web_url: z.string(),
    allow_failure: z.boolean().optional(),
  }),
);

/** The statuses of a commit: its pipelines' jobs and external CI statuses (`POST …/statuses/:sha`). */
export const GitLabCommitStatusesSchema = z.array(
  z.object({
    id: z.number().int(),
    name: z.string(),
    status: z.string(),
    target_url: z.string().nullable().optional(),
    allow_failure: z.boolean().optional(),
    pipeline_id: z.number().int().nullable().optional(),
  }),
);

/** The diff versions of a merge request, newest first: one per push to its source branch. */
export const GitLabVersionsSchema = z.array(
  z.object({ head_commit_sha: z.string(), created_at: z.string() }),
);

export const GitLabReviewersSchema = z.array(
  z.object({
    user: User.extend({ id: z.number().int() }),
    state: z.string(),
    created_at: z.string().optional(),
  }),
);

export const GitLabApprovalsSchema = z.object({
  approved_by: z.array(z.object({ user: User.extend({ id: z.number().int() }) })).optional(),
});

export const GitLabDiscussionsSchema = z.array(
  z.object({
    id: z.string(),
    notes: z.array(
      z.object({
        id: z.number().int(),
        type: z.string().nullable(),
        body: z.string(),
        author: User,
        created_at: z.string(),
        resolvable: z.boolean().optional(),
        resolved: z.boolean().optional(),
        system: z.boolean().optional(),
        position: z
          .object({
            new_path: z.string().nullable().optional(),
            new_line: z.number().int().nullable().optional(),
          })
          .nullable()
          .optional(),
      }),
    ),
  }),
);

export const GitLabProjectSchema = z.object({
  default_branch: z.string().nullable(),
  permissions: z
    .object({
      project_access: z.object({ access_level: z.number().int() }).nullable(),
      group_access: z.object({ access_level: z.number().int() }).nullable(),
    })
    .optional(),
});

export const GitLabTokenSelfSchema = z.object({ scopes: z.array(z.string()), active: z.boolean() });

export const GitLabUserSchema = User;

/** Notes of a merge request: conversation comments, system notes and diff notes alike. */
export const GitLabNotesSchema = z.array(
  z.object({
    id: z.number().int(),
    author: User,
    body: z.string(),
    created_at: z.string(),
    system: z.boolean(),
    type: z.string().nullable().optional(),
  }),
);
