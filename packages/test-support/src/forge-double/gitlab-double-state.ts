/**
 * The GitLab double's state (users, projects with their merge requests, pipelines and jobs,
 * reviewers, approvals and discussions), the bodies built from it over GitLab's documented
 * examples, and GitLab's merge rules (open, head as expected, pipeline succeeded where the
 * project requires it, no conflict; auto-merge waits for the pipeline).
 */
import type { DoubleGit } from "./double-git.ts";
import type { ApiAnswer } from "./double-server.ts";
import { fromExample } from "./example-contract.ts";
import {
  GITLAB_COMMIT_STATUS_EXAMPLE,
  GITLAB_DIFF_NOTE_EXAMPLE,
  GITLAB_DISCUSSION_EXAMPLE,
  GITLAB_HEAD_PIPELINE_EXAMPLE,
  GITLAB_JOB_EXAMPLE,
  GITLAB_MERGE_REQUEST_EXAMPLE,
  GITLAB_MR_VERSION_EXAMPLE,
  GITLAB_NOTE_EXAMPLE,
  GITLAB_PIPELINE_EXAMPLE,
  GITLAB_SINGLE_MERGE_REQUEST_EXAMPLE,
  GITLAB_USER_EXAMPLE,
} from "./gitlab-examples.ts";

export interface GitLabDoubleUser {
  readonly username: string;
  readonly token: string;
  /** The member's role on every project: 10 Guest, 20 Reporter, 30 Developer (default), 40 Maintainer, 0 none. */
  readonly accessLevel?: number;
  /** The token's scopes. Default `api`, `write_repository`. */
  readonly scopes?: readonly string[];
}

export interface GitLabMr {
  id: number;
  iid: number;
  title: string;
  description: string | null;
  source: string;
  target: string;
  state: "opened" | "closed" | "merged";
  author: string;
  labels: string[];
  mergedBy: string | null;
  mergeCommitSha: string | null;
  squashCommitSha: string | null;
  /** Set while the merge waits for the pipeline (auto-merge, or a merge train). */
  autoMerge: { by: string; squash: boolean } | null;
  shaAtClose: string | null;
  reviewers: { username: string; state: "unreviewed" | "reviewed" | "requested_changes" | "approved" }[];
  approvedBy: string[];
  /** The diff versions: one per head the source branch had while open (GitLab records one per push). */
  versions: { id: number; headSha: string; baseSha: string; createdAt: string }[];
  /** Conversation notes (people's comments, and GitLab's system notes such as "merged"). */
  notes: { id: number; author: string; body: string; createdAt: string; system: boolean }[];
  createdAt: string;
  updatedAt: string;
}

export type GitLabJobStatus =
  | "created"
  | "pending"
  | "running"
  | "success"
  | "failed"
  | "canceled"
  | "skipped"
  | "manual";

export interface GitLabJob {
  id: number;
  pipelineId: number;
  name: string;
  status: GitLabJobStatus;
  log: string;
  /** A failure that does not fail the pipeline (`allow_failure: true`). */
  allowFailure: boolean;
  /** An external commit status (`POST /projects/:id/statuses/:sha`), not a job: no trace, not in the jobs list. */
  external: { targetUrl: string | null; description: string | null } | null;
}

export interface GitLabPipeline {
  id: number;
  iid: number;
  sha: string;
  ref: string;
  source: string;
  createdAt: string;
}

export interface GitLabDiscussion {
  id: string;
  mr: number;
  /** The diff line a diff thread is on; both null for a thread on the merge request itself ("Start a thread"). */
  path: string | null;
  line: number | null;
  resolved: boolean;
  notes: { id: number; author: string; body: string; createdAt: string }[];
}

export interface GitLabProject {
  id: number;
  path: string;
  mrs: GitLabMr[];
  pipelines: GitLabPipeline[];
  jobs: GitLabJob[];
  discussions: GitLabDiscussion[];
  /** "Pipelines must succeed" (only_allow_merge_if_pipeline_succeeds). */
  pipelineMustSucceed: boolean;
  mergeTrains: boolean;
  /** Protected branches only Maintainers may merge into. */
  protectedBranches: string[];
}

