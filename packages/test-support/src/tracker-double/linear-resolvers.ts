/**
 * The Linear double's GraphQL answers: the root fields and mutations the intake adapter uses
 * (`viewer`, `issues`, `issue`, `comment`, `issueLabels`, `commentCreate`, `issueUpdate`,
 * `issueAddLabel`, `issueRemoveLabel`, `issueLabelCreate`), executed by graphql-js against the
 * schema rebuilt from `@linear/sdk` (linear-schema.ts). Filters are evaluated for the comparators
 * and relations Linear documents; a filter field this double does not evaluate is a violation, not
 * a silent match.
 */
import { randomUUID } from "node:crypto";
import type {
  LinearDoubleComment,
  LinearDoubleIssue,
  LinearDoubleUser,
  LinearDoubleWorkspace,
} from "./linear-double-state.ts";

type Filter = Record<string, unknown>;
type Entity = Record<string, unknown>;

export interface LinearResolverContext {
  readonly workspace: LinearDoubleWorkspace;
  readonly viewer: LinearDoubleUser;
  readonly baseUrl: string;
  readonly violations: string[];
  /** Called after a change a webhook would report. */
  readonly changed: (
    what: "issue" | "comment",
    issue: LinearDoubleIssue,
    comment?: LinearDoubleComment,
  ) => void;
}

const COMPARATORS = new Set(["eq", "neq", "in", "nin", "gt", "gte", "lt", "lte", "eqIgnoreCase", "null"]);

/** Does `value` satisfy a Linear comparator (`{ eq }`, `{ in }`, `{ gt }`, …)? */
function compare(value: unknown, comparator: Filter, where: string): boolean {
  return Object.entries(comparator).every(([op, operand]) => {
    if (!COMPARATORS.has(op)) throw new Error(`the Linear double does not evaluate ${where}.${op}`);
    const v = value as string | number | boolean | null;
    switch (op) {
      case "eq":
        return v === operand;
      case "neq":
        return v !== operand;
      case "in":
        return (operand as unknown[]).includes(v);
      case "nin":
        return !(operand as unknown[]).includes(v);
      case "gt":
        return v !== null && v > (operand as string | number);
      case "gte":
        return v !== null && v >= (operand as string | number);
      case "lt":
        return v !== null && v < (operand as string | number);
      case "lte":
        return v !== null && v <= (operand as string | number);
      case "eqIgnoreCase":
        return typeof v === "string" && v.toLowerCase() === String(operand).toLowerCase();
      default:
        return operand ? v === null : v !== null;
    }
  });
}

/** Evaluates a Linear filter (`IssueFilter`, `CommentFilter`, …) on an entity. */
export function matches(entity: Entity | null, filter: Filter | null | undefined, where: string): boolean {
  if (!filter) return true;
  if (entity === null) return filter.null === true;
  return Object.entries(filter).every(([key, sub]) => {
    if (sub === null || sub === undefined) return true;
    if (key === "and") return (sub as Filter[]).every((f) => matches(entity, f, where));
    if (key === "or") return (sub as Filter[]).some((f) => matches(entity, f, where));
    if (key === "null") return false;
    if (!(key in entity)) throw new Error(`the Linear double does not evaluate ${where}.${key}`);
    const value = entity[key];
    const nested = sub as Filter;
    if (Array.isArray(value)) {
      return Object.entries(nested).every(([op, f]) => {
        const items = value as Entity[];
        if (op === "some") return items.some((item) => matches(item, f as Filter, `${where}.${key}`));
        if (op === "every") return items.every((item) => matches(item, f as Filter, `${where}.${key}`));
        throw new Error(`the Linear double does not evaluate ${where}.${key}.${op}`);
      });
    }
    if (value !== null && typeof value === "object")
      return matches(value as Entity, nested, `${where}.${key}`);
    if (value === null && !Object.keys(nested).some((k) => COMPARATORS.has(k))) return nested.null === true;
    return compare(value, nested, `${where}.${key}`);
  });
}

interface PageArgs {
  readonly first?: number | null;
  readonly after?: string | null;
}

/** A Relay connection over `items` (the cursor is a node id, as opaque as Linear's). */
function connection<T extends { id: string }>(items: T[], args: PageArgs) {
  let start = 0;
  if (args.after) start = items.findIndex((i) => i.id === args.after) + 1;
  const first = args.first ?? 50;
  const nodes = items.slice(start, start + first);
  return {
    nodes,
    pageInfo: {
      hasNextPage: start + first < items.length,
      hasPreviousPage: start > 0,
      startCursor: nodes[0]?.id ?? null,
      endCursor: nodes.at(-1)?.id ?? null,
    },
  };
}

function userNode(user: LinearDoubleUser | null, viewer: LinearDoubleUser) {
  if (!user) return null;
  const { apiKey: _key, ...fields } = user;
  return { ...fields, isMe: user.id === viewer.id, active: true };
}

function commentNode(context: LinearResolverContext, comment: LinearDoubleComment) {
  return {
    id: comment.id,
    body: comment.body,
    createdAt: comment.createdAt,
    updatedAt: comment.createdAt,
    user: userNode(context.workspace.user(comment.userId), context.viewer),
    botActor: null,
    issue: (): unknown => issueNode(context, context.workspace.issue(comment.issueId) as LinearDoubleIssue),
  };
}

