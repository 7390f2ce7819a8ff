/**
 * What a task's pull request says (PR-DESIGN "Loop", ensure): the title from the task, and
 * Overseer's part of the body (under the marker, pull-request-marker.ts in @overseer/forge):
 * the issue the task came from, the executor's summary, the acceptance criteria, the reviewer's
 * verdict and links to the runs.
 */
import { dashboardPageUrl } from "@overseer/api-contract";
import type { Task } from "@overseer/domain";

export interface RunLine {
  readonly id: string;
  readonly action: string;
  readonly agentId: string;
  readonly status: string;
}

export interface PullRequestText {
  readonly title: string;
  readonly body: string;
  /** The marker key: unique per task, so the forge adapter finds this task's pull request again. */
  readonly marker: string;
}

export function pullRequestText(
  projectId: string,
  task: Task,
  facts: {
    /** The approved submit's summary (or message). */
    readonly summary: string | null;
    /** The reviewer's approve feedback. */
    readonly verdict: string | null;
    readonly reviewer: string | null;
    readonly runs: readonly RunLine[];
    /** The dashboard's base URL, when the coordinator knows it (`OVERSEER_DASHBOARD_URL`). */
    readonly dashboardUrl: string | null;
    readonly headSha: string;
    /** The tracker issue the task came from (intake), named so the forge links the two. */
    readonly issueKey?: string | null;
  },
): PullRequestText {
  const link = (hash: string) => (facts.dashboardUrl ? `${facts.dashboardUrl}/${hash}` : null);
  const taskLink = dashboardPageUrl(facts.dashboardUrl, projectId, task.id);
  const lines = [
    `**Overseer task ${taskLink ? `[${task.id}](${taskLink})` : task.id}** of project \`${projectId}\`, ${approvedHeadLabel(facts.headSha)}.`,
    // Named, never "Closes": the issue hears the merge from Overseer, after the task is done
    // (a forge closing it first would read as the issue gone terminal and cancel the task).
    ...(facts.issueKey ? ["", `From issue ${facts.issueKey}; its status is reported there.`] : []),
    "",
    "### Summary",
    facts.summary?.trim() || task.body.trim() || task.title,
  ];
  if (task.acceptance.length > 0) {
    lines.push("", "### Acceptance criteria", ...task.acceptance.map((c) => `- [x] ${c}`));
  }
  lines.push(
    "",
    "### Reviewer's verdict",
    `Approved${facts.reviewer ? ` by \`${facts.reviewer}\`` : ""}${facts.verdict?.trim() ? `: ${facts.verdict.trim()}` : "."}`,
  );
  if (facts.runs.length > 0) {
    lines.push(
      "",
      "### Runs",
      ...facts.runs.map((run) => {
        const url = link(`#/run/${encodeURIComponent(run.id)}`);
        const name = url ? `[${run.id}](${url})` : `\`${run.id}\``;
        return `- ${name}: ${run.action} by \`${run.agentId}\` (${run.status})`;
      }),
    );
  }
  lines.push(
    "",
    "_Review comments and requested changes go back to an Overseer executor; each thread is answered by the next push._",
  );
  return { title: `${task.id}: ${task.title}`, body: lines.join("\n"), marker: `task:${task.id}` };
}

/** How a body names the approved head it describes: a sync that does not find it asks for `ensure`. */
export function approvedHeadLabel(sha: string): string {
  return `approved head \`${sha.slice(0, 12)}\``;
}
