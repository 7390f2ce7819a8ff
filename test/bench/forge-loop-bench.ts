/**
 * The forge loop (README "Land through pull requests") on the GitHub double: forge API calls per
 * task and the time from green to merged under `merge: auto`, through a real coordinator (its
 * forge runner), sandboxed workers, Postgres and Redis.
 *
 * Two ways the coordinator hears of the forge, each on a double of its own:
 * - `webhook`: the double delivers signed webhooks to a real gateway process
 *   (`OVERSEER_FORGE_WEBHOOK_SECRET`), polling at its default (120 s), so the merge follows the
 *   deliveries alone;
 * - `poll`: no webhook reaches Overseer; ETag polling every `pollSeconds` catches every change.
 *
 * Tasks form a chain (`prerequisites: merged`), so each is measured alone: once its pull request
 * is open and the runner has gone quiet (its first read done), a person makes it green (check
 * run `ci` success) and approves it at t0;
 * green → merged is the `pr.merged` event's time minus t0. API calls per task are what Overseer
 * counts for it (`pull_requests.api_calls`, the metric's source) beside what the double answered.
 */
import { randomBytes } from "node:crypto";
import type { ProjectState } from "@overseer/domain";
import { GitHubDouble } from "@overseer/test-support";
import { ClusterFixture } from "../support/cluster-fixture.ts";
import { startGatewayProcess } from "../support/gateway-process.ts";
import type { ServiceProcess } from "../support/service-process.ts";
import { benchCluster } from "./bench-cluster.ts";
import { type Percentiles, percentiles } from "./stats.ts";

const REPO = "acme/app";
const BOT = { login: "overseer-bot", token: "overseer-bench-token" };
const HUMAN = { login: "alice", token: "alice-bench-token" };

export type ForgeBenchMode = "webhook" | "poll";

export interface ForgeModeResult {
  mode: ForgeBenchMode;
  tasks: number;
  pollSeconds: number;
  /** Reviewer's approve → the pull request opened on the forge. */
  approvedToOpenedMs: Percentiles;
  /** Check green and approved by a person → merged by Overseer (`merge: auto`). */
  greenToMergedMs: Percentiles;
  /** Overseer's count per task (pull_requests.api_calls): open, sync, merge, polls. */
  apiCallsPerTask: Percentiles;
  /** What the double answered over the whole run, per task, and how many of those were 304s. */
  forgeRequestsPerTask: number;
  notModifiedShare: number;
  /** Requests per kind (method and path with numbers and shas folded), over the whole run. */
  requestsByRoute: Record<string, number>;
  /** Where the last task's green → merged went: each forge request, ms after green. */
  lastGreenTimeline: string[];
}

export interface ForgeBenchResult {
  modes: ForgeModeResult[];
}

function chain(tasks: number): Record<string, unknown>[] {
  return Array.from({ length: tasks }, (_, i) => ({
    id: `T-${i + 1}`,
    title: `Add t${i + 1}`,
    scope: ["src/**"],
    prerequisites: i === 0 ? [] : [`T-${i}`],
    body: `\`\`\`overseer-fake\nexecute: write src/t${i + 1}.ts "export const t${i + 1} = ${i + 1};\\n"; submit "Add t${i + 1}"\nreview: approve "Fine"\n\`\`\`\n`,
  }));
}

function routeOf(method: string, path: string): string {
  const folded = path
    .split("?")[0]
    ?.replace(/\/[0-9a-f]{40}\b/g, "/{sha}")
    .replace(/\/\d+\b/g, "/{n}")
    .replace(/\/overseer\/pr\/T-\d+/g, "/{branch}")
    .replace(/\/repos\/[^/]+\/[^/]+/, "/repos/{o}/{r}");
  return `${method} ${folded}`;
}