/** The filterable and selectable view of an issue. */
export function issueNode(context: LinearResolverContext, issue: LinearDoubleIssue) {
  const { workspace, viewer } = context;
  const state = workspace.state(issue.stateId);
  const team = workspace.team(issue.teamId);
  const identifier = workspace.identifier(issue);
  const labels = workspace.labels.filter((l) => issue.labelIds.includes(l.id));
  const relationNodes = (side: "issueId" | "relatedIssueId") =>
    workspace.relations
      .filter((r) => r[side] === issue.id)
      .map((r) => ({
        id: r.id,
        type: r.type,
        issue: () => issueNode(context, workspace.issue(r.issueId) as LinearDoubleIssue),
        relatedIssue: () => issueNode(context, workspace.issue(r.relatedIssueId) as LinearDoubleIssue),
      }));
  const comments = workspace.comments
    .filter((c) => c.issueId === issue.id)
    .map((c) => commentNode(context, c));
  return {
    id: issue.id,
    identifier,
    number: issue.number,
    title: issue.title,
    description: issue.description,
    url: `${context.baseUrl}/issue/${identifier}`,
    createdAt: issue.createdAt,
    updatedAt: issue.updatedAt,
    state: { ...state },
    team: {
      ...team,
      states: (args: PageArgs) =>
        connection(
          workspace.states.filter((s) => s.teamId === team.id),
          args,
        ),
    },
    assignee: userNode(workspace.user(issue.assigneeId), viewer),
    labels: (args: PageArgs & { filter?: Filter }) =>
      connection(
        labels.filter((l) => matches({ ...l }, args.filter, "IssueLabelFilter")),
        args,
      ),
    labelNames: labels.map((l) => ({ ...l })),
    comments: (args: PageArgs & { filter?: Filter }) =>
      connection(
        comments.filter((c) => matches(c as unknown as Entity, args.filter, "CommentFilter")),
        args,
      ),
    relations: (args: PageArgs) => connection(relationNodes("issueId"), args),
    inverseRelations: (args: PageArgs) => connection(relationNodes("relatedIssueId"), args),
  };
}

/** The entity an `IssueFilter` is evaluated on. */
function issueFilterView(context: LinearResolverContext, issue: LinearDoubleIssue): Entity {
  const node = issueNode(context, issue);
  return {
    id: issue.id,
    number: issue.number,
    title: issue.title,
    updatedAt: issue.updatedAt,
    createdAt: issue.createdAt,
    state: node.state,
    team: { id: node.team.id, key: node.team.key, name: node.team.name },
    assignee: node.assignee,
    labels: node.labelNames,
  };
}

export function rootValue(context: LinearResolverContext) {
  const { workspace } = context;
  const mustIssue = (id: string): LinearDoubleIssue => {
    const issue = workspace.issue(id);
    if (!issue) throw new Error("Entity not found: Issue");
    return issue;
  };
  const payload = (issue: LinearDoubleIssue) => ({
    lastSyncId: workspace.nextSyncId(),
    success: true,
    issue: issueNode(context, issue),
  });
  const touch = (issue: LinearDoubleIssue) => {
    issue.updatedAt = workspace.clock.now();
    context.changed("issue", issue);
    return payload(issue);
  };
  return {
    viewer: () => userNode(context.viewer, context.viewer),
    issues: (args: PageArgs & { filter?: Filter }) => {
      const found = workspace.issues.filter((i) =>
        matches(issueFilterView(context, i), args.filter, "IssueFilter"),
      );
      return connection(
        found.map((i) => issueNode(context, i)),
        args,
      );
    },
    issue: ({ id }: { id: string }) => issueNode(context, mustIssue(id)),
    comment: ({ id }: { id?: string }) => {
      const comment = workspace.comments.find((c) => c.id === id);
      if (!comment) throw new Error("Entity not found: Comment");
      return commentNode(context, comment);
    },
    issueLabels: (args: PageArgs & { filter?: Filter }) =>
      connection(
        workspace.labels.filter((l) => matches({ ...l }, args.filter, "IssueLabelFilter")),
        args,
      ),
    commentCreate: ({ input }: { input: { issueId?: string; body?: string; id?: string } }) => {
      const issue = mustIssue(input.issueId ?? "");
      if (input.id && workspace.comments.some((c) => c.id === input.id)) {
        throw new Error("Comment with this id already exists");
      }
      const comment = {
        id: input.id ?? randomUUID(),
        issueId: issue.id,
        userId: context.viewer.id,
        body: input.body ?? "",
        createdAt: workspace.clock.now(),
      };
      workspace.comments.push(comment);
      context.changed("comment", issue, comment);
      return { lastSyncId: workspace.nextSyncId(), success: true, comment: commentNode(context, comment) };
    },
    issueUpdate: ({ id, input }: { id: string; input: { stateId?: string; assigneeId?: string | null } }) => {
      const issue = mustIssue(id);
      if (input.stateId !== undefined) {
        const state = workspace.state(input.stateId);
        if (state.teamId !== issue.teamId) throw new Error("Workflow state belongs to another team");
        issue.stateId = state.id;
      }
      if (input.assigneeId !== undefined) issue.assigneeId = input.assigneeId;
      return touch(issue);
    },
    issueAddLabel: ({ id, labelId }: { id: string; labelId: string }) => {
      const issue = mustIssue(id);
      if (!workspace.labels.some((l) => l.id === labelId)) throw new Error("Entity not found: IssueLabel");
      if (!issue.labelIds.includes(labelId)) issue.labelIds.push(labelId);
      return touch(issue);
    },
    issueRemoveLabel: ({ id, labelId }: { id: string; labelId: string }) => {
      const issue = mustIssue(id);
      issue.labelIds = issue.labelIds.filter((l) => l !== labelId);
      return touch(issue);
    },
    issueLabelCreate: ({ input }: { input: { name: string; teamId?: string } }) => {
      const label = workspace.addLabel(input.name, input.teamId ?? null);
      return { lastSyncId: workspace.nextSyncId(), success: true, issueLabel: { ...label } };
    },
  };
}
