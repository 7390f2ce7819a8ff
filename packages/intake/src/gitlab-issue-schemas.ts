/** What the GitLab issues adapter reads of GitLab's answers (zod: a surprise fails loudly). */
import { z } from "zod";

const User = z.object({ username: z.string() });
const Label = z.union([z.string(), z.object({ name: z.string() })]);

/** An issue (doc/api/issues.md); `state` is `opened` or `closed`. */
export const GitLabIssueSchema = z.object({
  iid: z.number().int(),
  project_id: z.number().int(),
  title: z.string(),
  description: z.string().nullish(),
  state: z.string(),
  labels: z.array(Label),
  assignees: z.array(User).nullish(),
  web_url: z.string(),
  updated_at: z.string(),
  references: z.object({ full: z.string() }).partial().nullish(),
});
export type GitLabIssue = z.infer<typeof GitLabIssueSchema>;

/** A note (doc/api/notes.md); system notes ("changed the description") are not comments. */
export const GitLabNoteSchema = z.object({
  id: z.number().int(),
  body: z.string(),
  author: User,
  created_at: z.string(),
  system: z.boolean(),
});

/** A linked issue (doc/api/issue_links.md "List issue relations"). */
export const GitLabIssueLinkSchema = z.object({
  iid: z.number().int(),
  project_id: z.number().int(),
  link_type: z.string(),
});

export const GitLabUserSchema = User;

/** A webhook delivery's part intake reads: which issue (an Issue Hook's object, a Note Hook's issue). */
export const GitLabIssueHookSchema = z.object({
  object_kind: z.literal("issue"),
  object_attributes: z.object({ iid: z.number().int() }),
});
export const GitLabNoteHookSchema = z.object({
  object_kind: z.literal("note"),
  object_attributes: z.object({ noteable_type: z.string() }),
  issue: z.object({ iid: z.number().int() }).nullish(),
});

export function gitlabLabelNames(labels: GitLabIssue["labels"]): string[] {
  return labels
    .map((label) => (typeof label === "string" ? label : label.name))
    .filter((name) => name !== "");
}