export const DEVELOPER = 30;
export const MAINTAINER = 40;

export class GitLabDoubleState {
  readonly projects = new Map<string, GitLabProject>();
  readonly users: GitLabDoubleUser[] = [];
  #nextId = 100;

  constructor(
    readonly git: DoubleGit,
    readonly url: () => string,
  ) {}

  nextId(): number {
    return this.#nextId++;
  }

  project(path: string): GitLabProject {
    const project = this.projects.get(path);
    if (!project) throw new Error(`The GitLab double has no project ${path}.`);
    return project;
  }

  /** A project by its full path or numeric id. */
  find(id: string): GitLabProject | undefined {
    return this.projects.get(id) ?? [...this.projects.values()].find((p) => String(p.id) === id);
  }

  mr(project: GitLabProject, iid: number): GitLabMr {
    const mr = project.mrs.find((m) => m.iid === iid);
    if (!mr) throw new Error(`No merge request !${iid}.`);
    return mr;
  }

  authenticate(headers: Record<string, string | string[] | undefined>): GitLabDoubleUser | null {
    const bearer = String(headers.authorization ?? "").replace(/^bearer\s+/i, "");
    const token = String(headers["private-token"] ?? "") || bearer;
    return this.users.find((u) => u.token === token) ?? null;
  }

  async headSha(project: GitLabProject, mr: GitLabMr): Promise<string> {
    if (mr.state !== "opened" && mr.shaAtClose) return mr.shaAtClose;
    return (await this.git.resolve(project.path, `refs/heads/${mr.source}`)) ?? "0".repeat(40);
  }

  pipelineStatus(project: GitLabProject, pipeline: GitLabPipeline): string {
    const jobs = project.jobs.filter((j) => j.pipelineId === pipeline.id);
    if (jobs.some((j) => j.status === "failed" && !j.allowFailure)) return "failed";
    if (jobs.some((j) => j.status === "running")) return "running";
    if (jobs.some((j) => j.status === "pending" || j.status === "created")) return "pending";
    if (jobs.length > 0 && jobs.every((j) => j.status === "canceled")) return "canceled";
    return "success";
  }

  newestPipeline(project: GitLabProject, sha: string): GitLabPipeline | undefined {
    return project.pipelines.filter((p) => p.sha === sha).at(-1);
  }

  /** Records a new diff version when the source branch's head moved since the last one (GitLab does on push). */
  async syncVersions(project: GitLabProject, mr: GitLabMr): Promise<void> {
    if (mr.state !== "opened") return;
    const head = await this.headSha(project, mr);
    if (mr.versions.at(-1)?.headSha === head) return;
    const base = (await this.git.resolve(project.path, `refs/heads/${mr.target}`)) ?? head;
    mr.versions.push({
      id: this.nextId(),
      headSha: head,
      baseSha: base,
      createdAt: new Date().toISOString(),
    });
  }

  versionBody(mr: GitLabMr, v: GitLabMr["versions"][number]): typeof GITLAB_MR_VERSION_EXAMPLE {
    return fromExample(GITLAB_MR_VERSION_EXAMPLE, {
      id: v.id,
      head_commit_sha: v.headSha,
      base_commit_sha: v.baseSha,
      start_commit_sha: v.baseSha,
      created_at: v.createdAt,
      merge_request_id: mr.id,
    });
  }

  user(username: string): typeof GITLAB_USER_EXAMPLE {
    return fromExample(GITLAB_USER_EXAMPLE, {
      id: hashId(username),
      username,
      name: username,
      web_url: `${this.url()}/${username}`,
    });
  }

