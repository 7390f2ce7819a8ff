/**
 * A GitLab for tests (a self-managed instance at `http://127.0.0.1:PORT`, REST under
 * `/api/v4`): its projects are real git over smart HTTP, with protected branches refused on
 * push by a pre-receive hook in GitLab's words; every REST request is checked against the
 * parameters GitLab documents and every answer against the shape of GitLab's documented
 * example (typed by gitbeaker), so an adapter that sends or expects what GitLab does not makes
 * `violations` non-empty. People act through its methods: pipelines with job logs, reviewer
 * states and approvals, diff discussions and replies, a merge or a close by hand. Webhooks
 * carry GitLab's `X-Gitlab-Token`, `X-Gitlab-Event` and `X-Gitlab-Event-UUID`.
 */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { ForgeDoubleBase } from "./double-base.ts";
import type { ApiAnswer, ApiHandler } from "./double-server.ts";
import { dispatchContract } from "./example-contract.ts";
import {
  type GitLabDiscussion,
  GitLabDoubleState,
  type GitLabDoubleUser,
  type GitLabJobStatus,
  type GitLabMr,
  type GitLabPipeline,
  type GitLabProject,
  hashId,
} from "./gitlab-double-state.ts";
import { GITLAB_MERGE_REQUEST_HOOK_EXAMPLE } from "./gitlab-examples.ts";
import { GITLAB_MR_NOTE_HOOK_EXAMPLE, GITLAB_PIPELINE_HOOK_EXAMPLE } from "./gitlab-hook-examples.ts";
import { type GitLabIssue, GitLabIssueStore } from "./gitlab-issue-state.ts";
import { type GitLabRouteContext, gitlabRoutes } from "./gitlab-routes.ts";

/** What GitLab's pre-receive check prints (git shows it after `remote:`). */
const PROTECTED = "GitLab: You are not allowed to push code to protected branches on this project.";

export class GitLabDouble extends ForgeDoubleBase {
  readonly kind = "gitlab" as const;
  readonly #state: GitLabDoubleState;
  readonly #routes = gitlabRoutes();
  readonly #issues: GitLabIssueStore;

