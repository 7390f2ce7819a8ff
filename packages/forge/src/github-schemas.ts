/**
 * The parts of GitHub's REST and GraphQL answers the GitHub adapter reads, as zod schemas
 * (GitHub's OpenAPI description, `@octokit/openapi`, is the full contract; the forge double
 * validates against it). Unknown fields are dropped.
 */
import { z } from "zod";

const Login = z.object({ login: z.string() });

export const GitHubPullSchema = z.object({
  number: z.number().int(),
  node_id: z.string(),
  html_url: z.string(),
  state: z.enum(["open", "closed"]),
  title: z.string(),
  body: z.string().nullable(),
  head: z.object({ ref: z.string(), sha: z.string() }),
  base: z.object({ ref: z.string() }),
  merged_at: z.string().nullable(),
  merge_commit_sha: z.string().nullable(),
  merged_by: Login.nullable().optional(),
  labels: z.array(z.object({ name: z.string() })),
  /** Only on a single pull request (GET pulls/{n}); `null` while GitHub computes it. */
  mergeable: z.boolean().nullable().optional(),
});
export type GitHubPull = z.infer<typeof GitHubPullSchema>;

export const GitHubCheckRunsSchema = z.object({
  total_count: z.number().int(),
  check_runs: z.array(
    z.object({
      id: z.number().int(),
      name: z.string(),
      status: z.string(),
      conclusion: z.string().nullable(),
      details_url: z.string().nullable(),
      html_url: z.string().nullable(),
      app: z.object({ slug: z.string().optional() }).nullable(),
    }),
  ),
});

export const GitHubCombinedStatusSchema = z.object({
  statuses: z.array(
    z.object({
      context: z.string(),
      state: z.enum(["error", "failure", "pending", "success"]),
      target_url: z.string().nullable(),
    }),
  ),
});

export const GitHubReviewsSchema = z.array(
  z.object({
    id: z.number().int(),
    user: Login.nullable(),
    state: z.string(),
    body: z.string(),
    commit_id: z.string().nullable(),
    submitted_at: z.string().optional(),
  }),
);

export const GitHubIssueCommentsSchema = z.array(
  z.object({
    id: z.number().int(),
    user: Login.nullable(),
    body: z.string().optional(),
    created_at: z.string(),
  }),
);

export const GitHubRepoSchema = z.object({
  default_branch: z.string(),
  permissions: z
    .object({ admin: z.boolean(), push: z.boolean(), pull: z.boolean(), maintain: z.boolean().optional() })
    .optional(),
});

export const GitHubMergeSchema = z.object({ sha: z.string(), merged: z.boolean() });

/** `GET /app` (an App's JWT): its slug names its bot account, `<slug>[bot]`. */
export const GitHubAppSchema = z.object({ id: z.number(), slug: z.string().min(1) });

export const GitHubUserSchema = Login;

/** `reviewThreads` of a pull request, as the adapter's GraphQL query asks for it. */
export const GitHubReviewThreadsSchema = z.object({
  repository: z.object({
    pullRequest: z.object({
      reviewThreads: z.object({
        nodes: z.array(
          z.object({
            id: z.string(),
            isResolved: z.boolean(),
            path: z.string(),
            line: z.number().int().nullable(),
            comments: z.object({
              nodes: z.array(
                z.object({
                  databaseId: z.number().int().nullable(),
                  author: Login.nullable(),
                  body: z.string(),
                  createdAt: z.string(),
                }),
              ),
            }),
          }),
        ),
      }),
    }),
  }),
});

export const GitHubAutoMergeSchema = z.object({
  enablePullRequestAutoMerge: z.object({
    pullRequest: z.object({ autoMergeRequest: z.object({ mergeMethod: z.string() }).nullable() }).nullable(),
  }),
});
