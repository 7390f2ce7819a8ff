/**
 * The Gitea double's state (users, repositories with their pull requests, labels, commit
 * statuses, reviews with inline comments, conversation comments), the bodies built from it over
 * the swagger-shaped examples, and Gitea's merge rules (closed → 404, required statuses green,
 * head as expected, no conflict; `merge_when_checks_succeed` schedules while checks are pending).
 */
import type { DoubleGit } from "./double-git.ts";
import type { ApiAnswer } from "./double-server.ts";
import {
  GITEA_ACTION_JOB_EXAMPLE,
  GITEA_ACTION_RUN_EXAMPLE,
  GITEA_COMMENT_EXAMPLE,
  GITEA_LABEL_EXAMPLE,
  GITEA_PULL_EXAMPLE,
  GITEA_REPOSITORY_EXAMPLE,
  GITEA_REVIEW_COMMENT_EXAMPLE,
  GITEA_REVIEW_EXAMPLE,
  GITEA_STATUS_EXAMPLE,
  GITEA_USER_EXAMPLE,
} from "./gitea-examples.ts";
import { hashId } from "./gitlab-double-state.ts";

export interface GiteaDoubleUser {
  readonly login: string;
  readonly token: string;
  /** Repository access: `admin`, `write` (default), `read` or `none`. */
  readonly permission?: "admin" | "write" | "read" | "none";
}

export type GiteaStatusState = "pending" | "success" | "error" | "failure" | "warning";

export interface GiteaPull {
  number: number;
  id: number;
  head: string;
  base: string;
  title: string;
  body: string;
  state: "open" | "closed";
  author: string;
  labels: number[];
  merged: boolean;
  mergedBy: string | null;
  mergeCommitSha: string | null;
  headShaAtClose: string | null;
  autoMerge: { by: string; style: "merge" | "rebase" | "squash" } | null;
  createdAt: string;
  updatedAt: string;
}

export interface GiteaReview {
  id: number;
  pull: number;
  login: string;
  state: "APPROVED" | "REQUEST_CHANGES" | "COMMENT" | "PENDING";
  body: string;
  commitId: string;
  submittedAt: string;
  comments: {
    id: number;
    path: string;
    line: number;
    body: string;
    resolver: string | null;
    createdAt: string;
  }[];
}

export interface GiteaActionRun {
  id: number;
  index: number;
  sha: string;
  branch: string;
  event: string;
  workflow: string;
  jobs: { id: number; name: string; conclusion: "success" | "failure" | "cancelled" | null; log: string }[];
  createdAt: string;
}

export interface GiteaRepo {
  id: number;
  pulls: GiteaPull[];
  labels: { id: number; name: string }[];
  statuses: {
    id: number;
    sha: string;
    context: string;
    state: GiteaStatusState;
    targetUrl: string;
    description: string;
  }[];
  /** Gitea Actions runs (their index numbers the repository's runs), each job with its log. */
  runs: GiteaActionRun[];
  reviews: GiteaReview[];
  comments: { id: number; pull: number; login: string; body: string; createdAt: string }[];
  requiredChecks: string[];
  protectedBranches: string[];
}

export interface GiteaRouteContext {
  readonly user: GiteaDoubleUser;
  readonly repository: string;
  /** The repository a `/repos/{owner}/{repo}/…` route names. */
  readonly repo: GiteaRepo;
  readonly state: GiteaDoubleState;
}

export class GiteaDoubleState {
  readonly repos = new Map<string, GiteaRepo>();
  readonly users: GiteaDoubleUser[] = [];
  #nextId = 500;

  constructor(
    readonly git: DoubleGit,
    readonly url: () => string,
  ) {}

  nextId(): number {
    return this.#nextId++;
  }

  repo(repository: string): GiteaRepo {
    const repo = this.repos.get(repository);
    if (!repo) throw new Error(`The Gitea double has no repository ${repository}.`);
    return repo;
  }

  pull(repo: GiteaRepo, number: number): GiteaPull {
    const pull = repo.pulls.find((p) => p.number === number);
    if (!pull) throw new Error(`No pull request #${number}.`);
    return pull;
  }

  authenticate(header: string | string[] | undefined): GiteaDoubleUser | null {
    const value = Array.isArray(header) ? header[0] : header;
    const token = value?.replace(/^(token|bearer)\s+/i, "");
    return this.users.find((u) => u.token === token) ?? null;
  }

  async headSha(repository: string, pull: GiteaPull): Promise<string> {
    if (pull.state === "closed" && pull.headShaAtClose) return pull.headShaAtClose;
    return (await this.git.resolve(repository, `refs/heads/${pull.head}`)) ?? "0".repeat(40);
  }

  /** The newest status of each context on `sha`. */
  latestStatuses(repo: GiteaRepo, sha: string): GiteaRepo["statuses"] {
    const latest = new Map<string, GiteaRepo["statuses"][number]>();
    for (const status of repo.statuses.filter((s) => s.sha === sha)) latest.set(status.context, status);
    return [...latest.values()];
  }

