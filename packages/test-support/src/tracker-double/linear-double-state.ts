/**
 * What the Linear double holds: a workspace of users, teams with their workflow states and labels,
 * issues with "blocks" relations, and comments. People act through the double's methods (a human
 * comments, moves an issue, assigns it); the adapter acts through the GraphQL API.
 */
import { randomUUID } from "node:crypto";

export type LinearStateType = "triage" | "backlog" | "unstarted" | "started" | "completed" | "canceled";

export interface LinearDoubleUser {
  readonly id: string;
  readonly name: string;
  readonly displayName: string;
  readonly email: string;
  /** The API key that authenticates as this user (`Authorization: <key>`). */
  readonly apiKey: string;
}

export interface LinearDoubleState {
  readonly id: string;
  readonly name: string;
  readonly type: LinearStateType;
  readonly position: number;
  readonly teamId: string;
}

export interface LinearDoubleTeam {
  readonly id: string;
  readonly key: string;
  readonly name: string;
}

export interface LinearDoubleLabel {
  readonly id: string;
  readonly name: string;
  readonly teamId: string | null;
}

export interface LinearDoubleIssue {
  readonly id: string;
  readonly number: number;
  readonly teamId: string;
  readonly createdAt: string;
  title: string;
  description: string;
  stateId: string;
  labelIds: string[];
  assigneeId: string | null;
  updatedAt: string;
}

export interface LinearDoubleComment {
  readonly id: string;
  readonly issueId: string;
  readonly userId: string;
  readonly body: string;
  readonly createdAt: string;
}

export interface LinearDoubleRelation {
  readonly id: string;
  readonly type: "blocks" | "related" | "duplicate";
  /** The issue that blocks … */
  readonly issueId: string;
  /** … this one. */
  readonly relatedIssueId: string;
}

const DEFAULT_STATES: readonly [string, LinearStateType][] = [
  ["Backlog", "backlog"],
  ["Todo", "unstarted"],
  ["In Progress", "started"],
  ["In Review", "started"],
  ["Done", "completed"],
  ["Canceled", "canceled"],
];

/** A strictly increasing clock, so every change has its own `updatedAt`. */
export class LinearClock {
  #last = 0;
  now(): string {
    this.#last = Math.max(Date.now(), this.#last + 1);
    return new Date(this.#last).toISOString();
  }
}

export class LinearDoubleWorkspace {
  readonly organizationId = randomUUID();
  readonly users: LinearDoubleUser[] = [];
  readonly teams: LinearDoubleTeam[] = [];
  readonly states: LinearDoubleState[] = [];
  readonly labels: LinearDoubleLabel[] = [];
  readonly issues: LinearDoubleIssue[] = [];
  readonly comments: LinearDoubleComment[] = [];
  readonly relations: LinearDoubleRelation[] = [];
  readonly clock = new LinearClock();
  #syncId = 1000;

  nextSyncId(): number {
    this.#syncId += 1;
    return this.#syncId;
  }

  addUser(name: string): LinearDoubleUser {
    const user = {
      id: randomUUID(),
      name,
      displayName: name.toLowerCase().replace(/\s+/g, "-"),
      email: `${name.toLowerCase().replace(/\s+/g, ".")}@example.test`,
      apiKey: `lin_api_${randomUUID().replace(/-/g, "")}`,
    };
    this.users.push(user);
    return user;
  }

  /** A team with Linear's default workflow: Backlog, Todo, In Progress, In Review, Done, Canceled. */
  addTeam(key: string, name = key): LinearDoubleTeam {
    const team = { id: randomUUID(), key, name };
    this.teams.push(team);
    DEFAULT_STATES.forEach(([stateName, type], position) => {
      this.states.push({ id: randomUUID(), name: stateName, type, position, teamId: team.id });
    });
    return team;
  }

  addLabel(name: string, teamId: string | null = null): LinearDoubleLabel {
    const label = { id: randomUUID(), name, teamId };
    this.labels.push(label);
    return label;
  }

  user(id: string | null): LinearDoubleUser | null {
    return this.users.find((u) => u.id === id) ?? null;
  }

  team(id: string): LinearDoubleTeam {
    const team = this.teams.find((t) => t.id === id);
    if (!team) throw new Error(`no team ${id}`);
    return team;
  }

  state(id: string): LinearDoubleState {
    const state = this.states.find((s) => s.id === id);
    if (!state) throw new Error(`no workflow state ${id}`);
    return state;
  }

  stateNamed(teamId: string, name: string): LinearDoubleState {
    const state = this.states.find((s) => s.teamId === teamId && s.name === name);
    if (!state) throw new Error(`team ${teamId} has no workflow state "${name}"`);
    return state;
  }

  identifier(issue: LinearDoubleIssue): string {
    return `${this.team(issue.teamId).key}-${issue.number}`;
  }

  /** An issue by uuid or by identifier (`ENG-12`), as Linear's `issue(id:)` takes either. */
  issue(idOrKey: string): LinearDoubleIssue | null {
    return this.issues.find((i) => i.id === idOrKey || this.identifier(i) === idOrKey) ?? null;
  }
}
