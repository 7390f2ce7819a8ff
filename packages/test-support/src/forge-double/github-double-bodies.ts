/**
 * The GitHub double's REST bodies, each built as an instance of its schema in GitHub's OpenAPI
 * description (pull requests, check runs, repositories, users, labels).
 */

import { cloneUrlOf } from "./double-base.ts";
import type { CheckRun, DoublePull, GitHubDoubleState } from "./github-double-state.ts";
import type { GitHubOpenApi } from "./github-openapi.ts";

export class GitHubBodies {
  readonly #openapi: GitHubOpenApi;
  readonly #state: GitHubDoubleState;
  readonly #url: () => string;

  constructor(openapi: GitHubOpenApi, state: GitHubDoubleState, url: () => string) {
    this.#openapi = openapi;
    this.#state = state;
    this.#url = url;
  }

  get url(): string {
    return this.#url();
  }

  async pullBody(
    repository: string,
    pull: DoublePull,
    schema: "pull-request" | "pull-request-simple",
  ): Promise<Record<string, unknown>> {
    const owner = repository.split("/")[0] ?? "";
    const headSha = await this.#state.headSha(repository, pull);
    const baseSha = (await this.#state.git.resolve(repository, `refs/heads/${pull.base}`)) ?? headSha;
    const repo = this.#openapi.instanceOf("repository", this.repoFields(repository, owner));
    const api = `${this.url}/api/v3/repos/${repository}`;
    const fields: Record<string, unknown> = {
      id: Number(pull.nodeId.slice(3)),
      node_id: pull.nodeId,
      number: pull.number,
      state: pull.state,
      locked: false,
      title: pull.title,
      body: pull.body,
      user: this.simpleUser(pull.author),
      labels: pull.labels.map((name) => this.label(name)),
      milestone: null,
      active_lock_reason: null,
      created_at: pull.createdAt,
      updated_at: pull.updatedAt,
      closed_at: pull.state === "closed" ? pull.updatedAt : null,
      merged_at: pull.mergedAt,
      merge_commit_sha: pull.mergeCommitSha,
      assignee: null,
      assignees: [],
      requested_reviewers: [],
      requested_teams: [],
      draft: false,
      auto_merge: pull.autoMerge
        ? {
            enabled_by: this.simpleUser(pull.autoMerge.by),
            merge_method: pull.autoMerge.method,
            commit_title: "",
            commit_message: "",
          }
        : null,
      author_association: "MEMBER",
      html_url: `${this.url}/${repository}/pull/${pull.number}`,
      url: `${api}/pulls/${pull.number}`,
      head: {
        label: `${owner}:${pull.head}`,
        ref: pull.head,
        sha: headSha,
        user: this.simpleUser(owner),
        repo,
      },
      base: {
        label: `${owner}:${pull.base}`,
        ref: pull.base,
        sha: baseSha,
        user: this.simpleUser(owner),
        repo,
      },
    };
    if (schema === "pull-request") {
      Object.assign(fields, {
        merged: pull.mergedAt !== null,
        mergeable:
          pull.state === "open" ? await this.#state.git.mergeable(repository, pull.base, headSha) : null,
        rebaseable: null,
        mergeable_state: "unknown",
        merged_by: pull.mergedBy ? this.simpleUser(pull.mergedBy) : null,
        comments: 0,
        review_comments: this.#state.repo(repository).threads.filter((t) => t.pull === pull.number).length,
        maintainer_can_modify: false,
        commits: 1,
        additions: 0,
        deletions: 0,
        changed_files: 0,
      });
    }
    return this.#openapi.instanceOf(schema, fields);
  }

  checkRunBody(run: CheckRun): Record<string, unknown> {
    return this.#openapi.instanceOf("check-run", {
      id: run.id,
      node_id: `CR_${run.id}`,
      head_sha: run.sha,
      name: run.name,
      status: run.status,
      conclusion: run.conclusion,
      external_id: null,
      details_url: `${this.url}/actions/runs/${run.id}`,
      html_url: `${this.url}/actions/runs/${run.id}/job/${run.id}`,
      started_at: null,
      completed_at: null,
      check_suite: null,
      app: this.#openapi.instanceOf("integration", {
        slug: "github-actions",
        name: "GitHub Actions",
        id: 15368,
      }),
      pull_requests: [],
      output: {
        title: null,
        summary: null,
        text: null,
        annotations_count: 0,
        annotations_url: `${this.url}/x`,
      },
    });
  }

  repoFields(repository: string, owner: string): Record<string, unknown> {
    const name = repository.split("/")[1] ?? "";
    return {
      id: 1,
      node_id: "R_1",
      name,
      full_name: repository,
      owner: this.simpleUser(owner),
      private: true,
      default_branch: "main",
      html_url: `${this.url}/${repository}`,
      clone_url: cloneUrlOf(this.url, repository),
    };
  }

  simpleUser(login: string): Record<string, unknown> {
    return this.#openapi.instanceOf("simple-user", this.userFields(login));
  }

  userFields(login: string): Record<string, unknown> {
    return {
      login,
      id: hashId(login),
      node_id: `U_${hashId(login)}`,
      type: login.endsWith("[bot]") ? "Bot" : "User",
      name: null,
      email: null,
    };
  }

  label(name: string): Record<string, unknown> {
    return this.#openapi.instanceOf("label", {
      id: hashId(name),
      node_id: `LA_${hashId(name)}`,
      name,
      color: "ededed",
      default: false,
      description: "",
    });
  }
}

function hashId(text: string): number {
  let h = 7;
  for (const ch of text) h = (h * 31 + ch.charCodeAt(0)) % 1_000_000;
  return h + 1;
}