  async mrBody(project: GitLabProject, mr: GitLabMr, single: boolean): Promise<Record<string, unknown>> {
    await this.syncVersions(project, mr);
    const sha = await this.headSha(project, mr);
    const mergeable = mr.state === "opened" ? await this.git.mergeable(project.path, mr.target, sha) : true;
    const pipeline = this.newestPipeline(project, sha);
    const status = pipeline ? this.pipelineStatus(project, pipeline) : null;
    const closed = mr.state !== "opened";
    const fields = {
      id: mr.id,
      iid: mr.iid,
      project_id: project.id,
      title: mr.title,
      description: mr.description,
      state: mr.state,
      created_at: mr.createdAt,
      updated_at: mr.updatedAt,
      merged_by: mr.mergedBy ? this.user(mr.mergedBy) : null,
      merge_user: mr.mergedBy ? this.user(mr.mergedBy) : mr.autoMerge ? this.user(mr.autoMerge.by) : null,
      merged_at: mr.state === "merged" ? mr.updatedAt : null,
      closed_by: mr.state === "closed" ? this.user(mr.author) : null,
      closed_at: mr.state === "closed" ? mr.updatedAt : null,
      target_branch: mr.target,
      source_branch: mr.source,
      author: this.user(mr.author),
      reviewers: mr.reviewers.map((r) => this.user(r.username)),
      source_project_id: project.id,
      target_project_id: project.id,
      labels: mr.labels,
      merge_when_pipeline_succeeds: mr.autoMerge !== null,
      merge_status: mergeable ? ("can_be_merged" as const) : ("cannot_be_merged" as const),
      detailed_merge_status: detailedStatus(closed, mergeable, project.pipelineMustSucceed, status),
      sha,
      merge_commit_sha: mr.mergeCommitSha,
      squash_commit_sha: mr.squashCommitSha,
      reference: `!${mr.iid}`,
      references: { short: `!${mr.iid}`, relative: `!${mr.iid}`, full: `${project.path}!${mr.iid}` },
      web_url: `${this.url()}/${project.path}/-/merge_requests/${mr.iid}`,
      squash: mr.autoMerge?.squash ?? false,
      has_conflicts: !mergeable,
    };
    if (!single) return fromExample(GITLAB_MERGE_REQUEST_EXAMPLE, fields);
    const base = (await this.git.resolve(project.path, `refs/heads/${mr.target}`)) ?? sha;
    return fromExample(GITLAB_SINGLE_MERGE_REQUEST_EXAMPLE, {
      ...fields,
      pipeline: pipeline ? this.pipelineBody(project, pipeline) : null,
      head_pipeline: pipeline ? this.headPipelineBody(project, pipeline) : null,
      diff_refs: { base_sha: base, head_sha: sha, start_sha: base },
      user: { can_merge: true },
    } as Partial<typeof GITLAB_SINGLE_MERGE_REQUEST_EXAMPLE>);
  }

  pipelineBody(project: GitLabProject, pipeline: GitLabPipeline): typeof GITLAB_PIPELINE_EXAMPLE {
    return fromExample(GITLAB_PIPELINE_EXAMPLE, {
      id: pipeline.id,
      iid: pipeline.iid,
      project_id: project.id,
      sha: pipeline.sha,
      ref: pipeline.ref,
      status: this.pipelineStatus(project, pipeline),
      source: pipeline.source,
      created_at: pipeline.createdAt,
      updated_at: pipeline.createdAt,
      web_url: `${this.url()}/${project.path}/-/pipelines/${pipeline.id}`,
    });
  }

  headPipelineBody(project: GitLabProject, pipeline: GitLabPipeline): typeof GITLAB_HEAD_PIPELINE_EXAMPLE {
    const status = this.pipelineStatus(project, pipeline);
    return fromExample(GITLAB_HEAD_PIPELINE_EXAMPLE, {
      ...this.pipelineBody(project, pipeline),
      before_sha: "0".repeat(40),
      user: this.user("root"),
      detailed_status: {
        ...GITLAB_HEAD_PIPELINE_EXAMPLE.detailed_status,
        icon: `status_${status}`,
        text: status,
        label: status,
        group: status,
        tooltip: status,
        details_path: `/${project.path}/-/pipelines/${pipeline.id}`,
      },
    });
  }

