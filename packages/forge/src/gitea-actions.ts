/**
 * What Gitea offers of a failing check: the log of the Gitea Actions job behind a commit status,
 * else the status's own words. Gitea ≥ 1.24 serves job logs to a token
 * (`GET /repos/{owner}/{repo}/actions/jobs/{job_id}/logs`); a status Actions sets links to the
 * job's page (`…/actions/runs/{run index}/jobs/{job index}`), which is the job's `html_url` in
 * `GET …/actions/runs/{run id}/jobs`, found from the runs of the head sha. An older Gitea, a
 * Forgejo without that API, or a status set by an outside CI has no log to read: the executor
 * then gets the status's description and its link.
 */
import { codeOfStatus, ForgeError } from "./forge-errors.ts";
import { parseForgeResponse } from "./forge-response.ts";
import { GiteaActionJobsSchema, GiteaActionRunsSchema } from "./gitea-schemas.ts";
import { tail } from "./log-tail.ts";

/** A failing commit status, as `listChecks` read it. */
export interface GiteaFailingStatus {
  readonly context: string;
  readonly targetUrl: string | null;
  readonly description: string;
}

const JOB_PAGE = /\/actions\/runs\/\d+\/jobs\/\d+$/;

export class GiteaActions {
  /** Job ids found per status link (`null`: no job behind it); a link names one job for good. */
  readonly #jobs = new Map<string, number | null>();
  /** What each failing status said, by link, for the executor when no log can be read. */
  readonly #words = new Map<string, GiteaFailingStatus>();
  /** `false` once Gitea answered 404 to its Actions API (older than 1.24, or Forgejo). */
  #available = true;

  constructor(private readonly get: (path: string, query?: Record<string, string>) => Promise<Response>) {}

  /** The job id behind each failing status of `sha` (at most two reads per new link). */
  async jobIds(sha: string, failing: readonly GiteaFailingStatus[]): Promise<Map<string, number | null>> {
    const found = new Map<string, number | null>();
    const unknown = failing.filter((s) => s.targetUrl !== null && !this.#jobs.has(s.targetUrl));
    for (const status of failing) if (status.targetUrl) this.#words.set(status.targetUrl, status);
    const actions = unknown.filter((s) => JOB_PAGE.test(s.targetUrl ?? ""));
    for (const s of unknown) if (!actions.includes(s)) this.#jobs.set(s.targetUrl ?? "", null);
    if (actions.length > 0 && this.#available) await this.#resolve(sha, actions);
    for (const status of failing)
      found.set(status.targetUrl ?? "", this.#jobs.get(status.targetUrl ?? "") ?? null);
    return found;
  }

  /** The job's log tail, else the status's description and link; `null` when Gitea said nothing. */
  async logTail(url: string | null, jobId: number | null, maxBytes: number): Promise<string | null> {
    if (jobId !== null && this.#available) {
      const response = await this.get(`/actions/jobs/${jobId}/logs`);
      if (response.ok) return tail(await response.text(), maxBytes);
      await response.body?.cancel();
      if (response.status !== 404) throw statusError(response, "GET actions job logs");
    }
    const words = url ? this.#words.get(url) : undefined;
    if (!words) return null;
    const said = words.description.trim() || "no description";
    return `Gitea keeps no job log Overseer can read for "${words.context}" (${jobId === null ? "not a Gitea Actions job" : "log gone"}). The status says: ${said}. Its page: ${url}`;
  }

  async #resolve(sha: string, statuses: readonly GiteaFailingStatus[]): Promise<void> {
    const runsAnswer = await this.get("/actions/runs", { head_sha: sha, limit: "50" });
    if (runsAnswer.status === 404) {
      await runsAnswer.body?.cancel();
      this.#available = false;
      return;
    }
    if (!runsAnswer.ok) throw statusError(runsAnswer, "GET actions runs");
    const runs =
      parseForgeResponse("gitea", GiteaActionRunsSchema, await runsAnswer.json(), "GET actions/runs")
        .workflow_runs ?? [];
    for (const run of runs) {
      const wanted = statuses.filter((s) => s.targetUrl?.startsWith(`${run.html_url}/`));
      if (wanted.length === 0) continue;
      const jobsAnswer = await this.get(`/actions/runs/${run.id}/jobs`, { limit: "50" });
      if (!jobsAnswer.ok) throw statusError(jobsAnswer, "GET actions run jobs");
      const jobs =
        parseForgeResponse("gitea", GiteaActionJobsSchema, await jobsAnswer.json(), "GET actions jobs")
          .jobs ?? [];
      for (const status of wanted) {
        const job = jobs.find((j) => j.html_url === status.targetUrl);
        this.#jobs.set(status.targetUrl ?? "", job?.id ?? null);
      }
    }
    for (const status of statuses)
      if (!this.#jobs.has(status.targetUrl ?? "")) this.#jobs.set(status.targetUrl ?? "", null);
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
