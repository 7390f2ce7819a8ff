import type { z } from "@hono/zod-openapi";
import { mergePolicyText, type ProjectStatusSchema } from "@overseer/api-contract";
import type { ProjectStatusData } from "@overseer/db";
import {
  formatUsd,
  missionNotice,
  missionSummaryLines,
  summarizeMission,
  TASK_STATUSES,
} from "@overseer/domain";
import { DEFAULT_POOL } from "@overseer/queue";
import type { StatusSnapshot } from "../live/project-status-cache.ts";
import { poolWaitingText, projectPool } from "./pool-waiting.ts";
import {
  activeRunView,
  decisionCard,
  landingView,
  missionView,
  pullRequestView,
  spendView,
} from "./resource-views.ts";

/**
 * The Argus status answer. `waiting_for_you` carries the Argus stop signal (docs/argus-compatibility.md)
 * ("waiting for you: N unanswered question(s)") whenever a card is pending, and `text` is the
 * same human summary `overseer status` prints.
 */
export function waitingForYou(pending: number): string | null {
  return pending > 0 ? `waiting for you: ${pending} unanswered question(s)` : null;
}

/** Every task status with its count (zeros included) plus `total`. */
export function fullCounts(counts: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  let total = 0;
  for (const status of TASK_STATUSES) {
    out[status] = counts[status] ?? 0;
    total += out[status];
  }
  out.total = total;
  return out;
}

export function projectStatusView(
  data: ProjectStatusData,
  now = new Date(),
  /** The pools live workers serve now (pool-waiting.ts); null: unknown, no waiting state is claimed. */
  served: ReadonlySet<string> | null = null,
): z.infer<typeof ProjectStatusSchema> {
  const { project } = data;
  const pending = data.pendingDecisions.map(decisionCard);
  const running = data.activeRuns.map(activeRunView);
  const counts = fullCounts(data.counts);
  const mission = data.mission ? summarizeMission(data.mission) : null;
  const view = {
    project_id: project.id,
    name: project.name,
    ...landingView(project),
    status: project.status,
    status_reason: project.status_reason,
    objective: project.objective,
    stage: project.stage,
    continuous: project.continuous,
    sessions: { used: project.sessions_used, limit: project.sessions_limit },
    usage: {
      tokens_in: Number(project.tokens_in),
      tokens_out: Number(project.tokens_out),
      tokens_cached: Number(project.tokens_cached),
      ...spendView(project),
      budget_usd: project.budget_usd,
    },
    counts,
    running,
    pending_questions: pending,
    pending_count: pending.length,
    waiting_for_you: waitingForYou(pending.length),
    pool: projectPool(project),
    pool_waiting: poolWaitingText(project, running, served),
    open_pull_requests: data.openPullRequests.flatMap(({ taskId, title, pullRequest }) => {
      const view = pullRequestView(pullRequest);
      return view ? [{ task_id: taskId, title, ...view }] : [];
    }),
    mission: data.mission && mission ? missionView(data.mission.mission, mission) : null,
    mission_notice: mission ? missionNotice(mission) : null,
    text: "",
    generated_at: now.toISOString(),
  };
  view.text = statusText(view, mission ? missionSummaryLines(mission) : []);
  return view;
}