  /** A job or an external status as `GET …/repository/commits/:sha/statuses` lists it. */
  statusBody(project: GitLabProject, job: GitLabJob): typeof GITLAB_COMMIT_STATUS_EXAMPLE {
    const pipeline = project.pipelines.find((p) => p.id === job.pipelineId);
    return fromExample(GITLAB_COMMIT_STATUS_EXAMPLE, {
      status: job.status,
      name: job.name,
      allow_failure: job.allowFailure,
      author: this.user("root"),
      description: job.external?.description ?? null,
      sha: pipeline?.sha ?? "",
      target_url: job.external
        ? (job.external.targetUrl ?? "")
        : `${this.url()}/${project.path}/-/jobs/${job.id}`,
      id: job.id,
      ref: pipeline?.ref ?? "",
      pipeline_id: job.pipelineId,
    });
  }

  jobBody(project: GitLabProject, job: GitLabJob): Record<string, unknown> {
    const pipeline = project.pipelines.find((p) => p.id === job.pipelineId);
    if (!pipeline) throw new Error(`No pipeline ${job.pipelineId}.`);
    return fromExample(GITLAB_JOB_EXAMPLE, {
      id: job.id,
      name: job.name,
      status: job.status,
      ref: pipeline.ref,
      allow_failure: job.allowFailure,
      failure_reason: job.status === "failed" ? "script_failure" : null,
      commit: { ...GITLAB_JOB_EXAMPLE.commit, id: pipeline.sha, short_id: pipeline.sha.slice(0, 8) },
      pipeline: this.pipelineBody(project, pipeline),
      web_url: `${this.url()}/${project.path}/-/jobs/${job.id}`,
    } as Partial<typeof GITLAB_JOB_EXAMPLE>);
  }

  systemNote(mr: GitLabMr, by: string, body: string): void {
    mr.notes.push({ id: this.nextId(), author: by, body, createdAt: new Date().toISOString(), system: true });
  }

  /** Every note of a merge request as `GET …/notes` lists them: conversation, system and diff notes. */
  notesBody(project: GitLabProject, mr: GitLabMr): Record<string, unknown>[] {
    const diffNotes = project.discussions
      .filter((d) => d.mr === mr.iid)
      .flatMap((d) =>
        d.notes.map((n) => ({
          ...n,
          system: false,
          type: d.path === null ? ("DiscussionNote" as const) : ("DiffNote" as const),
        })),
      );
    const all = [...mr.notes.map((n) => ({ ...n, type: null })), ...diffNotes].sort((a, b) => a.id - b.id);
    return all.map((n) =>
      fromExample(GITLAB_NOTE_EXAMPLE, {
        id: n.id,
        type: n.type,
        body: n.body,
        author: this.user(n.author),
        created_at: n.createdAt,
        updated_at: n.createdAt,
        system: n.system,
        noteable_id: mr.id,
        noteable_iid: mr.iid,
        project_id: project.id,
        resolvable: n.type !== null,
      }),
    );
  }

  async discussionBody(project: GitLabProject, d: GitLabDiscussion): Promise<Record<string, unknown>> {
    const mr = this.mr(project, d.mr);
    const head = await this.headSha(project, mr);
    const base = (await this.git.resolve(project.path, `refs/heads/${mr.target}`)) ?? head;
    const note = GITLAB_DIFF_NOTE_EXAMPLE;
    return fromExample(GITLAB_DISCUSSION_EXAMPLE, {
      id: d.id,
      notes: d.notes.map((n) =>
        fromExample(note, {
          id: n.id,
          type: d.path === null ? "DiscussionNote" : "DiffNote",
          body: n.body,
          author: this.user(n.author),
          created_at: n.createdAt,
          updated_at: n.createdAt,
          noteable_id: mr.id,
          noteable_iid: mr.iid,
          project_id: project.id,
          resolved: d.resolved,
          resolved_by: d.resolved ? this.user(n.author) : null,
          resolved_at: d.resolved ? n.createdAt : null,
          position: (d.path === null
            ? null
            : {
                ...note.position,
                base_sha: base,
                start_sha: base,
                head_sha: head,
                old_path: d.path,
                new_path: d.path,
                old_line: null,
                new_line: d.line,
              }) as unknown as typeof note.position,
        }),
      ),
    });
  }

