/**
 * GitLab's CI gate, pure parts: jobs and commit statuses as checks, and a job trace cleaned for
 * a prompt. The adapter reads the merge request's head pipeline (`head_pipeline`, which is a
 * merged-results pipeline where the project runs those), its jobs (the latest try of each) and
 * the commit statuses of its sha (external CIs report there); a job that may fail
 * (`allow_failure`) does not fail the gate, as it does not fail GitLab's pipeline.
 */

import type { z } from "zod";
import type { CheckConclusion, CheckState } from "./forge-adapter.ts";
import type { GitLabCommitStatusesSchema, GitLabJobsSchema } from "./gitlab-schemas.ts";
import { tail } from "./log-tail.ts";

type Jobs = z.infer<typeof GitLabJobsSchema>;
type Statuses = z.infer<typeof GitLabCommitStatusesSchema>;

/** The pipeline's jobs, then the external statuses of its sha (a status that is one of its jobs is skipped). */
export function gitlabChecks(pipelineId: number, jobs: Jobs, statuses: Statuses): CheckState[] {
  const jobIds = new Set(jobs.map((j) => j.id));
  const fromJobs = jobs.map(
    (job): CheckState => ({
      name: job.name,
      conclusion: conclusion(job.status, job.allow_failure === true),
      url: job.web_url,
      source: "job",
      jobId: job.id,
    }),
  );
  const external = statuses
    .filter((s) => !jobIds.has(s.id) && (s.pipeline_id == null || s.pipeline_id === pipelineId))
    .filter((s) => !jobs.some((j) => j.name === s.name))
    .map(
      (s): CheckState => ({
        name: s.name,
        conclusion: conclusion(s.status, s.allow_failure === true),
        url: s.target_url || null,
        source: "status",
        jobId: null,
      }),
    );
  return [...fromJobs, ...external];
}

function conclusion(status: string, allowFailure: boolean): CheckConclusion {
  switch (status) {
    case "success":
      return "success";
    case "failed":
      // GitLab shows it as a warning and the pipeline passes.
      return allowFailure ? "neutral" : "failure";
    case "canceled":
    case "canceling":
      return "cancelled";
    case "skipped":
    case "manual":
      return "skipped";
    default:
      return "pending";
  }
}

// ESC [ … final byte: colours and erase-line codes GitLab's runner writes into every trace.
// biome-ignore lint/suspicious/noControlCharactersInRegex: the escape character is what is matched
const ANSI = /\u001b\[[0-9;?]*[ -/]*[@-~]/g;
// Collapsible section markers: `section_start:1560896352:step_script[collapsed=true]\r`.
const SECTION = /section_(?:start|end):\d+:[A-Za-z0-9_.-]+(?:\[[^\]\r\n]*\])?\r/g;

/**
 * The last `maxBytes` of a job trace as a person reads it on GitLab's job page: no colour codes,
 * no section markers, and of a line rewritten with carriage returns (a progress bar) only what
 * it ended as.
 */
export function traceTail(trace: string, maxBytes: number): string {
  const text = trace
    .replace(SECTION, "")
    .replace(ANSI, "")
    .split("\n")
    .map((line) => {
      const parts = line.replace(/\r+$/, "").split("\r");
      return parts.at(-1) ?? "";
    })
    .join("\n");
  return tail(text, maxBytes);
}
