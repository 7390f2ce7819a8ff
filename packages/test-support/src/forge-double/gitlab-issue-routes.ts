/**
 * The GitLab double's issue routes (doc/api/issues.md "List project issues", "Single project
 * issue", "Edit an issue"; notes.md "List project issue notes", "Create new issue note";
 * issue_links.md "List issue relations"): the query and body GitLab documents (strict), each
 * answer checked against the documented example's shape.
 */
import { z } from "zod";
import { type ContractRoute, shapeOf } from "./example-contract.ts";
import {
  GITLAB_ISSUE_EXAMPLE,
  GITLAB_ISSUE_LINK_EXAMPLE,
  GITLAB_ISSUE_NOTE_EXAMPLE,
} from "./gitlab-issue-examples.ts";
import {
  canWrite,
  denied,
  forbidden,
  type GitLabRouteContext,
  int,
  notFound,
  paging,
} from "./gitlab-route-helpers.ts";

const ISSUE = "/projects/{id}/issues/{issue_iid}";
const when = z.string().datetime({ offset: true });
const names = z.array(z.string()).or(z.string());

const ListQuery = z.strictObject({
  assignee_id: z.string().optional(),
  assignee_username: names.optional(),
  "assignee_username[]": names.optional(),
  author_id: int.optional(),
  author_username: z.string().optional(),
  confidential: z.enum(["true", "false"]).optional(),
  created_after: when.optional(),
  created_before: when.optional(),
  due_date: z.string().optional(),
  epic_id: int.optional(),
  health_status: z.string().optional(),
  "iids[]": names.optional(),
  in: z.string().optional(),
  issue_type: z.enum(["issue", "incident", "test_case", "task"]).optional(),
  iteration_id: int.optional(),
  iteration_title: z.string().optional(),
  labels: z.string().optional(),
  milestone: z.string().optional(),
  milestone_id: z.string().optional(),
  my_reaction_emoji: z.string().optional(),
  non_archived: z.enum(["true", "false"]).optional(),
  order_by: z
    .enum([
      "created_at",
      "due_date",
      "label_priority",
      "milestone_due",
      "popularity",
      "priority",
      "relative_position",
      "title",
      "updated_at",
      "weight",
    ])
    .optional(),
  scope: z.enum(["created_by_me", "assigned_to_me", "all"]).optional(),
  search: z.string().optional(),
  sort: z.enum(["asc", "desc"]).optional(),
  state: z.enum(["opened", "closed", "all"]).optional(),
  updated_after: when.optional(),
  updated_before: when.optional(),
  weight: int.optional(),
  with_labels_details: z.enum(["true", "false"]).optional(),
  ...paging,
});

const issueOf = ({ project, params, issues }: GitLabRouteContext & { params: Record<string, string> }) =>
  issues.find(project, Number(params.issue_iid));