  /**
   * GitLab's accept: refused (405 not open / pipeline required, 406 conflict, 409 sha), queued
   * behind the pipeline, or merged. One at a time per project, as GitLab holds a lock while it
   * merges (an API merge racing the auto-merge of the same merge request merges it once).
   */
  accept(
    project: GitLabProject,
    mr: GitLabMr,
    request: { by: string; sha?: string; squash: boolean; auto: boolean; message?: string },
  ): Promise<ApiAnswer> {
    const previous = this.#merging.get(project.id) ?? Promise.resolve();
    const next = previous.then(() => this.#accept(project, mr, request));
    this.#merging.set(
      project.id,
      next.catch(() => undefined),
    );
    return next;
  }

  readonly #merging = new Map<number, Promise<unknown>>();

  /** Resolves once every merge of `project` asked so far has ended. */
  async mergesSettled(project: GitLabProject): Promise<void> {
    await this.#merging.get(project.id);
  }

  async #accept(
    project: GitLabProject,
    mr: GitLabMr,
    request: { by: string; sha?: string; squash: boolean; auto: boolean; message?: string },
  ): Promise<ApiAnswer> {
    if (mr.state !== "opened") return { status: 405, body: { message: "405 Method Not Allowed" } };
    const head = await this.headSha(project, mr);
    if (request.sha && request.sha !== head) {
      return { status: 409, body: { message: `SHA does not match HEAD of source branch: ${head}` } };
    }
    const pipeline = this.newestPipeline(project, head);
    const status = pipeline ? this.pipelineStatus(project, pipeline) : null;
    const waiting = status === "pending" || status === "running";
    if (request.auto && (waiting || (project.mergeTrains && status !== "success"))) {
      mr.autoMerge = { by: request.by, squash: request.squash };
      mr.updatedAt = new Date().toISOString();
      return { status: 200, body: await this.mrBody(project, mr, true) };
    }
    if (project.pipelineMustSucceed && status !== "success") {
      return { status: 405, body: { message: "405 Method Not Allowed" } };
    }
    const merged = await this.git.merge(
      project.path,
      mr.target,
      head,
      request.squash ? "squash" : "merge",
      request.message ?? `Merge branch '${mr.source}' into '${mr.target}'`,
    );
    if (!merged.sha) return { status: 406, body: { message: "Branch cannot be merged" } };
    this.systemNote(mr, request.by, "merged");
    Object.assign(mr, {
      state: "merged",
      mergedBy: request.by,
      mergeCommitSha: request.squash ? null : merged.sha,
      squashCommitSha: request.squash ? merged.sha : null,
      shaAtClose: head,
      autoMerge: null,
      updatedAt: new Date().toISOString(),
    });
    return { status: 200, body: await this.mrBody(project, mr, true) };
  }
}

type DetailedMergeStatus = (typeof GITLAB_MERGE_REQUEST_EXAMPLE)["detailed_merge_status"];

function detailedStatus(
  closed: boolean,
  mergeable: boolean,
  pipelineMustSucceed: boolean,
  pipeline: string | null,
): DetailedMergeStatus {
  if (closed) return "not_open";
  // "conflict" is in GitLab's documented list; gitbeaker's union still names the older "broken_status".
  if (!mergeable) return "conflict" as DetailedMergeStatus;
  if (pipelineMustSucceed && pipeline !== "success")
    return pipeline === "failed" ? "ci_must_pass" : "ci_still_running";
  return "mergeable";
}

export function hashId(text: string): number {
  let h = 7;
  for (const ch of text) h = (h * 31 + ch.charCodeAt(0)) % 1_000_000;
  return h + 1;
}
