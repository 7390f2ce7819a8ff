/**
 * The parts of Gitea's / Forgejo's REST v1 answers the Gitea adapter reads (gitea-js's types,
 * generated from Gitea's swagger, describe the rest). Unknown fields are dropped.
 */
import { z } from "zod";

const User = z.object({ login: z.string() });

export const GiteaPullSchema = z.object({
  number: z.number().int(),
  html_url: z.string(),
  state: z.enum(["open", "closed"]),
  title: z.string(),
  body: z.string().nullable().optional(),
  head: z.object({ ref: z.string(), sha: z.string() }),
  base: z.object({ ref: z.string() }),
  merged: z.boolean(),
  mergeable: z.boolean().optional(),
  merge_commit_sha: z.string().nullable().optional(),
  merged_by: User.nullable().optional(),
  labels: z
    .array(z.object({ name: z.string() }))
    .nullable()
    .optional(),
});
export type GiteaPull = z.infer<typeof GiteaPullSchema>;

export const GiteaStatusesSchema = z.array(
  z.object({
    id: z.number().int(),
    context: z.string(),
    status: z.enum(["pending", "success", "error", "failure", "warning"]),
    target_url: z.string().nullable().optional(),
    description: z.string().nullable().optional(),
  }),
);

export const GiteaReviewsSchema = z.array(
  z.object({
    id: z.number().int(),
    user: User.nullable().optional(),
    state: z.string(),
    body: z.string().optional(),
    commit_id: z.string().optional(),
    submitted_at: z.string().optional(),
    comments_count: z.number().int().optional(),
  }),
);

export const GiteaReviewCommentsSchema = z.array(
  z.object({
    id: z.number().int(),
    body: z.string(),
    path: z.string(),
    position: z.number().int().optional(),
    original_position: z.number().int().optional(),
    user: User.nullable().optional(),
    resolver: User.nullable().optional(),
    created_at: z.string(),
  }),
);

export const GiteaRepoSchema = z.object({
  default_branch: z.string(),
  permissions: z.object({ admin: z.boolean(), push: z.boolean(), pull: z.boolean() }).optional(),
});

export const GiteaUserSchema = User;

export const GiteaCommentsSchema = z.array(
  z.object({
    id: z.number().int(),
    user: User.nullable().optional(),
    body: z.string(),
    created_at: z.string(),
  }),
);

/** Gitea ≥ 1.24: `GET /repos/{owner}/{repo}/actions/runs` (ActionWorkflowRunsResponse). */
export const GiteaActionRunsSchema = z.object({
  workflow_runs: z
    .array(z.object({ id: z.number().int(), html_url: z.string(), head_sha: z.string() }))
    .nullable(),
});

/** Gitea ≥ 1.24: `GET /repos/{owner}/{repo}/actions/runs/{run}/jobs` (ActionWorkflowJobsResponse). */
export const GiteaActionJobsSchema = z.object({
  jobs: z.array(z.object({ id: z.number().int(), html_url: z.string(), name: z.string() })).nullable(),
});

export const GiteaLabelSchema = z.object({ id: z.number().int(), name: z.string() });
export const GiteaLabelsSchema = z.array(GiteaLabelSchema);
