/**
 * What Gitea offers of a failing check: the log of the Gitea Actions job behind a commit status,
 * else the status's own words. Gitea ≥ 1.24 serves job logs to a token
 * (`GET /repos/{owner}/{repo}/actions/jobs/{job_id}/logs`); a status Actions sets links to the
 * job's page (`…/actions/runs/{run index}/jobs/{job index}`), which is the job's `html_url` in
 * `GET …/actions/runs/{run id}/jobs`, found from the runs of the head sha. An older Gitea, a
 * Forgejo without that API, or a status set by an outside CI has no log to read: the executor
 * then gets the status's description and its link. The job is looked up only when its log is
 * asked for, so a poll that sees the same red round again costs no Actions request.
 */
import type { CheckState } from "./forge-adapter.ts";
import { codeOfStatus, ForgeError } from "./forge-errors.ts";
import { parseForgeResponse } from "./forge-response.ts";
import { GiteaActionJobsSchema, GiteaActionRunsSchema } from "./gitea-schemas.ts";
import { tail } from "./log-tail.ts";

/** What a failing commit status said, noted by `listChecks` for `failingLogTail`. */
export interface GiteaFailingStatus {
  readonly sha: string;
  readonly context: string;
  readonly targetUrl: string | null;
  readonly description: string;
}

type Run = { id: number; html_url: string };
type Job = { id: number; html_url: string };

const JOB_PAGE = /\/actions\/runs\/\d+\/jobs\/\d+$/;

export class GiteaActions {
  readonly #statuses = new WeakMap<CheckState, GiteaFailingStatus>();
  readonly #runs = new Map<string, Promise<Run[] | null>>();
  readonly #jobs = new Map<number, Promise<Job[]>>();

  constructor(private readonly get: (path: string, query?: Record<string, string>) => Promise<Response>) {}

  /** Remembers what the failing status behind `check` said (`check` is what `listChecks` answered). */
  note(check: CheckState, status: GiteaFailingStatus): CheckState {
    this.#statuses.set(check, status);
    return check;
  }

  /** The job's log tail, else the status's description and link; `null` when Gitea said nothing. */
  async logTail(check: CheckState, maxBytes: number): Promise<string | null> {
    const status = this.#statuses.get(check);
    const jobId = check.jobId ?? (status ? await this.#jobId(status) : null);
    if (jobId !== null) {
      const response = await this.get(`/actions/jobs/${jobId}/logs`);
      if (response.ok) return tail(await response.text(), maxBytes);
      await response.body?.cancel();
      if (response.status !== 404) throw statusError(response, "GET actions job logs");
    }
    if (!status) return null;
    const said = status.description.trim() || "no description";
    const why = jobId === null ? "not a Gitea Actions job this Gitea serves" : "its log is gone";
    return `Gitea keeps no job log Overseer can read for "${status.context}" (${why}). The status says: ${said}. Its page: ${status.targetUrl ?? "none"}`;
  }

  /** The job whose page the status links to: the runs of its sha, then that run's jobs. */
  async #jobId(status: GiteaFailingStatus): Promise<number | null> {
    const url = status.targetUrl;
    if (!url || !JOB_PAGE.test(url)) return null;
    const runs = await this.#cached(this.#runs, status.sha, () => this.#listRuns(status.sha));
    const run = runs?.find((r) => url.startsWith(`${r.html_url}/`));
    if (!run) return null;
    const jobs = await this.#cached(this.#jobs, run.id, () => this.#listJobs(run.id));
    return jobs.find((j) => j.html_url === url)?.id ?? null;
  }

  /** `null` when Gitea has no Actions API (older than 1.24, or Forgejo): it answers 404. */
  async #listRuns(sha: string): Promise<Run[] | null> {
    const answer = await this.get("/actions/runs", { head_sha: sha, limit: "50" });
    if (answer.status === 404) {
      await answer.body?.cancel();
      return null;
    }
    if (!answer.ok) throw statusError(answer, "GET actions runs");
    const body = parseForgeResponse("gitea", GiteaActionRunsSchema, await answer.json(), "GET actions/runs");
    return body.workflow_runs ?? [];
  }

  async #listJobs(run: number): Promise<Job[]> {
    const answer = await this.get(`/actions/runs/${run}/jobs`, { limit: "50" });
    if (!answer.ok) throw statusError(answer, "GET actions run jobs");
    const body = parseForgeResponse("gitea", GiteaActionJobsSchema, await answer.json(), "GET actions jobs");
    return body.jobs ?? [];
  }

  /** One request per key for this adapter's life (a failed one is asked again next time). */
  #cached<K, V>(cache: Map<K, Promise<V>>, key: K, load: () => Promise<V>): Promise<V> {
    let value = cache.get(key);
    if (!value) {
      value = load();
      value.catch(() => cache.delete(key));
      cache.set(key, value);
    }
    return value;
  }
}

function statusError(response: Response, request: string): ForgeError {
  return new ForgeError(
    "gitea",
    codeOfStatus(response.status),
    `Gitea ${request} answered ${response.status}: ${response.statusText}`,
    response.status,
  );
}
