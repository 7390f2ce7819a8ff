/**
 * The GitLab adapter (gitlab.com and self-hosted): gitbeaker's resources over Overseer's
 * retrying, counting fetch, with a project or group access token. A pull request is a merge
 * request (`number` is its `iid`); checks are the jobs and commit statuses of its head pipeline
 * (gitlab-checks.ts); a review is an approval or a reviewer's requested changes, on the head it
 * was given on (gitlab-reviews.ts); threads are resolvable discussions, on the diff or on the
 * merge request itself.
 */
import type {
  Commits,
  Jobs,
  MergeRequestApprovals,
  MergeRequestDiscussions,
  MergeRequestNotes,
  MergeRequests,
  PersonalAccessTokens,
  Pipelines,
  Projects,
  Users,
} from "@gitbeaker/rest";
import { ensurePull, findPull, type PullPort } from "./ensure-pull.ts";
import type {
  CheckState,
  ConditionalRead,
  EnsuredPullRequest,
  ForgeAdapter,
  ForgeRight,
  MergeOutcome,
  MergeRequest,
  PullRequestDraft,
  PullRequestState,
  ReviewComment,
  ReviewState,
  ReviewThread,
  ReviewVerdict,
  TokenRights,
} from "./forge-adapter.ts";
import { asOperation, ForgeCallCounter } from "./forge-call-counter.ts";
import { ForgeError } from "./forge-errors.ts";
import { parseForgeResponse } from "./forge-response.ts";
import { gitlabChecks, traceTail } from "./gitlab-checks.ts";
import { gitlabRequesterFn } from "./gitlab-requester.ts";
import { attributeVerdicts, type GitLabVerdict } from "./gitlab-reviews.ts";
import {
  GitLabApprovalsSchema,
  GitLabCommitStatusesSchema,
  GitLabDiscussionsSchema,
  GitLabJobsSchema,
  type GitLabMergeRequest,
  GitLabMergeRequestSchema,
  GitLabNotesSchema,
  GitLabPipelinesSchema,
  GitLabProjectSchema,
  GitLabReviewersSchema,
  GitLabTokenSelfSchema,
  GitLabUserSchema,
  GitLabVersionsSchema,
} from "./gitlab-schemas.ts";
import { RETRY_POLICY_DEFAULTS, type RetryPolicy, retryingFetch } from "./retrying-fetch.ts";
import { FORGE_RIGHTS, rightsAdvice } from "./token-rights.ts";

export interface GitLabAdapterOptions {
  /** The instance: `https://gitlab.com` or a self-hosted one (without `/api/v4`). */
  readonly host: string;
  /** The project's full path (`group/sub/project`) or numeric id. */
  readonly project: string;
  /** A project or group access token (or a personal one). */
  readonly token: string;
  readonly counter?: ForgeCallCounter;
  readonly retry?: Partial<RetryPolicy>;
}

const DEVELOPER = 30;
/** How long a merge request's `head_pipeline` read by this adapter stands for its head's checks. */
const HEAD_PIPELINE_REUSE_MS = 2_000;
const MAINTAINER = 40;

interface GitLabApi {
  mrs: InstanceType<typeof MergeRequests<false>>;
  discussions: InstanceType<typeof MergeRequestDiscussions<false>>;
  notes: InstanceType<typeof MergeRequestNotes<false>>;
  approvals: InstanceType<typeof MergeRequestApprovals<false>>;
  pipelines: InstanceType<typeof Pipelines<false>>;
  jobs: InstanceType<typeof Jobs<false>>;
  commits: InstanceType<typeof Commits<false>>;
  projects: InstanceType<typeof Projects<false>>;
  users: InstanceType<typeof Users<false>>;
  tokens: InstanceType<typeof PersonalAccessTokens<false>>;
}

export class GitLabAdapter implements ForgeAdapter {
  readonly kind = "gitlab" as const;
  readonly calls: ForgeCallCounter;
  readonly #project: string;
  readonly #connect: () => Promise<GitLabApi>;
  #api: Promise<GitLabApi> | undefined;
  #lastRead: { sha: string; headPipeline: { id: number; sha: string } | null; at: number } | null = null;

