import {
  PULL_REQUEST_CHECK_STATES,
  PULL_REQUEST_REVIEW_STATES,
  PULL_REQUEST_STATUSES,
  type TaskStatus,
} from "@overseer/domain";
import { z } from "./openapi-zod.ts";

/**
 * A task's pull request (`landing.mode: pull_request`, docs/state-machine.md rules 14–19), as
 * the API shows it on every task; null for a task that never had one.
 */
export const TaskPullRequestSchema = z
  .object({
    number: z.number().int().nullable().openapi({
      description: "The forge's number (GitLab: the merge request iid); null until the forge opened it.",
      example: 42,
    }),
    url: z.string().nullable().openapi({ example: "https://github.com/acme/shop/pull/42" }),
    branch: z
      .string()
      .openapi({ description: "The head branch: `overseer/pr/<task>`.", example: "overseer/pr/S01-3" }),
    base: z.string().openapi({
      description: "The branch it targets: the landing branch, or a stacked prerequisite's PR branch.",
      example: "main",
    }),
    head_sha: z.string().openapi({ description: "The approved head the PR branch carries." }),
    status: z.enum(PULL_REQUEST_STATUSES),
    checks: z.enum(PULL_REQUEST_CHECK_STATES).openapi({ description: "The checks of the approved head." }),
    review: z
      .enum(PULL_REQUEST_REVIEW_STATES)
      .openapi({ description: "The human review of the approved head." }),
    approvals: z.number().int(),
    ci_failures: z.number().int().openapi({ description: "Red CI rounds in a row." }),
    merge_commit_sha: z.string().nullable(),
    merged_by: z.string().nullable(),
  })
  .openapi("TaskPullRequest");

/**
 * Task statuses as the Argus routes show them (docs/argus-compatibility.md): Argus knows no
 * `pr_open`, so an approved task waiting on its pull request is `review` there (its
 * `pull_request` field says why).
 */
export const ARGUS_TASK_STATUSES = [
  "todo",
  "in_progress",
  "review",
  "done",
  "blocked",
  "awaiting_input",
  "cancelled",
] as const satisfies readonly TaskStatus[];
export type ArgusTaskStatus = (typeof ARGUS_TASK_STATUSES)[number];

export function argusTaskStatus(status: TaskStatus): ArgusTaskStatus {
  return status === "pr_open" ? "review" : status;
}