  user(login: string): typeof GITEA_USER_EXAMPLE {
    return {
      ...GITEA_USER_EXAMPLE,
      id: hashId(login),
      login,
      email: `${login}@noreply.forge-double.test`,
      html_url: `${this.url()}/${login}`,
      avatar_url: `${this.url()}/avatars/${hashId(login)}`,
    };
  }

  repoBody(repository: string, user?: GiteaDoubleUser): typeof GITEA_REPOSITORY_EXAMPLE {
    const [owner = "", name = ""] = repository.split("/");
    const permission = user?.permission ?? "write";
    return {
      ...GITEA_REPOSITORY_EXAMPLE,
      id: this.repo(repository).id,
      owner: this.user(owner),
      name,
      full_name: repository,
      html_url: `${this.url()}/${repository}`,
      url: `${this.url()}/api/v1/repos/${repository}`,
      clone_url: `${this.url()}/${repository}.git`,
      permissions: {
        admin: permission === "admin",
        push: permission === "admin" || permission === "write",
        pull: permission !== "none",
      },
    };
  }

  label(repository: string, id: number): typeof GITEA_LABEL_EXAMPLE {
    const label = this.repo(repository).labels.find((l) => l.id === id);
    return {
      ...GITEA_LABEL_EXAMPLE,
      id,
      name: label?.name ?? String(id),
      url: `${this.url()}/api/v1/repos/${repository}/labels/${id}`,
    };
  }

  async pullBody(repository: string, pull: GiteaPull): Promise<Record<string, unknown>> {
    const repo = this.repo(repository);
    const head = await this.headSha(repository, pull);
    const base = (await this.git.resolve(repository, `refs/heads/${pull.base}`)) ?? head;
    const repoBody = this.repoBody(repository);
    const open = pull.state === "open";
    return {
      ...GITEA_PULL_EXAMPLE,
      id: pull.id,
      url: `${this.url()}/${repository}/pulls/${pull.number}`,
      number: pull.number,
      user: this.user(pull.author),
      title: pull.title,
      body: pull.body,
      labels: pull.labels.map((id) => this.label(repository, id)),
      state: pull.state,
      comments: repo.comments.filter((c) => c.pull === pull.number).length,
      review_comments: repo.reviews.filter((r) => r.pull === pull.number).flatMap((r) => r.comments).length,
      html_url: `${this.url()}/${repository}/pulls/${pull.number}`,
      diff_url: `${this.url()}/${repository}/pulls/${pull.number}.diff`,
      patch_url: `${this.url()}/${repository}/pulls/${pull.number}.patch`,
      mergeable: open ? await this.git.mergeable(repository, pull.base, head) : false,
      merged: pull.merged,
      merged_at: pull.merged ? pull.updatedAt : null,
      merge_commit_sha: pull.mergeCommitSha,
      merged_by: pull.mergedBy ? this.user(pull.mergedBy) : null,
      base: { label: pull.base, ref: pull.base, sha: base, repo_id: repo.id, repo: repoBody },
      head: { label: pull.head, ref: pull.head, sha: head, repo_id: repo.id, repo: repoBody },
      merge_base: base,
      created_at: pull.createdAt,
      updated_at: pull.updatedAt,
      closed_at: open ? null : pull.updatedAt,
    };
  }

  statusBody(repository: string, status: GiteaRepo["statuses"][number]): typeof GITEA_STATUS_EXAMPLE {
    return {
      ...GITEA_STATUS_EXAMPLE,
      id: status.id,
      status: status.state,
      target_url: status.targetUrl,
      description: status.description,
      url: `${this.url()}/api/v1/repos/${repository}/statuses/${status.sha}`,
      context: status.context,
    };
  }

  runBody(repository: string, run: GiteaActionRun): typeof GITEA_ACTION_RUN_EXAMPLE {
    const done = run.jobs.every((j) => j.conclusion !== null);
    const failed = run.jobs.some((j) => j.conclusion === "failure");
    return {
      ...GITEA_ACTION_RUN_EXAMPLE,
      id: run.id,
      url: `${this.url()}/api/v1/repos/${repository}/actions/runs/${run.id}`,
      html_url: `${this.url()}/${repository}/actions/runs/${run.index}`,
      display_title: run.workflow,
      path: `${run.workflow}.yml@refs/heads/${run.branch}`,
      event: run.event,
      run_number: run.index,
      repository_id: this.repo(repository).id,
      head_sha: run.sha,
      head_branch: run.branch,
      status: done ? "completed" : "in_progress",
      repository: this.repoBody(repository),
      head_repository: this.repoBody(repository),
      conclusion: done ? (failed ? "failure" : "success") : "",
      started_at: run.createdAt,
      completed_at: run.createdAt,
    };
  }