  constructor(options: GitLabAdapterOptions) {
    this.calls = options.counter ?? new ForgeCallCounter();
    this.#project = options.project;
    const send = retryingFetch(this.calls, { ...RETRY_POLICY_DEFAULTS, ...options.retry });
    const host = options.host.replace(/\/+$/, "");
    // gitbeaker is loaded at the first call, so a gateway whose projects use no GitLab never
    // holds it (and every GC does not mark it).
    this.#connect = async () => {
      const [gitbeaker, requesterFn] = await Promise.all([
        import("@gitbeaker/rest"),
        gitlabRequesterFn(send),
      ]);
      const config = { host, token: options.token, requesterFn };
      return {
        mrs: new gitbeaker.MergeRequests(config),
        discussions: new gitbeaker.MergeRequestDiscussions(config),
        notes: new gitbeaker.MergeRequestNotes(config),
        approvals: new gitbeaker.MergeRequestApprovals(config),
        pipelines: new gitbeaker.Pipelines(config),
        jobs: new gitbeaker.Jobs(config),
        commits: new gitbeaker.Commits(config),
        projects: new gitbeaker.Projects(config),
        users: new gitbeaker.Users(config),
        tokens: new gitbeaker.PersonalAccessTokens(config),
      };
    };
  }

  /** gitbeaker's resources, built once; a failed load is retried at the next call. */
  #gl(): Promise<GitLabApi> {
    this.#api ??= this.#connect();
    this.#api.catch(() => {
      this.#api = undefined;
    });
    return this.#api;
  }

  ensurePullRequest(draft: PullRequestDraft): Promise<EnsuredPullRequest> {
    return this.#op("ensurePullRequest", () => ensurePull(this.#port, draft));
  }

  findPullRequest(head: string, marker: string): Promise<PullRequestState | null> {
    return this.#op("findPullRequest", () => findPull(this.#port, head, marker));
  }

  getPullRequest(number: number): Promise<PullRequestState> {
    return this.#op("getPullRequest", async () => toState(await this.#showMr(number)));
  }

  /** A merge request read in full; its head pipeline is kept a moment for `listChecks` of its head. */
  async #showMr(number: number): Promise<GitLabMergeRequest> {
    const full = mr(await (await this.#gl()).mrs.show(this.#project, number), `GET merge_requests/${number}`);
    if (full.state === "opened") {
      this.#lastRead = { sha: full.sha, headPipeline: full.head_pipeline ?? null, at: Date.now() };
    }
    return full;
  }

  /**
   * The checks of the merge request's head pipeline: its jobs (the latest try of each) and the
   * external statuses on its sha. The pipeline is the `head_pipeline` of the open merge request
   * whose head is `sha`, else (no merge request yet) the newest pipeline of `sha`.
   */
  listChecks(sha: string): Promise<readonly CheckState[]> {
    return this.#op("listChecks", async () => {
      const pipeline = await this.#headPipeline(sha);
      if (!pipeline) return [];
      const jobs = parseForgeResponse(
        "gitlab",
        GitLabJobsSchema,
        await (await this.#gl()).jobs.all(this.#project, { pipelineId: pipeline.id, perPage: 100 }),
        "GET pipeline jobs",
      );
      const statuses = parseForgeResponse(
        "gitlab",
        GitLabCommitStatusesSchema,
        await (await this.#gl()).commits.allStatuses(this.#project, pipeline.sha, { all: false }),
        "GET commit statuses",
      );
      return gitlabChecks(pipeline.id, jobs, statuses);
    });
  }

  /**
   * The head pipeline of the open merge request whose head is `sha`: from the merge request this
   * adapter read within HEAD_PIPELINE_REUSE_MS (a sync reads it just before its checks; the
   * runner makes one adapter per job), else found by the commit.
   */
  async #headPipeline(sha: string): Promise<{ id: number; sha: string } | null> {
    const recent = this.#lastRead;
    if (recent?.sha === sha && recent.headPipeline && Date.now() - recent.at < HEAD_PIPELINE_REUSE_MS) {
      return recent.headPipeline;
    }
    const containing = (await (await this.#gl()).commits.allMergeRequests(this.#project, sha)) as unknown[];
    const open = containing
      .map((item) => mr(item, "GET commit merge_requests"))
      .find((m) => m.state === "opened" && m.sha === sha);
    if (open) {
      const full = await this.#showMr(open.iid);
      if (full.sha === sha && full.head_pipeline) return full.head_pipeline;
    }
    const pipelines = parseForgeResponse(
      "gitlab",
      GitLabPipelinesSchema,
      await (await this.#gl()).pipelines.all(this.#project, { sha, orderBy: "id", sort: "desc", perPage: 1 }),
      "GET pipelines",
    );
    return pipelines[0] ?? null;
  }

  /**
   * Approvals (anyone eligible may approve, reviewer or not) and the states of the assigned
   * reviewers (requested changes, reviewed), each on the head it was given on (gitlab-reviews.ts:
   * GitLab's system notes say when, the diff versions which head was there then). An approval is
   * what GitLab counts, so it wins over a reviewer state of the same person.
   */
  listReviews(number: number): Promise<readonly ReviewState[]> {
    return this.#op("listReviews", async () => {
      const approvals = parseForgeResponse(
        "gitlab",
        GitLabApprovalsSchema,
        await (await this.#gl()).approvals.showConfiguration(this.#project, { mergerequestIId: number }),
        "GET approvals",
      );
      const reviewers = parseForgeResponse(
        "gitlab",
        GitLabReviewersSchema,
        await (await this.#gl()).mrs.showReviewers(this.#project, number),
        "GET reviewers",
      );
      const verdicts: GitLabVerdict[] = (approvals.approved_by ?? []).map(({ user }) => ({
        userId: user.id,
        author: user.username,
        verdict: "approved",
      }));
      for (const r of reviewers) {
        if (r.state === "unreviewed" || r.state === "approved" || r.state === "review_started") continue;
        if (verdicts.some((v) => v.author === r.user.username)) continue;
        verdicts.push({ userId: r.user.id, author: r.user.username, verdict: reviewerVerdict(r.state) });
      }
      if (verdicts.length === 0) return [];
      const notes = await this.#allNotes(number);
      const versions = parseForgeResponse(
        "gitlab",
        GitLabVersionsSchema,
        await (await this.#gl()).mrs.allDiffVersions(this.#project, number),
        `GET merge_requests/${number}/versions`,
      );
      return attributeVerdicts(
        verdicts,
        notes.map((n) => ({
          author: n.author.username,
          body: n.body,
          createdAt: n.created_at,
          system: n.system,
        })),
        versions.map((v) => ({ headSha: v.head_commit_sha, createdAt: v.created_at })),
      );
    });
  }

  async #allNotes(number: number) {
    return (await this.#gl()).notes
      .all(this.#project, number, { sort: "asc", orderBy: "created_at", perPage: 100 })
      .then((notes) =>
        parseForgeResponse("gitlab", GitLabNotesSchema, notes, `GET merge_requests/${number}/notes`),
      );
  }

  listReviewThreads(number: number): Promise<readonly ReviewThread[]> {
    return this.#op("listReviewThreads", async () => {
      const discussions = parseForgeResponse(
        "gitlab",
        GitLabDiscussionsSchema,
        await (await this.#gl()).discussions.all(this.#project, number, { perPage: 100 }),
        "GET discussions",
      );
      return discussions.flatMap((discussion): ReviewThread[] => {
        const first = discussion.notes[0];
        // A resolvable thread: on a diff line (DiffNote), or on the merge request itself (DiscussionNote).
        if (!first || first.system || first.resolvable !== true) return [];
        if (first.type !== "DiffNote" && first.type !== "DiscussionNote") return [];
        return [
          {
            id: discussion.id,
            path: first.position?.new_path ?? "",
            line: first.position?.new_path ? (first.position.new_line ?? null) : null,
            resolved: discussion.notes.every((note) => !note.resolvable || note.resolved === true),
            comments: discussion.notes.map((note) => ({
              id: note.id,
              author: note.author.username,
              body: note.body,
              createdAt: note.created_at,
            })),
          },
        ];
      });
    });
  }

  merge(number: number, request: MergeRequest): Promise<MergeOutcome> {
    return this.#op("merge", () => this.#accept(number, request, false));
  }

  enableAutoMerge(number: number, request: MergeRequest): Promise<MergeOutcome> {
    return this.#op("enableAutoMerge", () => this.#accept(number, request, true));
  }

  failingLogTail(check: CheckState, maxBytes: number): Promise<string | null> {
    return this.#op("failingLogTail", async () => {
      if (check.jobId === null) return null;
      try {
        const trace = await (await this.#gl()).jobs.showLog(this.#project, check.jobId);
        return traceTail(String(trace), maxBytes);
      } catch (error) {
        if (error instanceof ForgeError && error.code === "not_found") return null;
        throw error;
      }
    });
  }

  checkTokenRights(): Promise<TokenRights> {
    return this.#op("checkTokenRights", async () => {
      const login = parseForgeResponse(
        "gitlab",
        GitLabUserSchema,
        await (await this.#gl()).users.showCurrentUser(),
        "GET user",
      ).username;
      const token = parseForgeResponse(
        "gitlab",
        GitLabTokenSelfSchema,
        await (await this.#gl()).tokens.show(),
        "GET personal_access_tokens/self",
      );
      let level = 0;
      try {
        const project = parseForgeResponse(
          "gitlab",
          GitLabProjectSchema,
          await (await this.#gl()).projects.show(this.#project),
          "GET project",
        );
        level = Math.max(
          project.permissions?.project_access?.access_level ?? 0,
          project.permissions?.group_access?.access_level ?? 0,
          10,
        );
      } catch (error) {
        if (!(error instanceof ForgeError) || (error.code !== "not_found" && error.code !== "forbidden"))
          throw error;
      }
      const scopes = new Set(token.scopes);
      const api = scopes.has("api");
      const readApi = api || scopes.has("read_api");
      const granted = new Set<ForgeRight>();
      if (level > 0 && readApi) granted.add("read");
      if (level >= DEVELOPER && scopes.has("write_repository")) granted.add("push");
      if (level >= DEVELOPER && api) granted.add("pull_requests");
      if (level > 0 && readApi) granted.add("checks_read");
      if (level >= MAINTAINER && api) granted.add("merge");
      const missing = FORGE_RIGHTS.filter((right) => !granted.has(right));
      return { login, granted: [...granted], missing, advice: rightsAdvice("gitlab", missing) };
    });
  }

  closePullRequest(number: number): Promise<void> {
    return this.#op("closePullRequest", async () => {
      await (await this.#gl()).mrs.edit(this.#project, number, { stateEvent: "close" });
    });
  }

  // GitLab answers no ETag on these resources: every read is a full one (`etag` stays null).
  async readPullRequest(number: number, _etag: string | null): Promise<ConditionalRead<PullRequestState>> {
    return { changed: true, value: await this.getPullRequest(number), etag: null };
  }

  async readChecks(sha: string, _etag: string | null): Promise<ConditionalRead<readonly CheckState[]>> {
    return { changed: true, value: await this.listChecks(sha), etag: null };
  }

  async readReviews(number: number, _etag: string | null): Promise<ConditionalRead<readonly ReviewState[]>> {
    return { changed: true, value: await this.listReviews(number), etag: null };
  }

  /** The merge request's own notes: neither system notes nor notes on the diff (those are threads). */
  readComments(number: number, _etag: string | null): Promise<ConditionalRead<readonly ReviewComment[]>> {
    return this.#op("readComments", async () => {
      const notes = await this.#allNotes(number);
      const value = notes
        .filter((note) => !note.system && note.type !== "DiffNote" && note.type !== "DiscussionNote")
        .map((note) => ({
          id: note.id,
          author: note.author.username,
          body: note.body,
          createdAt: note.created_at,
        }));
      return { changed: true, value, etag: null };
    });
  }

  /** A note in the thread's discussion (`thread.id` is the discussion id). */
  replyToThread(number: number, thread: ReviewThread, body: string): Promise<void> {
    return this.#op("replyToThread", async () => {
      await (await this.#gl()).discussions.addNote(this.#project, number, thread.id, body);
    });
  }

  addComment(number: number, body: string): Promise<void> {
    return this.#op("addComment", async () => {
      await (await this.#gl()).notes.create(this.#project, number, body);
    });
  }

  setBase(number: number, base: string): Promise<PullRequestState> {
    return this.#op("setBase", async () =>
      toState(
        mr(
          await (await this.#gl()).mrs.edit(this.#project, number, { targetBranch: base }),
          `PUT merge_requests/${number}`,
        ),
      ),
    );
  }

  /**
   * GitLab's accept, with the approved sha. `rebase` is not a choice per merge on GitLab (the
   * project's merge method decides between a merge commit and a fast-forward), so it is refused
   * with what to set. Auto-merge sends both names GitLab has used (`auto_merge` since 17.11,
   * `merge_when_pipeline_succeeds` before), so an older instance waits for the pipeline too
   * instead of merging at once.
   */
  async #accept(number: number, request: MergeRequest, auto: boolean): Promise<MergeOutcome> {
    if (request.method === "rebase") {
      return {
        kind: "refused",
        reason:
          "GitLab has no rebase merge per merge request: set landing.pull_request.merge_method to merge or squash, and choose fast-forward or semi-linear merges in the GitLab project's merge settings.",
      };
    }
    try {
      const merged = mr(
        await (await this.#gl()).mrs.accept(this.#project, number, {
          sha: request.sha,
          squash: request.method === "squash",
          ...(auto ? { autoMerge: true, mergeWhenPipelineSucceeds: true } : {}),
          ...(request.commitTitle && request.method === "squash"
            ? { squashCommitMessage: request.commitTitle }
            : {}),
          ...(request.commitTitle && request.method === "merge"
            ? { mergeCommitMessage: request.commitTitle }
            : {}),
        }),
        `PUT merge_requests/${number}/merge`,
      );
      if (merged.state !== "merged") return { kind: "queued" };
      return { kind: "merged", sha: merged.merge_commit_sha ?? merged.squash_commit_sha ?? merged.sha };
    } catch (error) {
      if (
        error instanceof ForgeError &&
        (error.status === 405 || error.status === 406 || error.status === 409 || error.status === 422)
      ) {
        return { kind: "refused", reason: error.message };
      }
      throw error;
    }
  }

  async #mrsOf(head: string, state: "opened" | "all"): Promise<GitLabMergeRequest[]> {
    const list = await (await this.#gl()).mrs.all({
      projectId: this.#project,
      sourceBranch: head,
      ...(state === "opened" ? { state: "opened" } : {}),
      orderBy: "created_at",
      sort: "desc",
      perPage: 100,
    });
    return list.map((item) => mr(item, "GET merge_requests"));
  }

  /** What `ensurePull` needs of GitLab: merge requests by source branch, create with labels, one edit. */
  readonly #port: PullPort<GitLabMergeRequest> = {
    forge: "gitlab",
    // "Another open merge request already exists for this source branch": a retried create.
    conflictStatus: 409,
    listOpen: (head) => this.#mrsOf(head, "opened"),
    findFrom: async (head, accept) => (await this.#mrsOf(head, "all")).find(accept) ?? null,
    view: (m) => ({
      name: `Merge request !${m.iid}`,
      title: m.title,
      body: m.description,
      base: m.target_branch,
      labels: m.labels,
    }),
    create: async (draft, description) =>
      mr(
        await (await this.#gl()).mrs.create(this.#project, draft.head, draft.base, draft.title, {
          description,
          ...(draft.labels?.length ? { labels: draft.labels.join(",") } : {}),
        }),
        "POST merge_requests",
      ),
    edit: async (current, change) =>
      mr(
        await (await this.#gl()).mrs.edit(this.#project, current.iid, {
          title: change.title,
          description: change.body,
          targetBranch: change.base,
          ...(change.addLabels.length ? { addLabels: change.addLabels.join(",") } : {}),
        }),
        `PUT merge_requests/${current.iid}`,
      ),
    statusOf: (error) => (error instanceof ForgeError ? error.status : null),
    toState,
  };

  #op<T>(name: string, work: () => Promise<T>): Promise<T> {
    return asOperation(name, async () => {
      try {
        return await work();
      } catch (error) {
        if (error instanceof ForgeError) throw error;
        throw new ForgeError("gitlab", "unavailable", `GitLab ${name} failed: ${String(error)}`);
      }
    });
  }
}