function statusText(
  s: Omit<z.infer<typeof ProjectStatusSchema>, "text"> & { text: string },
  missionLines: readonly string[],
): string {
  const lines: string[] = [];
  const stage = s.stage ? `, stage ${s.stage}` : "";
  const reason = s.status_reason ? ` (${s.status_reason})` : "";
  lines.push(`project ${s.project_id}: ${s.status}${reason}${stage}`);
  if (s.objective.trim()) lines.push(`objective: ${oneLine(s.objective, 200)}`);
  lines.push(...landingLines(s));
  const counts = TASK_STATUSES.filter((st) => (s.counts[st] ?? 0) > 0).map((st) => `${s.counts[st]} ${st}`);
  lines.push(`tasks: ${counts.length > 0 ? counts.join(", ") : "none"} (${s.counts.total ?? 0} total)`);
  const limit = s.sessions.limit === null ? "unbounded" : String(s.sessions.limit);
  lines.push(`sessions: ${s.sessions.used} of ${limit}`);
  lines.push(usageLine(s.usage));
  lines.push(...missionLines);
  if (s.running.length === 0) lines.push("running: none");
  for (const r of s.running)
    lines.push(
      `running: ${r.action} #${r.number} of ${r.task_id} (${r.agent_id}) ${r.status}${r.worker_id ? ` on ${r.worker_id}` : ""}`,
    );
  if (s.pool !== DEFAULT_POOL) lines.push(`pool: ${s.pool}`);
  if (s.pool_waiting)
    lines.push(
      `${s.pool_waiting} (queued runs start once a worker with OVERSEER_WORKER_POOLS naming it is live)`,
    );
  if (s.mission_notice) lines.push(s.mission_notice);
  if (s.waiting_for_you) {
    lines.push(s.waiting_for_you);
    for (const q of s.pending_questions) {
      const options = q.options.map((o) => o.id).join(", ");
      lines.push(
        `  ${q.id} (${q.item_id}): ${oneLine(q.question, 200)}${options ? ` [options: ${options}]` : ""}`,
      );
    }
  } else {
    lines.push("no unanswered questions");
  }
  return lines.join("\n");
}

type StatusView = Omit<z.infer<typeof ProjectStatusSchema>, "text">;

/**
 * Where approved work lands; in pull_request mode, the forge, the merge policy and one line per
 * open pull request: "pull request: S01-3 PR #42 open https://… → main (checks failure, changes
 * requested, 0 approvals)".
 */
function landingLines(s: StatusView): string[] {
  const policy = s.pull_requests;
  if (s.landing_mode !== "pull_request" || policy === null)
    return [`landing: ${s.landing_hint ?? `approved work lands on ${s.landing_branch}`}`];
  const lines = [
    `landing: through pull requests into ${s.landing_branch} on ${policy.forge} ${policy.forge_url} (${policy.repository}); ${mergePolicyText(policy)}`,
  ];
  if (s.open_pull_requests.length === 0) lines.push("pull requests: none open");
  for (const pr of s.open_pull_requests) {
    const name = pr.number === null ? `PR ${pr.branch} (opening)` : `PR #${pr.number} ${pr.status}`;
    const review = pr.review === "changes_requested" ? "changes requested" : `review ${pr.review}`;
    const approvals = `${pr.approvals} approval${pr.approvals === 1 ? "" : "s"}`;
    lines.push(
      `pull request: ${pr.task_id} ${name}${pr.url ? ` ${pr.url}` : ""} → ${pr.base} (checks ${pr.checks}, ${review}, ${approvals})`,
    );
  }
  return lines;
}

/**
 * "usage: 31,200 tokens in (20,000 cached), 1,200 out, $0.2500 of budget $0.50"; unpriced usage
 * says so ("unpriced (32,400 tokens) of budget $1.00: budget_usd cannot see unpriced usage").
 */
function usageLine(u: z.infer<typeof ProjectStatusSchema>["usage"]): string {
  const n = (value: number) => value.toLocaleString("en-US");
  const budget = u.budget_usd === null ? "no budget" : `of budget ${formatUsd(u.budget_usd)}`;
  const blind =
    u.budget_usd !== null && u.tokens_unpriced > 0
      ? " (budget_usd cannot see unpriced usage: set prices for the model, or budget_tokens)"
      : "";
  return `usage: ${n(u.tokens_in)} tokens in (${n(u.tokens_cached)} cached), ${n(u.tokens_out)} out, ${u.cost} ${budget}${blind}`;
}

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

const rendered = new WeakMap<StatusSnapshot, Map<string, string>>();

/**
 * The status answer as JSON text, rendered once per snapshot and waiting state (`generated_at` =
 * when it was read; the waiting state comes from the workers' heartbeats, `served`).
 */
export function statusJson(snapshot: StatusSnapshot, served: ReadonlySet<string> | null = null): string {
  const key = poolWaitingText(snapshot.data.project, snapshot.data.activeRuns, served) ?? "";
  let byWaiting = rendered.get(snapshot);
  if (!byWaiting) {
    byWaiting = new Map();
    rendered.set(snapshot, byWaiting);
  }
  let text = byWaiting.get(key);
  if (text === undefined) {
    text = JSON.stringify(projectStatusView(snapshot.data, new Date(snapshot.at), served));
    byWaiting.set(key, text);
  }
  return text;
}
