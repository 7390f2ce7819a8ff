/**
 * One adapter from a project's forge settings: the forge kind, its URL and the repository's
 * path on it, and the token read host-side (service environment or secret store; never from
 * the sandbox).
 */
import type { ForgeAdapter, ForgeKind } from "./forge-adapter.ts";
import type { ForgeCallCounter } from "./forge-call-counter.ts";
import { rateGateFor, rateGateKey } from "./forge-rate-gate.ts";
import { GiteaAdapter } from "./gitea-adapter.ts";
import { GitHubAdapter, type GitHubAuth } from "./github-adapter.ts";
import { GitLabAdapter } from "./gitlab-adapter.ts";
import type { RetryPolicy } from "./retrying-fetch.ts";

export interface ForgeConnection {
  readonly forge: ForgeKind;
  /**
   * The forge's web URL: `https://github.com` (API at api.github.com), a GitHub Enterprise
   * Server (`https://ghe.example`, API at `/api/v3`), `https://gitlab.com` or a self-hosted
   * GitLab, a Gitea/Forgejo instance.
   */
  readonly url: string;
  /** The repository's path on the forge: `owner/repo` (GitLab: `group/sub/project`). */
  readonly repository: string;
  readonly auth: GitHubAuth;
  readonly counter?: ForgeCallCounter;
  /** Retries of a 5xx or rate-limited request (GitLab/Gitea policy; GitHub's retry count). */
  readonly retry?: Partial<RetryPolicy>;
  /**
   * GitHub: least ms between two writes of the token (`OVERSEER_GITHUB_WRITE_INTERVAL_MS`;
   * github-write-pacing.ts). Default 1000; 0: no pacing. Other forges: unused.
   */
  readonly githubWriteIntervalMs?: number;
}

/** The REST base of a GitHub web URL: api.github.com for github.com, `/api/v3` for Enterprise Server. */
export function githubApiUrl(url: string): string {
  const web = new URL(url);
  if (web.hostname === "github.com" || web.hostname === "www.github.com") return "https://api.github.com";
  if (web.hostname.startsWith("api.")) return url.replace(/\/+$/, "");
  return `${web.origin}${web.pathname.replace(/\/+$/, "")}/api/v3`;
}

/**
 * The adapter of one job. Adapters are cheap and made per job (each counts its own calls), but
 * what the forge says about a token's rate limit is shared by every adapter of that (forge URL,
 * token) in the process: one rate gate (forge-rate-gate.ts), and on GitHub one set of Octokit
 * throttling groups.
 */
export function createForgeAdapter(connection: ForgeConnection): ForgeAdapter {
  const [owner = "", ...rest] = connection.repository.split("/");
  const repo = rest.join("/");
  const counter = connection.counter ? { counter: connection.counter } : {};
  const auth = connection.auth;
  const credential = auth.kind === "token" ? auth.token : `github-app:${auth.appId}:${auth.installationId}`;
  const apiUrl = connection.forge === "github" ? githubApiUrl(connection.url) : connection.url;
  const gate = rateGateFor(`${connection.forge}:${apiUrl}`, credential);
  const retry = { retry: { ...connection.retry, gate } };
  if (connection.forge === "github") {
    return new GitHubAdapter({
      apiUrl,
      gate: { gate, id: rateGateKey(`github:${apiUrl}`, credential) },
      owner,
      repo,
      auth: connection.auth,
      ...counter,
      ...(connection.retry?.retries !== undefined ? { retries: connection.retry.retries } : {}),
      ...(connection.retry?.baseDelayMs !== undefined ? { retryBaseMs: connection.retry.baseDelayMs } : {}),
      writeIntervalMs: connection.githubWriteIntervalMs,
    });
  }
  if (connection.auth.kind !== "token") {
    throw new Error(`${connection.forge} takes an access token, not GitHub App credentials.`);
  }
  if (connection.forge === "gitlab") {
    return new GitLabAdapter({
      host: connection.url,
      project: connection.repository,
      token: connection.auth.token,
      ...counter,
      ...retry,
    });
  }
  return new GiteaAdapter({
    url: connection.url,
    owner,
    repo,
    token: connection.auth.token,
    ...counter,
    ...retry,
  });
}