function mr(data: unknown, request: string): GitLabMergeRequest {
  return parseForgeResponse("gitlab", GitLabMergeRequestSchema, data, request);
}

function toState(m: GitLabMergeRequest): PullRequestState {
  const merged = m.state === "merged";
  return {
    number: m.iid,
    url: m.web_url,
    head: m.source_branch,
    headSha: m.sha,
    base: m.target_branch,
    title: m.title,
    body: m.description ?? "",
    status: merged ? "merged" : m.state === "opened" ? "open" : "closed",
    mergeCommitSha: merged ? (m.merge_commit_sha ?? m.squash_commit_sha ?? m.sha) : null,
    mergedBy: merged ? (m.merged_by?.username ?? m.merge_user?.username ?? null) : null,
    mergeable: m.state !== "opened" ? null : gitlabMergeable(m),
  };
}

/** `false` on a conflict, `true` when GitLab found none, `null` while it is still checking. */
function gitlabMergeable(m: GitLabMergeRequest): boolean | null {
  if (m.has_conflicts === true || m.detailed_merge_status === "conflict") return false;
  if (m.detailed_merge_status === "checking" || m.detailed_merge_status === "unchecked") return null;
  return m.has_conflicts === false ? true : null;
}

function reviewerVerdict(state: string): ReviewVerdict {
  if (state === "approved") return "approved";
  if (state === "requested_changes") return "changes_requested";
  return "commented";
}
