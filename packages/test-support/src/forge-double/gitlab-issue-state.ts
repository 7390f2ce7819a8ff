/**
 * The GitLab double's issues: per project, each with its labels, assignees, notes and
 * `is_blocked_by` links, the REST bodies built over GitLab's documented examples
 * (gitlab-issue-examples.ts), and the `Issue Hook` / `Note Hook` deliveries a change makes.
 */
import { fromExample } from "./example-contract.ts";
import type { GITLAB_USER_EXAMPLE } from "./gitlab-examples.ts";
import {
  GITLAB_ISSUE_EXAMPLE,
  GITLAB_ISSUE_HOOK_EXAMPLE,
  GITLAB_ISSUE_LINK_EXAMPLE,
  GITLAB_ISSUE_NOTE_EXAMPLE,
  GITLAB_ISSUE_NOTE_HOOK_EXAMPLE,
} from "./gitlab-issue-examples.ts";

export interface GitLabIssueNote {
  id: number;
  author: string;
  body: string;
  createdAt: string;
  system: boolean;
}

export interface GitLabIssue {
  id: number;
  iid: number;
  title: string;
  description: string;
  state: "opened" | "closed";
  author: string;
  labels: string[];
  assignees: string[];
  /** iids of issues of the same project this one `is_blocked_by`. */
  blockedBy: number[];
  notes: GitLabIssueNote[];
  createdAt: string;
  updatedAt: string;
}

/** What the store needs of the double: its URL, ids, a user's body and webhook delivery. */
export interface GitLabIssueHost {
  url(): string;
  nextId(): number;
  user(username: string): typeof GITLAB_USER_EXAMPLE;
  deliver(event: string, payload: unknown): void;
}

export interface IssueProject {
  readonly id: number;
  readonly path: string;
}

export class GitLabIssueStore {
  readonly #issues = new Map<number, GitLabIssue[]>();

  constructor(readonly host: GitLabIssueHost) {}

  of(project: IssueProject): GitLabIssue[] {
    let issues = this.#issues.get(project.id);
    if (!issues) {
      issues = [];
      this.#issues.set(project.id, issues);
    }
    return issues;
  }

  find(project: IssueProject, iid: number): GitLabIssue | undefined {
    return this.of(project).find((i) => i.iid === iid);
  }

  open(
    project: IssueProject,
    input: {
      title: string;
      description?: string;
      author: string;
      labels?: readonly string[];
      assignees?: readonly string[];
      blockedBy?: readonly number[];
    },
  ): GitLabIssue {
    const now = new Date().toISOString();
    const issues = this.of(project);
    const issue: GitLabIssue = {
      id: this.host.nextId(),
      iid: issues.length + 1,
      title: input.title,
      description: input.description ?? "",
      state: "opened",
      author: input.author,
      labels: [...(input.labels ?? [])],
      assignees: [...(input.assignees ?? [])],
      blockedBy: [...(input.blockedBy ?? [])],
      notes: [],
      createdAt: now,
      updatedAt: now,
    };
    issues.push(issue);
    this.hookIssue(project, issue, "open", input.author);
    return issue;
  }

  addNote(
    project: IssueProject,
    issue: GitLabIssue,
    author: string,
    body: string,
    system = false,
  ): GitLabIssueNote {
    const note = { id: this.host.nextId(), author, body, createdAt: new Date().toISOString(), system };
    issue.notes.push(note);
    issue.updatedAt = note.createdAt;
    if (!system) this.hookNote(project, issue, note);
    return note;
  }

  /** Closes or reopens (GitLab's system note "closed" / "reopened"); the Issue Hook's action. */
  setState(project: IssueProject, issue: GitLabIssue, state: "opened" | "closed", by: string): void {
    if (issue.state === state) return;
    issue.state = state;
    this.addNote(project, issue, by, state === "closed" ? "closed" : "reopened", true);
    this.hookIssue(project, issue, state === "closed" ? "close" : "reopen", by);
  }

  webUrl(project: IssueProject, issue: GitLabIssue): string {
    return `${this.host.url()}/${project.path}/-/issues/${issue.iid}`;
  }

