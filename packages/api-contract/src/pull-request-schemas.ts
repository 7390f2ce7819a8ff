import {
  PREREQUISITE_MODES,
  PULL_REQUEST_CHECK_STATES,
  PULL_REQUEST_ON_CLOSED,
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
 * How a project's approved work lands through pull requests (runner config `landing.pull_request`
 * and `forge`, README "Land through pull requests"): the forge without its token, and the merge
 * policy. The value lists mirror `@overseer/project-config`'s (compared by the gateway's tests).
 */
export const PullRequestPolicySchema = z
  .object({
    forge: z.enum(["github", "gitlab", "gitea"]).openapi({ description: "The forge's kind." }),
    forge_url: z.string().openapi({ description: "The forge's web URL.", example: "https://github.com" }),
    repository: z
      .string()
      .openapi({ description: "The repository's path on the forge.", example: "acme/shop" }),
    merge: z.enum(["manual", "auto", "queue"]).openapi({
      description:
        "Who merges: `manual` (a person), `auto` (Overseer, once approved and green), `queue` (the forge's auto-merge, merge queue or merge train).",
    }),
    merge_method: z.enum(["merge", "squash", "rebase"]),
    required_approvals: z.number().int().openapi({ description: "Human approvals `auto` waits for." }),
    required_checks: z.array(z.string()).openapi({
      description: "Check names that gate the merge; [] = every check reported on the head.",
    }),
    prerequisites: z.enum(PREREQUISITE_MODES),
    on_closed: z.enum(PULL_REQUEST_ON_CLOSED),
  })
  .openapi("PullRequestPolicy");

/**
 * The merge policy in words, the same in `overseer status` and the dashboard: "merge: auto by
 * squash once 1 approval and checks ci green", "merge: manual (a person merges on the forge)",
 * "merge: queue (the forge's auto-merge or merge queue, by squash)".
 */
export function mergePolicyText(p: z.infer<typeof PullRequestPolicySchema>): string {
  const checks = p.required_checks.length === 0 ? "every check" : `checks ${p.required_checks.join(", ")}`;
  const approvals = `${p.required_approvals} approval${p.required_approvals === 1 ? "" : "s"}`;
  if (p.merge === "manual") return "merge: manual (a person merges on the forge)";
  if (p.merge === "queue")
    return `merge: queue (the forge's auto-merge or merge queue, by ${p.merge_method})`;
  return `merge: auto by ${p.merge_method} once ${approvals} and ${checks} green`;
}

/** An open pull request in the project status: its task, and the pull request as on the task. */
export const OpenPullRequestSchema = TaskPullRequestSchema.extend({
  task_id: z.string(),
  title: z.string(),
}).openapi("OpenPullRequest");

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
