/** The GitHub double's state: its users, and per repository the pulls, checks, reviews and threads. */

import type { DoubleGit } from "./double-git.ts";

export interface GitHubDoubleUser {
  readonly login: string;
  readonly token: string;
  /** Repository role: `admin`, `write` (push), `read` or `none`. Default `write`. */
  readonly role?: "admin" | "write" | "read" | "none";
  /** Whether the token may read checks (fine-grained "Checks: read"). Default true. */
  readonly checksRead?: boolean;
}

export interface DoublePull {
  number: number;
  nodeId: string;
  head: string;
  base: string;
  title: string;
  body: string | null;
  state: "open" | "closed";
  author: string;
  labels: string[];
  mergedAt: string | null;
  mergedBy: string | null;
  mergeCommitSha: string | null;
  headShaAtClose: string | null;
  autoMerge: { method: string; by: string } | null;
  createdAt: string;
  updatedAt: string;
}

export interface CheckRun {
  id: number;
  name: string;
  sha: string;
  status: "queued" | "in_progress" | "completed";
  conclusion: "success" | "failure" | "neutral" | "cancelled" | "skipped" | "timed_out" | null;
  log: string;
}

export interface Review {
  id: number;
  pull: number;
  login: string;
  state: "APPROVED" | "CHANGES_REQUESTED" | "COMMENTED";
  body: string;
  commitId: string;
  submittedAt: string;
}

export interface Thread {
  id: string;
  pull: number;
  path: string;
  line: number;
  resolved: boolean;
  comments: { id: number; login: string; body: string; createdAt: string }[];
}

export interface IssueComment {
  id: number;
  issue: number;
  login: string;
  body: string;
  createdAt: string;
}

/** An issue (not a pull request): GitHub numbers both from one sequence per repository. */
export interface DoubleIssue {
  number: number;
  title: string;
  body: string | null;
  state: "open" | "closed";
  stateReason: "completed" | "not_planned" | "reopened" | null;
  author: string;
  labels: string[];
  assignees: string[];
  /** Numbers of the issues this one is blocked by (GitHub's issue dependencies). */
  blockedBy: number[];
  createdAt: string;
  updatedAt: string;
  closedAt: string | null;
}

export interface RepoState {
  pulls: DoublePull[];
  issues: DoubleIssue[];
  checkRuns: CheckRun[];
  statuses: {
    sha: string;
    context: string;
    state: "error" | "failure" | "pending" | "success";
    targetUrl: string | null;
    id: number;
    createdAt: string;
  }[];
  reviews: Review[];
  threads: Thread[];
  /** Conversation comments on issues and pull requests (GitHub's issue comments). */
  comments: IssueComment[];
  requiredChecks: string[];
}

export class GitHubDoubleState {
  readonly repos = new Map<string, RepoState>();
  readonly users: GitHubDoubleUser[] = [];
  #nextId = 1000;

  constructor(readonly git: DoubleGit) {}

  /** A fresh id for anything the double numbers (check runs, statuses, reviews, comments, node ids). */
  nextId(): number {
    return this.#nextId++;
  }

  repo(repository: string): RepoState {
    const state = this.repos.get(repository);
    if (!state) throw new Error(`The GitHub double has no repository ${repository}.`);
    return state;
  }

  pull(state: RepoState, number: number): DoublePull {
    const pull = state.pulls.find((p) => p.number === number);
    if (!pull) throw new Error(`No pull request #${number}.`);
    return pull;
  }

  async headSha(repository: string, pull: DoublePull): Promise<string> {
    if (pull.state === "closed" && pull.headShaAtClose) return pull.headShaAtClose;
    return (
      (await this.git.resolve(repository, `refs/heads/${pull.head}`)) ??
      "0000000000000000000000000000000000000000"
    );
  }

  authenticate(header: string | string[] | undefined): GitHubDoubleUser | null {
    const value = Array.isArray(header) ? header[0] : header;
    const token = value?.replace(/^(token|bearer)\s+/i, "");
    return this.users.find((u) => u.token === token) ?? null;
  }

  nextNumber(state: RepoState): number {
    return [...state.pulls, ...state.issues].reduce((max, p) => Math.max(max, p.number), 0) + 1;
  }
}

export function canWrite(user: GitHubDoubleUser): boolean {
  return (user.role ?? "write") === "write" || user.role === "admin";
}

export function latestByName(runs: readonly CheckRun[]): CheckRun[] {
  const latest = new Map<string, CheckRun>();
  for (const run of runs) latest.set(run.name, run);
  return [...latest.values()];
}

/** A fresh open issue, as a person opens one. */
export function newDoubleIssue(
  number: number,
  issue: {
    title: string;
    body?: string;
    labels?: string[];
    assignees?: string[];
    login?: string;
    blockedBy?: number[];
  },
): DoubleIssue {
  const now = new Date().toISOString();
  return {
    number,
    title: issue.title,
    body: issue.body ?? null,
    state: "open",
    stateReason: null,
    author: issue.login ?? "octocat",
    labels: [...(issue.labels ?? [])],
    assignees: [...(issue.assignees ?? [])],
    blockedBy: [...(issue.blockedBy ?? [])],
    createdAt: now,
    updatedAt: now,
    closedAt: null,
  };
}
