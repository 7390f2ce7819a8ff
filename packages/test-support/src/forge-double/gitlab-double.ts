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
  type GitLabProject,
} from "./gitlab-double-state.ts";
import { GITLAB_MERGE_REQUEST_HOOK_EXAMPLE } from "./gitlab-examples.ts";
import { type GitLabRouteContext, gitlabRoutes } from "./gitlab-routes.ts";

/** What GitLab's pre-receive check prints (git shows it after `remote:`). */
const PROTECTED = "GitLab: You are not allowed to push code to protected branches on this project.";

export class GitLabDouble extends ForgeDoubleBase {
  readonly kind = "gitlab" as const;
  readonly #state: GitLabDoubleState;
  readonly #routes = gitlabRoutes();

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

  /** A new pipeline on `sha` with `jobs` (each with its trace); the ids of the pipeline and its jobs. */
  setPipeline(
    project: string,
    sha: string,
    jobs: readonly { name: string; status: GitLabJobStatus; log?: string }[],
    ref = "main",
  ): { pipelineId: number; jobIds: number[] } {
    const state = this.#state.project(project);
    const pipelineId = this.#state.nextId();
    state.pipelines.push({
      id: pipelineId,
      iid: state.pipelines.length + 1,
      sha,
      ref,
      createdAt: new Date().toISOString(),
    });
    const jobIds = jobs.map((job) => {
      const id = this.#state.nextId();
      state.jobs.push({ id, pipelineId, name: job.name, status: job.status, log: job.log ?? "" });
      return id;
    });
    this.deliver("Pipeline Hook", {
      object_kind: "pipeline",
      object_attributes: this.#state.pipelineBody(state, state.pipelines.at(-1) as never),
      project: { id: state.id, path_with_namespace: project, web_url: `${this.url}/${project}` },
      merge_request: null,
    });
    return { pipelineId, jobIds };
  }

  /** Sets a job's status (a running job finishing). */
  setJob(project: string, jobId: number, status: GitLabJobStatus, log?: string): void {
    const job = this.#state.project(project).jobs.find((j) => j.id === jobId);
    if (!job) throw new Error(`No job ${jobId}.`);
    job.status = status;
    if (log !== undefined) job.log = log;
  }

  /** A person's review: `approved` also approves (approvals API), `requested_changes` sets their reviewer state. */
  review(
    project: string,
    iid: number,
    username: string,
    verdict: "approved" | "requested_changes" | "reviewed",
  ): void {
    const mr = this.#state.mr(this.#state.project(project), iid);
    const reviewer = mr.reviewers.find((r) => r.username === username);
    if (reviewer) reviewer.state = verdict;
    else mr.reviewers.push({ username, state: verdict });
    if (verdict === "approved" && !mr.approvedBy.includes(username)) mr.approvedBy.push(username);
    if (verdict !== "approved") mr.approvedBy = mr.approvedBy.filter((u) => u !== username);
  }

  /** Approves without being a reviewer (GitLab lets any eligible member approve). */
  approve(project: string, iid: number, username: string): void {
    const mr = this.#state.mr(this.#state.project(project), iid);
    if (!mr.approvedBy.includes(username)) mr.approvedBy.push(username);
  }

  /** A diff discussion opened by a person on `path`:`line` of the head; its id. */
  comment(
    project: string,
    iid: number,
    note: { username: string; path: string; line: number; body: string },
  ): string {
    const state = this.#state.project(project);
    this.#state.mr(state, iid);
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
    return discussion.id;
  }

  reply(project: string, discussionId: string, username: string, body: string, resolve = false): void {
    const discussion = this.#state.project(project).discussions.find((d) => d.id === discussionId);
    if (!discussion) throw new Error(`No discussion ${discussionId}.`);
    discussion.notes.push({
      id: this.#state.nextId(),
      author: username,
      body,
      createdAt: new Date().toISOString(),
    });
    if (resolve) discussion.resolved = true;
  }

  /** A comment a person writes on the merge request (not on the diff). */
  note(project: string, iid: number, username: string, body: string): void {
    const mr = this.#state.mr(this.#state.project(project), iid);
    mr.notes.push({
      id: this.#state.nextId(),
      author: username,
      body,
      createdAt: new Date().toISOString(),
      system: false,
    });
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
      const { by, squash } = mr.autoMerge;
      mr.autoMerge = null;
      await this.#state.accept(state, mr, { by, squash, auto: false });
      if ((mr.state as GitLabMr["state"]) === "merged") this.#hookMr(state, mr, "merge");
    }
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
        return { ok: { user, project: project as GitLabProject, state: this.#state } };
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

  #hookMr(project: GitLabProject, mr: GitLabMr, action: string): void {
    this.deliver("Merge Request Hook", {
      ...GITLAB_MERGE_REQUEST_HOOK_EXAMPLE,
      user: {
        ...GITLAB_MERGE_REQUEST_HOOK_EXAMPLE.user,
        username: mr.mergedBy ?? mr.author,
        name: mr.author,
      },
      project: {
        ...GITLAB_MERGE_REQUEST_HOOK_EXAMPLE.project,
        id: project.id,
        name: project.path.split("/").at(-1) ?? project.path,
        web_url: `${this.url}/${project.path}`,
        path_with_namespace: project.path,
        git_http_url: this.cloneUrl(project.path),
      },
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