export function gitlabIssueRoutes(): ContractRoute<GitLabRouteContext>[] {
  return [
    {
      method: "GET",
      template: "/projects/{id}/issues",
      query: ListQuery,
      responses: { 200: z.array(shapeOf(GITLAB_ISSUE_EXAMPLE)), ...denied },
      handle: ({ project, query, issues }) => {
        const state = query.get("state") ?? "all";
        const labels = (query.get("labels") ?? "").split(",").filter((l) => l !== "");
        const assignees = [...query.getAll("assignee_username"), ...query.getAll("assignee_username[]")];
        const after = query.get("updated_after");
        let found = issues
          .of(project)
          .filter(
            (i) =>
              (state === "all" || i.state === state) &&
              labels.every((l) => i.labels.includes(l)) &&
              assignees.every((a) => i.assignees.includes(a)) &&
              (!after || Date.parse(i.updatedAt) >= Date.parse(after)),
          );
        const key = query.get("order_by") === "updated_at" ? "updatedAt" : "createdAt";
        found = [...found].sort((a, b) => a[key].localeCompare(b[key]) || a.id - b.id);
        if (query.get("sort") !== "asc") found.reverse();
        return { status: 200, body: found.map((i) => issues.body(project, i)) };
      },
    },
    {
      method: "GET",
      template: ISSUE,
      responses: { 200: shapeOf(GITLAB_ISSUE_EXAMPLE), ...denied },
      handle: (ctx) => {
        const issue = issueOf(ctx);
        return issue ? { status: 200, body: ctx.issues.body(ctx.project, issue) } : notFound("Issue");
      },
    },
    {
      method: "PUT",
      template: ISSUE,
      body: z.strictObject({
        add_labels: z.string().optional(),
        assignee_ids: z.array(z.number().int()).optional(),
        confidential: z.boolean().optional(),
        description: z.string().max(1_048_576).optional(),
        discussion_locked: z.boolean().optional(),
        due_date: z.string().optional(),
        epic_id: z.number().int().optional(),
        epic_iid: z.number().int().optional(),
        issue_type: z.enum(["issue", "incident", "test_case", "task"]).optional(),
        labels: z.string().optional(),
        milestone_id: z.number().int().optional(),
        remove_labels: z.string().optional(),
        state_event: z.enum(["close", "reopen"]).optional(),
        title: z.string().min(1).max(255).optional(),
        updated_at: z.string().optional(),
        weight: z.number().int().optional(),
      }),
      responses: { 200: shapeOf(GITLAB_ISSUE_EXAMPLE), ...denied },
      handle: (ctx) => {
        const { project, body, user, issues } = ctx;
        if (!canWrite(user)) return forbidden();
        const issue = issueOf(ctx);
        if (!issue) return notFound("Issue");
        const list = (v: unknown) => (typeof v === "string" ? v.split(",").map((l) => l.trim()) : []);
        const before = JSON.stringify(issue.labels);
        if (typeof body.labels === "string") issue.labels = list(body.labels);
        for (const label of list(body.add_labels))
          if (!issue.labels.includes(label)) issue.labels.push(label);
        const removed = list(body.remove_labels);
        issue.labels = issue.labels.filter((l) => !removed.includes(l));
        if (typeof body.title === "string") issue.title = body.title;
        if (typeof body.description === "string") issue.description = body.description;
        issue.updatedAt = new Date().toISOString();
        if (body.state_event)
          issues.setState(project, issue, body.state_event === "close" ? "closed" : "opened", user.username);
        else if (JSON.stringify(issue.labels) !== before || body.title || body.description)
          issues.hookIssue(project, issue, "update", user.username);
        return { status: 200, body: issues.body(project, issue) };
      },
    },
    {
      method: "GET",
      template: `${ISSUE}/notes`,
      query: z.strictObject({
        sort: z.enum(["asc", "desc"]).optional(),
        order_by: z.enum(["created_at", "updated_at"]).optional(),
        ...paging,
      }),
      responses: { 200: z.array(shapeOf(GITLAB_ISSUE_NOTE_EXAMPLE)), ...denied },
      handle: (ctx) => {
        const issue = issueOf(ctx);
        if (!issue) return notFound("Issue");
        const notes = ctx.query.get("sort") === "asc" ? issue.notes : [...issue.notes].reverse();
        return { status: 200, body: notes.map((n) => ctx.issues.noteBody(ctx.project, issue, n)) };
      },
    },
    {
      method: "POST",
      template: `${ISSUE}/notes`,
      body: z.strictObject({
        body: z.string().min(1).max(1_000_000),
        confidential: z.boolean().optional(),
        internal: z.boolean().optional(),
        created_at: z.string().optional(),
      }),
      responses: { 201: shapeOf(GITLAB_ISSUE_NOTE_EXAMPLE), 400: shapeOf({ message: "" }), ...denied },
      handle: (ctx) => {
        // Reporters and up may comment; a token without the api scope may not write.
        if (!(ctx.user.scopes ?? ["api"]).includes("api")) return forbidden();
        const issue = issueOf(ctx);
        if (!issue) return notFound("Issue");
        const note = ctx.issues.addNote(ctx.project, issue, ctx.user.username, String(ctx.body.body));
        return { status: 201, body: ctx.issues.noteBody(ctx.project, issue, note) };
      },
    },
    {
      method: "GET",
      template: `${ISSUE}/links`,
      query: z.strictObject({ ...paging }),
      responses: { 200: z.array(shapeOf(GITLAB_ISSUE_LINK_EXAMPLE)), ...denied },
      handle: (ctx) => {
        const issue = issueOf(ctx);
        return issue ? { status: 200, body: ctx.issues.linkBodies(ctx.project, issue) } : notFound("Issue");
      },
    },
  ];
}