/** Waits until the double has answered no request for `quietMs`. */
async function forgeQuiet(forge: GitHubDouble, quietMs: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const last = forge.requests.at(-1)?.at ?? 0;
    const idle = Date.now() - last;
    if (idle >= quietMs) return;
    if (Date.now() > deadline) throw new Error(`the forge double never went quiet for ${quietMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, quietMs - idle));
  }
}

function timeline(
  requests: readonly { method: string; path: string; status: number; at: number }[],
  from: number,
  to: number,
): string[] {
  return requests
    .filter((r) => r.at >= from && r.at <= to + 50)
    .map((r) => `+${r.at - from} ms ${routeOf(r.method, r.path)} ${r.status}`);
}

async function benchMode(mode: ForgeBenchMode, tasks: number, pollSeconds: number): Promise<ForgeModeResult> {
  const forge = await GitHubDouble.start();
  const cluster = await benchCluster();
  const processes: ServiceProcess[] = [];
  try {
    forge.addUser(BOT);
    forge.addUser(HUMAN);
    await forge.createRepository(REPO, { "README.md": "# app\n" });
    await forge.protectBranch(REPO, ["main"], ["ci"]);
    await cluster.startCoordinator(`coord-forge-${mode}`);
    await cluster.startWorker(2);
    const project = `forge-bench-${mode}`;
    if (mode === "webhook") {
      const secret = randomBytes(16).toString("hex");
      const gateway = await startGatewayProcess(
        cluster.env({ LOG_LEVEL: "info", OVERSEER_FORGE_WEBHOOK_SECRET: secret }),
        120_000,
      );
      processes.push(gateway.service);
      forge.addWebhook(`${gateway.url}/api/v1/forge/${project}/webhooks/github`, secret);
    }
    await cluster.addProject({
      id: project,
      tasks: chain(tasks),
      remote: () => forge.cloneUrl(REPO),
      runnerConfig: ClusterFixture.fakeRunnerConfig({
        landing: {
          mode: "pull_request",
          pull_request: {
            merge: "auto",
            required_approvals: 1,
            required_checks: ["ci"],
            poll_seconds: pollSeconds,
          },
        },
        forge: { kind: "github", url: forge.url, repository: REPO, token: BOT.token },
      }),
    });
    const greenAt = new Map<string, number>();
    for (let i = 1; i <= tasks; i++) {
      const id = `T-${i}`;
      const open = (s: ProjectState) => {
        const pr = s.tasks.get(id)?.pullRequest;
        return s.tasks.get(id)?.status === "pr_open" && pr?.status === "open" && pr.number !== null;
      };
      const state = await cluster.waitForProject(project, open, 180_000);
      const pr = state.tasks.get(id)?.pullRequest;
      if (!pr?.number) throw new Error(`${id}: no pull request`);
      // Green only once the runner has read the new pull request and gone quiet, so the
      // measure is what brings the news: a webhook, or the next poll.
      await forgeQuiet(forge, 1_000, 60_000);
      greenAt.set(id, Date.now());
      forge.setCheckRun(REPO, pr.headSha, { name: "ci", conclusion: "success" });
      await forge.review(REPO, pr.number, { login: HUMAN.login, state: "APPROVED" });
      await cluster.waitForProject(project, (s) => s.tasks.get(id)?.status === "done", 300_000);
    }
    await forge.flushWebhooks();
    const db = cluster.scratch.db;
    const events = await db
      .selectFrom("events")
      .select(["type", "task_id", "created_at"])
      .where("project_id", "=", project)
      .where("type", "in", ["task.pr_requested", "pr.opened", "pr.merged"])
      .execute();
    const at = (type: string, task: string) =>
      events.find((e) => e.type === type && e.task_id === task)?.created_at.getTime() ?? Number.NaN;
    const ids = [...greenAt.keys()];
    const calls = await db
      .selectFrom("pull_requests")
      .select(["task_id", "api_calls"])
      .where("project_id", "=", project)
      .execute();
    const requests = forge.requests;
    const byRoute: Record<string, number> = {};
    for (const r of requests) {
      const key = routeOf(r.method, r.path);
      byRoute[key] = (byRoute[key] ?? 0) + 1;
    }
    const violations = forge.takeViolations();
    if (violations.length > 0) throw new Error(`forge contract violations: ${violations.join("; ")}`);
    return {
      mode,
      tasks,
      pollSeconds,
      approvedToOpenedMs: percentiles(ids.map((id) => at("pr.opened", id) - at("task.pr_requested", id))),
      greenToMergedMs: percentiles(ids.map((id) => at("pr.merged", id) - (greenAt.get(id) ?? Number.NaN))),
      apiCallsPerTask: percentiles(calls.map((c) => c.api_calls)),
      lastGreenTimeline: timeline(requests, greenAt.get(`T-${tasks}`) ?? 0, at("pr.merged", `T-${tasks}`)),
      forgeRequestsPerTask: Math.round((requests.length / tasks) * 10) / 10,
      notModifiedShare:
        requests.length === 0
          ? 0
          : Math.round((requests.filter((r) => r.status === 304).length / requests.length) * 1000) / 1000,
      requestsByRoute: Object.fromEntries(Object.entries(byRoute).sort((a, b) => b[1] - a[1])),
    };
  } finally {
    await Promise.all(processes.map((p) => p.kill("SIGTERM")));
    await cluster.teardown();
    await forge.close();
  }
}

export async function benchForgeLoop(tasks: number, pollSeconds = 5): Promise<ForgeBenchResult> {
  return {
    modes: [await benchMode("webhook", tasks, 120), await benchMode("poll", tasks, pollSeconds)],
  };
}