  /** A job's `html_url` is the run's page and the job's index in it, as the status Gitea Actions sets links to. */
  jobBody(repository: string, run: GiteaActionRun, index: number): typeof GITEA_ACTION_JOB_EXAMPLE {
    const job = run.jobs[index];
    if (!job) throw new Error(`run ${run.id} has no job ${index}`);
    return {
      ...GITEA_ACTION_JOB_EXAMPLE,
      id: job.id,
      url: `${this.url()}/api/v1/repos/${repository}/actions/jobs/${job.id}`,
      html_url: `${this.url()}/${repository}/actions/runs/${run.index}/jobs/${index}`,
      run_id: run.id,
      run_url: `${this.url()}/api/v1/repos/${repository}/actions/runs/${run.id}`,
      name: job.name,
      head_sha: run.sha,
      head_branch: run.branch,
      status: job.conclusion === null ? "in_progress" : "completed",
      conclusion: job.conclusion ?? "",
      steps: [
        {
          number: 1,
          name: job.name,
          status: job.conclusion === null ? "in_progress" : "completed",
          conclusion: job.conclusion ?? "",
          started_at: run.createdAt,
          completed_at: run.createdAt,
        },
      ],
      created_at: run.createdAt,
      started_at: run.createdAt,
      completed_at: run.createdAt,
    };
  }

  reviewBody(repository: string, review: GiteaReview): typeof GITEA_REVIEW_EXAMPLE {
    return {
      ...GITEA_REVIEW_EXAMPLE,
      id: review.id,
      user: this.user(review.login),
      state: review.state,
      body: review.body,
      commit_id: review.commitId,
      comments_count: review.comments.length,
      submitted_at: review.submittedAt,
      updated_at: review.submittedAt,
      html_url: `${this.url()}/${repository}/pulls/${review.pull}#issuecomment-${review.id}`,
      pull_request_url: `${this.url()}/${repository}/pulls/${review.pull}`,
    };
  }

  reviewCommentBody(
    repository: string,
    review: GiteaReview,
    comment: GiteaReview["comments"][number],
  ): typeof GITEA_REVIEW_COMMENT_EXAMPLE {
    return {
      ...GITEA_REVIEW_COMMENT_EXAMPLE,
      id: comment.id,
      body: comment.body,
      user: this.user(review.login),
      resolver: (comment.resolver ? this.user(comment.resolver) : null) as typeof GITEA_USER_EXAMPLE,
      pull_request_review_id: review.id,
      created_at: comment.createdAt,
      updated_at: comment.createdAt,
      path: comment.path,
      commit_id: review.commitId,
      original_commit_id: review.commitId,
      position: comment.line,
      original_position: 0,
      html_url: `${this.url()}/${repository}/pulls/${review.pull}#issuecomment-${comment.id}`,
      pull_request_url: `${this.url()}/${repository}/pulls/${review.pull}`,
    };
  }

  commentBody(repository: string, comment: GiteaRepo["comments"][number]): typeof GITEA_COMMENT_EXAMPLE {
    return {
      ...GITEA_COMMENT_EXAMPLE,
      id: comment.id,
      html_url: `${this.url()}/${repository}/pulls/${comment.pull}#issuecomment-${comment.id}`,
      pull_request_url: `${this.url()}/${repository}/pulls/${comment.pull}`,
      user: this.user(comment.login),
      body: comment.body,
      created_at: comment.createdAt,
      updated_at: comment.createdAt,
    };
  }

  /** Gitea's merge: 404 closed, 405 merged / not allowed / required checks not green, 409 head moved or conflict; 201 when scheduled. */
  async merge(
    repository: string,
    pull: GiteaPull,
    request: {
      by: string;
      style: "merge" | "rebase" | "squash";
      sha?: string;
      title?: string;
      auto: boolean;
    },
  ): Promise<ApiAnswer> {
    const repo = this.repo(repository);
    if (pull.merged) return error(405, "PR already merged");
    if (pull.state !== "open") return error(404, "Not Found");
    const head = await this.headSha(repository, pull);
    const statuses = this.latestStatuses(repo, head);
    const required = repo.protectedBranches.includes(pull.base) ? repo.requiredChecks : [];
    const pending = required.filter((name) => statuses.find((s) => s.context === name)?.state !== "success");
    if (request.auto && pending.length > 0) {
      pull.autoMerge = { by: request.by, style: request.style };
      return { status: 201 };
    }
    if (pending.length > 0)
      return error(405, `PR is not ready to be merged: required status checks ${pending} are not successful`);
    if (request.sha && request.sha !== head) return error(409, "head out of date");
    const merged = await this.git.merge(
      repository,
      pull.base,
      head,
      request.style,
      request.title ??
        `Merge pull request '${pull.title}' (#${pull.number}) from ${pull.head} into ${pull.base}`,
    );
    if (!merged.sha)
      return { status: 409, body: { message: `merge conflict in ${merged.conflicts}`, url: "" } };
    Object.assign(pull, {
      state: "closed",
      merged: true,
      mergedBy: request.by,
      mergeCommitSha: merged.sha,
      headShaAtClose: head,
      autoMerge: null,
      updatedAt: new Date().toISOString(),
    });
    return { status: 200 };
  }
}

export function error(status: number, message: string): ApiAnswer {
  return { status, body: { message, url: "https://gitea.example.org/api/swagger" } };
}
