/** What the GitHub Issues adapter reads of GitHub's answers (zod: a surprise fails loudly). */
import { z } from "zod";

const Login = z.object({ login: z.string() });
const Label = z.union([z.string(), z.object({ name: z.string().optional() })]);

export const GitHubIssueSchema = z.object({
  number: z.number().int(),
  html_url: z.string(),
  title: z.string(),
  body: z.string().nullish(),
  state: z.string(),
  state_reason: z.string().nullish(),
  labels: z.array(Label),
  assignees: z.array(Login).nullish(),
  updated_at: z.string(),
  /** Present on pull requests, which the issues endpoints list too. */
  pull_request: z.unknown().optional(),
});
export type GitHubIssue = z.infer<typeof GitHubIssueSchema>;

export const GitHubIssueCommentSchema = z.object({
  id: z.number().int(),
  body: z.string().nullish(),
  user: Login.nullable(),
  created_at: z.string(),
});

export const GitHubBlockerSchema = z.object({ number: z.number().int() });

export const GitHubLoginSchema = Login;

/** A webhook delivery's part intake reads: which issue, and whether it is a pull request. */
export const GitHubIssueHookSchema = z.object({
  action: z.string().optional(),
  issue: z.object({ number: z.number().int(), pull_request: z.unknown().optional() }),
});

export function labelNames(labels: GitHubIssue["labels"]): string[] {
  return labels
    .map((label) => (typeof label === "string" ? label : (label.name ?? "")))
    .filter((name) => name !== "");
}