  private constructor(root: string) {
    super(
      root,
      /^\/api\//,
      (status) => ({
        message:
          status === 429
            ? "Retry later"
            : status === 403
              ? "403 Forbidden"
              : status === 404
                ? "404 Not Found"
                : `${status} Server Error`,
      }),
      (event, _body, secret, id) => ({
        "x-gitlab-event": event,
        "x-gitlab-token": secret,
        "x-gitlab-event-uuid": id,
        "idempotency-key": id,
        "x-gitlab-instance": "http://127.0.0.1",
      }),
    );
    this.#state = new GitLabDoubleState(this.git, () => this.url);
    this.#issues = new GitLabIssueStore({
      url: () => this.url,
      nextId: () => this.#state.nextId(),
      user: (username) => this.#state.user(username),
      deliver: (event, payload) => this.deliver(event, payload),
    });
  }

  /** A person opens an issue (GitLab sends an Issue Hook); its iid. `blockedBy`: iids it `is_blocked_by`. */
  openIssue(
    project: string,
    issue: {
      title: string;
      description?: string;
      author?: string;
      labels?: string[];
      assignees?: string[];
      blockedBy?: number[];
    },
  ): number {
    return this.#issues.open(this.#state.project(project), { author: "root", ...issue }).iid;
  }

  /** A person comments on an issue (a Note Hook); the note's id. */
  commentOnIssue(project: string, iid: number, username: string, body: string): number {
    const state = this.#state.project(project);
    return this.#issues.addNote(state, this.issue(project, iid), username, body).id;
  }

  /** A person closes or reopens an issue (an Issue Hook). */
  setIssueState(project: string, iid: number, state: "opened" | "closed", by = "root"): void {
    this.#issues.setState(this.#state.project(project), this.issue(project, iid), state, by);
  }

  issue(project: string, iid: number): GitLabIssue {
    const found = this.#issues.find(this.#state.project(project), iid);
    if (!found) throw new Error(`No issue #${iid} in ${project}.`);
    return found;
  }

  static async start(): Promise<GitLabDouble> {
    const double = new GitLabDouble(await mkdtemp(path.join(tmpdir(), "gitlab-double-")));
    await double.server.start();
    return double;
  }

  addUser(user: GitLabDoubleUser): void {
    this.#state.users.push(user);
  }

  /** A project `group/name` with one commit on `main`. */
  async createProject(
    project: string,
    files: Record<string, string> = { "README.md": "# demo\n" },
    settings: { pipelineMustSucceed?: boolean; mergeTrains?: boolean } = {},
  ): Promise<string> {
    this.#state.projects.set(project, {
      id: this.#state.nextId(),
      path: project,
      mrs: [],
      pipelines: [],
      jobs: [],
      discussions: [],
      pipelineMustSucceed: settings.pipelineMustSucceed ?? false,
      mergeTrains: settings.mergeTrains ?? false,
      protectedBranches: [],
    });
    return this.git.create(project, "main", files, PROTECTED);
  }

  /** Protects `branches`: pushes are refused, and only Maintainers merge into them. */
  async protectBranch(project: string, branches: readonly string[]): Promise<void> {
    this.#state.project(project).protectedBranches = [...branches];
    await this.git.protect(project, branches);
  }

  mergeRequests(project: string): readonly GitLabMr[] {
    return this.#state.project(project).mrs;
  }

  /** The threads (resolvable discussions) of merge request `iid`, oldest first. */
  discussions(project: string, iid: number): readonly GitLabDiscussion[] {
    return this.#state.project(project).discussions.filter((d) => d.mr === iid);
  }

  /** A new pipeline on `sha` with `jobs` (each with its trace); the ids of the pipeline and its jobs. */
  setPipeline(
    project: string,
    sha: string,
    jobs: readonly { name: string; status: GitLabJobStatus; log?: string; allowFailure?: boolean }[],
    ref = "main",
    source = "push",
  ): { pipelineId: number; jobIds: number[] } {
    const state = this.#state.project(project);
    const pipeline = {
      id: this.#state.nextId(),
      iid: state.pipelines.length + 1,
      sha,
      ref,
      source,
      createdAt: new Date().toISOString(),
    };
    state.pipelines.push(pipeline);
    const jobIds = jobs.map((job) => {
      const id = this.#state.nextId();
      state.jobs.push({
        id,
        pipelineId: pipeline.id,
        name: job.name,
        status: job.status,
        log: job.log ?? "",
        allowFailure: job.allowFailure ?? false,
        external: null,
      });
      return id;
    });
    this.#hookPipeline(state, pipeline);
    return { pipelineId: pipeline.id, jobIds };
  }

  /** Sets a job's status (a running job finishing); GitLab sends a Pipeline Hook. */
  setJob(project: string, jobId: number, status: GitLabJobStatus, log?: string): void {
    const state = this.#state.project(project);
    const job = state.jobs.find((j) => j.id === jobId);
    if (!job) throw new Error(`No job ${jobId}.`);
    job.status = status;
    if (log !== undefined) job.log = log;
    const pipeline = state.pipelines.find((p) => p.id === job.pipelineId);
    if (pipeline) this.#hookPipeline(state, pipeline);
    // What waits for this pipeline (auto-merge, a merge train) merges once it succeeded.
    this.track(this.settleAutoMerge(project));
  }

  /**
   * An external CI's commit status on `sha` (`POST /projects/:id/statuses/:sha`): GitLab puts it
   * in the sha's newest pipeline (a new `external` one when there is none); same name = updated.
   */
  setStatus(
    project: string,
    sha: string,
    status: { name: string; state: GitLabJobStatus; targetUrl?: string; description?: string },
  ): number {
    const state = this.#state.project(project);
    let pipeline = this.#state.newestPipeline(state, sha);
    if (!pipeline) {
      this.setPipeline(project, sha, [], "main", "external");
      pipeline = this.#state.newestPipeline(state, sha);
    }
    if (!pipeline) throw new Error("unreachable");
    const pipelineId = pipeline.id;
    const external = { targetUrl: status.targetUrl ?? null, description: status.description ?? null };
    const known = state.jobs.find((j) => j.pipelineId === pipelineId && j.external && j.name === status.name);
    if (known) Object.assign(known, { status: status.state, external });
    const id = known?.id ?? this.#state.nextId();
    if (!known) {
      state.jobs.push({
        id,
        pipelineId,
        name: status.name,
        status: status.state,
        log: "",
        allowFailure: false,
        external,
      });
    }
    this.#hookPipeline(state, pipeline);
    this.track(this.settleAutoMerge(project));
    return id;
  }

  /**
   * A person's review: `approved` approves (approvals API), `requested_changes` sets their
   * reviewer state; each leaves GitLab's system note ("approved this merge request", "requested
   * changes", "unapproved this merge request"), after the version of the head they reviewed.
   */
  async review(
    project: string,
    iid: number,
    username: string,
    verdict: "approved" | "requested_changes" | "reviewed",
  ): Promise<void> {
    const state = this.#state.project(project);
    const mr = this.#state.mr(state, iid);
    await this.#state.syncVersions(state, mr);
    const reviewer = mr.reviewers.find((r) => r.username === username);
    if (reviewer) reviewer.state = verdict;
    else mr.reviewers.push({ username, state: verdict });
    if (verdict === "approved") return this.approve(project, iid, username);
    if (mr.approvedBy.includes(username)) {
      mr.approvedBy = mr.approvedBy.filter((u) => u !== username);
      this.#state.systemNote(mr, username, "unapproved this merge request");
      this.#hookMr(state, mr, "unapproval", username);
    }
    if (verdict === "requested_changes") this.#state.systemNote(mr, username, "requested changes");
    this.#hookMr(state, mr, "update", username);
  }

  /** Approves (GitLab lets any eligible member approve, reviewer or not). */
  async approve(project: string, iid: number, username: string): Promise<void> {
    const state = this.#state.project(project);
    const mr = this.#state.mr(state, iid);
    await this.#state.syncVersions(state, mr);
    if (mr.approvedBy.includes(username)) return;
    mr.approvedBy.push(username);
    this.#state.systemNote(mr, username, "approved this merge request");
    // GitLab's action for one person's approval ("approved" once all required ones are in).
    this.#hookMr(state, mr, "approval", username);
  }

  /**
   * A resolvable thread a person opens: on `path`:`line` of the head (a diff discussion), or on
   * the merge request itself when both are null ("Start a thread"); its id.
   */
  comment(
    project: string,
    iid: number,
    note: { username: string; path: string | null; line: number | null; body: string },
  ): string {
    const state = this.#state.project(project);
    const mr = this.#state.mr(state, iid);
    const discussion: GitLabDiscussion = {
      id: (this.#state.nextId() * 2654435761).toString(16).padStart(40, "0").slice(-40),
      mr: iid,
      path: note.path,
      line: note.line,
      resolved: false,
      notes: [
        {
          id: this.#state.nextId(),
          author: note.username,
          body: note.body,
          createdAt: new Date().toISOString(),
        },
      ],
    };
    state.discussions.push(discussion);
    this.#hookNote(state, mr, discussion.notes[0] as GitLabDiscussion["notes"][number], discussion);
    return discussion.id;
  }

  reply(project: string, discussionId: string, username: string, body: string, resolve = false): void {
    const state = this.#state.project(project);
    const discussion = state.discussions.find((d) => d.id === discussionId);
    if (!discussion) throw new Error(`No discussion ${discussionId}.`);
    const note = { id: this.#state.nextId(), author: username, body, createdAt: new Date().toISOString() };
    discussion.notes.push(note);
    if (resolve) discussion.resolved = true;
    this.#hookNote(state, this.#state.mr(state, discussion.mr), note, discussion);
  }

  /** A comment a person writes on the merge request (not on the diff). */
  note(project: string, iid: number, username: string, body: string): void {
    const state = this.#state.project(project);
    const mr = this.#state.mr(state, iid);
    const note = { id: this.#state.nextId(), author: username, body, createdAt: new Date().toISOString() };
    mr.notes.push({ ...note, system: false });
    this.#hookNote(state, mr, note, null);
  }

  /** A person presses Merge (squash when asked); the merge or squash commit. */
  async mergeByHuman(project: string, iid: number, username: string, squash = false): Promise<string> {
    const state = this.#state.project(project);
    const mr = this.#state.mr(state, iid);
    const answer = await this.#state.accept(state, mr, { by: username, squash, auto: false });
    if (answer.status !== 200) throw new Error(`merge refused: ${JSON.stringify(answer.body)}`);
    this.#hookMr(state, mr, "merge");
    return mr.mergeCommitSha ?? mr.squashCommitSha ?? "";
  }

  async closeByHuman(project: string, iid: number): Promise<void> {
    const state = this.#state.project(project);
    const mr = this.#state.mr(state, iid);
    mr.shaAtClose = await this.#state.headSha(state, mr);
    this.#state.systemNote(mr, mr.author, "closed");
    mr.state = "closed";
    mr.autoMerge = null;
    mr.updatedAt = new Date().toISOString();
    this.#hookMr(state, mr, "close");
  }

  /** Merges what waits for its pipeline (auto-merge, merge train) once that pipeline succeeded. */
  async settleAutoMerge(project: string): Promise<void> {
    const state = this.#state.project(project);
    for (const mr of state.mrs) {
      if (mr.state !== "opened" || !mr.autoMerge) continue;
      const pipeline = this.#state.newestPipeline(state, await this.#state.headSha(state, mr));
      if (!pipeline || this.#state.pipelineStatus(state, pipeline) !== "success") continue;
      // Another settle may have taken it meanwhile.
      if (!mr.autoMerge) continue;
      const { by, squash } = mr.autoMerge;
      mr.autoMerge = null;
      await this.#state.accept(state, mr, { by, squash, auto: false });
      if ((mr.state as GitLabMr["state"]) === "merged") this.#hookMr(state, mr, "merge");
    }
    // A settle started elsewhere (a job finishing) may still be merging.
    await this.#state.mergesSettled(state);
  }

  protected override async handleApi(request: Parameters<ApiHandler>[0]): Promise<ApiAnswer | null> {
    const pathname = request.url.pathname.replace(/^\/api\/v4/, "");
    const user = this.#state.authenticate(request.headers);
    const answer = await dispatchContract<GitLabRouteContext>(
      this.#routes,
      "GitLab",
      { method: request.method, pathname, query: request.url.searchParams, body: request.body },
      (params) => {
        if (!user) return { refuse: { status: 401, body: { message: "401 Unauthorized" } } };
        const project = params.id === undefined ? undefined : this.#state.find(params.id);
        if (params.id !== undefined && (!project || user.accessLevel === 0)) {
          return { refuse: { status: 404, body: { message: "404 Project Not Found" } } };
        }
        return { ok: { user, project: project as GitLabProject, state: this.#state, issues: this.#issues } };
      },
      this.server.violations,
      (problems) => ({ status: 400, body: { message: problems.join("; ") } }),
    );
    this.#afterWrite(request.method, answer);
    return answer;
  }

  /** The Merge Request Hook for a write that changed a merge request. */
  #afterWrite(method: string, answer: ApiAnswer | null): void {
    if (method === "GET" || !answer || answer.status >= 300) return;
    const body = answer.body as { iid?: number; project_id?: number; state?: string } | undefined;
    // Only a merge request's answer (an issue's has an iid too, and its own hooks).
    if (!body || !("source_branch" in body)) return;
    const project = [...this.#state.projects.values()].find((p) => p.id === body?.project_id);
    const mr = project?.mrs.find((m) => m.iid === body?.iid);
    if (!project || !mr) return;
    const action =
      method === "POST"
        ? "open"
        : mr.state === "merged"
          ? "merge"
          : mr.state === "closed"
            ? "close"
            : "update";
    this.#hookMr(project, mr, action);
  }

  /** The Pipeline Hook of `pipeline`, naming the open merge request whose head it ran on. */
  #hookPipeline(project: GitLabProject, pipeline: GitLabPipeline): void {
    this.track(
      (async () => {
        let mr: GitLabMr | undefined;
        for (const m of project.mrs) {
          if (m.state === "opened" && (await this.#state.headSha(project, m)) === pipeline.sha) mr = m;
        }
        const body = this.#state.pipelineBody(project, pipeline);
        const jobs = project.jobs.filter((j) => j.pipelineId === pipeline.id);
        const example = GITLAB_PIPELINE_HOOK_EXAMPLE;
        this.deliver("Pipeline Hook", {
          ...example,
          object_attributes: {
            ...example.object_attributes,
            id: pipeline.id,
            iid: pipeline.iid,
            name: `Pipeline for branch: ${pipeline.ref}`,
            ref: pipeline.ref,
            sha: pipeline.sha,
            source: pipeline.source,
            status: body.status,
            detailed_status: body.status === "success" ? "passed" : body.status,
            stages: ["test"],
            created_at: pipeline.createdAt,
            url: body.web_url,
          },
          merge_request: mr
            ? {
                ...example.merge_request,
                id: mr.id,
                iid: mr.iid,
                title: mr.title,
                source_branch: mr.source,
                source_project_id: project.id,
                target_branch: mr.target,
                target_project_id: project.id,
                state: mr.state,
                url: `${this.url}/${project.path}/-/merge_requests/${mr.iid}`,
              }
            : null,
          project: this.#hookProject(project),
          commit: {
            ...example.commit,
            id: pipeline.sha,
            url: `${this.url}/${project.path}/-/commit/${pipeline.sha}`,
          },
          builds: jobs.map((j) => ({
            ...example.builds[0],
            id: j.id,
            stage: "test",
            name: j.name,
            status: j.status,
            allow_failure: j.allowFailure,
            when: "on_success",
            manual: false,
          })),
        });
      })(),
    );
  }

  /** The Note Hook of a comment on a merge request (on its diff when `discussion` has a position). */
  #hookNote(
    project: GitLabProject,
    mr: GitLabMr,
    note: { id: number; author: string; body: string; createdAt: string },
    discussion: GitLabDiscussion | null,
  ): void {
    const example = GITLAB_MR_NOTE_HOOK_EXAMPLE;
    this.deliver("Note Hook", {
      ...example,
      user: { ...example.user, id: hashId(note.author), name: note.author, username: note.author },
      project_id: project.id,
      project: this.#hookProject(project),
      object_attributes: {
        ...example.object_attributes,
        id: note.id,
        note: note.body,
        discussion_id: discussion?.id ?? example.object_attributes.discussion_id,
        author_id: hashId(note.author),
        created_at: note.createdAt,
        updated_at: note.createdAt,
        project_id: project.id,
        noteable_id: mr.id,
        url: `${this.url}/${project.path}/-/merge_requests/${mr.iid}#note_${note.id}`,
        type: discussion ? (discussion.path === null ? "DiscussionNote" : "DiffNote") : null,
        position: discussion?.path != null ? { new_path: discussion.path, new_line: discussion.line } : null,
      },
      merge_request: {
        ...example.merge_request,
        id: mr.id,
        iid: mr.iid,
        target_branch: mr.target,
        source_branch: mr.source,
        source_project_id: project.id,
        target_project_id: project.id,
        title: mr.title,
        state: mr.state,
        description: mr.description ?? "",
        source: this.#hookProject(project),
        target: this.#hookProject(project),
      },
    });
  }

  #hookProject(project: GitLabProject) {
    return {
      ...GITLAB_MERGE_REQUEST_HOOK_EXAMPLE.project,
      ...GITLAB_MR_NOTE_HOOK_EXAMPLE.project,
      id: project.id,
      name: project.path.split("/").at(-1) ?? project.path,
      web_url: `${this.url}/${project.path}`,
      path_with_namespace: project.path,
      git_http_url: this.cloneUrl(project.path),
      default_branch: "main",
    };
  }

  /** The Merge Request Hook of `action` on `mr`, by `by` (who merged, else its author). */
  #hookMr(project: GitLabProject, mr: GitLabMr, action: string, by = mr.mergedBy ?? mr.author): void {
    this.deliver("Merge Request Hook", {
      ...GITLAB_MERGE_REQUEST_HOOK_EXAMPLE,
      user: {
        ...GITLAB_MERGE_REQUEST_HOOK_EXAMPLE.user,
        username: by,
        name: by,
      },
      project: { ...GITLAB_MERGE_REQUEST_HOOK_EXAMPLE.project, ...this.#hookProject(project) },
      object_attributes: {
        ...GITLAB_MERGE_REQUEST_HOOK_EXAMPLE.object_attributes,
        id: mr.id,
        iid: mr.iid,
        target_branch: mr.target,
        source_branch: mr.source,
        title: mr.title,
        description: mr.description ?? "",
        state: mr.state,
        url: `${this.url}/${project.path}/-/merge_requests/${mr.iid}`,
        action,
        merge_commit_sha: mr.mergeCommitSha ?? mr.squashCommitSha,
        last_commit: { id: mr.shaAtClose ?? "", message: mr.title },
        created_at: mr.createdAt,
        updated_at: mr.updatedAt,
      },
      labels: mr.labels.map((title) => ({ title })),
    });
  }
}