  body(project: IssueProject, issue: GitLabIssue): Record<string, unknown> {
    const api = `${this.host.url()}/api/v4/projects/${project.id}/issues/${issue.iid}`;
    const assignees = issue.assignees.map((a) => this.host.user(a));
    return fromExample(GITLAB_ISSUE_EXAMPLE, {
      id: issue.id,
      iid: issue.iid,
      project_id: project.id,
      title: issue.title,
      description: issue.description,
      state: issue.state,
      created_at: issue.createdAt,
      updated_at: issue.updatedAt,
      labels: issue.labels,
      assignees,
      assignee: assignees[0] ?? null,
      author: this.host.user(issue.author),
      user_notes_count: issue.notes.filter((n) => !n.system).length,
      web_url: this.webUrl(project, issue),
      _links: {
        self: api,
        notes: `${api}/notes`,
        award_emoji: `${api}/award_emoji`,
        project: `${this.host.url()}/api/v4/projects/${project.id}`,
      },
      references: { short: `#${issue.iid}`, relative: `#${issue.iid}`, full: `${project.path}#${issue.iid}` },
    });
  }

  noteBody(project: IssueProject, issue: GitLabIssue, note: GitLabIssueNote): Record<string, unknown> {
    return fromExample(GITLAB_ISSUE_NOTE_EXAMPLE, {
      id: note.id,
      body: note.body,
      author: this.host.user(note.author),
      created_at: note.createdAt,
      updated_at: note.createdAt,
      system: note.system,
      noteable_id: issue.id,
      noteable_iid: issue.iid,
      project_id: project.id,
    });
  }

  /** The issue's links: its blockers (`is_blocked_by`) and the issues it blocks (`blocks`). */
  linkBodies(project: IssueProject, issue: GitLabIssue): Record<string, unknown>[] {
    const link = (other: GitLabIssue, type: "is_blocked_by" | "blocks") => ({
      ...fromExample(GITLAB_ISSUE_LINK_EXAMPLE, {
        id: other.id,
        iid: other.iid,
        issue_link_id: Math.min(issue.id, other.id) * 1000 + Math.max(issue.id, other.id),
        project_id: project.id,
        title: other.title,
        state: other.state,
        labels: other.labels,
        author: this.host.user(other.author),
        description: other.description,
        web_url: this.webUrl(project, other),
        updated_at: other.updatedAt,
        link_type: type,
      }),
      assignees: other.assignees.map((a) => this.host.user(a)),
    });
    const issues = this.of(project);
    const blockers = issues
      .filter((i) => issue.blockedBy.includes(i.iid))
      .map((i) => link(i, "is_blocked_by"));
    const blocked = issues.filter((i) => i.blockedBy.includes(issue.iid)).map((i) => link(i, "blocks"));
    return [...blockers, ...blocked];
  }

  hookIssue(project: IssueProject, issue: GitLabIssue, action: string, by: string): void {
    const example = GITLAB_ISSUE_HOOK_EXAMPLE;
    const user = this.host.user(by);
    this.host.deliver("Issue Hook", {
      ...example,
      user: { ...example.user, id: user.id, name: user.name, username: user.username },
      project: { ...example.project, id: project.id, path_with_namespace: project.path },
      object_attributes: {
        ...example.object_attributes,
        id: issue.id,
        iid: issue.iid,
        title: issue.title,
        description: issue.description,
        project_id: project.id,
        state: issue.state,
        state_id: issue.state === "opened" ? 1 : 2,
        action,
        url: this.webUrl(project, issue),
        updated_at: issue.updatedAt,
        labels: issue.labels.map((title) => ({ ...example.labels[0], title })),
      },
      labels: issue.labels.map((title) => ({ ...example.labels[0], title })),
    });
  }

  hookNote(project: IssueProject, issue: GitLabIssue, note: GitLabIssueNote): void {
    const example = GITLAB_ISSUE_NOTE_HOOK_EXAMPLE;
    const user = this.host.user(note.author);
    this.host.deliver("Note Hook", {
      ...example,
      user: { ...example.user, id: user.id, name: user.name, username: user.username },
      project_id: project.id,
      project: { ...example.project, id: project.id, path_with_namespace: project.path },
      object_attributes: {
        ...example.object_attributes,
        id: note.id,
        note: note.body,
        project_id: project.id,
        noteable_id: issue.id,
        created_at: note.createdAt,
        updated_at: note.createdAt,
        url: `${this.webUrl(project, issue)}#note_${note.id}`,
      },
      issue: {
        ...example.issue,
        id: issue.id,
        iid: issue.iid,
        title: issue.title,
        description: issue.description,
        project_id: project.id,
        state: issue.state,
      },
    });
  }
}
