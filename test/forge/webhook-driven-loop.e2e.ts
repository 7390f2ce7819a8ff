/**
 * Events in (issue 21, "Events in and out"): the GitHub double sends its signed webhooks
 * (X-Hub-Signature-256, payloads validated against @octokit/webhooks-schemas) to the real
 * gateway, running as its own process; the gateway stores each delivery once by its id and the
 * coordinator applies it. Everything else is real too: coordinator, worker, bwrap, git,
 * Postgres, Redis.
 *
 * 1. Webhooks alone drive the loop: with `poll_seconds: 0` nothing is ever polled, so a task
 *    that goes from open to green to approved to merged got there by its deliveries. A
 *    redelivered webhook is stored and applied once; a delivery with a bad signature is refused
 *    with a 401 saying which header and which setting, and nothing is stored.
 * 2. A lost webhook is caught up by polling: the double drops the `check_run completed`
 *    delivery, and the conditional polls (If-None-Match; GitHub answers 304 while nothing
 *    changed) see the checks go green and the task merges.
 */

import { GitHubDouble, type WebhookDelivery } from "@overseer/test-support";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClusterFixture, scriptedTask } from "../support/cluster-fixture.ts";
import { type GatewayProcess, startGatewayProcess } from "../support/gateway-process.ts";
import { pr } from "./pull-request-state.ts";

const SECRET = "e2e-forge-webhook-secret";
const BOT = { login: "overseer-bot", token: "ghp_overseer_hooks" };
const HUMAN = { login: "alice", token: "ghp_alice_hooks" };

let forge: GitHubDouble;
let gateway: GatewayProcess;
const cluster = new ClusterFixture({ sandbox: "bwrap" });

beforeAll(async () => {
  forge = await GitHubDouble.start();
  forge.addUser(BOT);
  forge.addUser(HUMAN);
  await cluster.setup();
  gateway = await startGatewayProcess(
    cluster.env({ LOG_LEVEL: "info", OVERSEER_FORGE_WEBHOOK_SECRET: SECRET }),
  );
  // GitHub writes unpaced (OVERSEER_GITHUB_WRITE_INTERVAL_MS=0): the double sets no limit.
  await cluster.startCoordinator("coord-hooks", { forgeRetryBaseMs: 20, githubWriteIntervalMs: 0 });
  await cluster.startWorker(2);
}, 120_000);

afterAll(async () => {
  await gateway?.service.kill();
  await cluster.teardown();
  await forge?.close();
});

async function repository(name: string): Promise<void> {
  await forge.createRepository(name, { "README.md": "# app\n", "src/app.ts": "export const v = 0;\n" });
  await forge.protectBranch(name, ["main"], ["ci"]);
}

function prConfig(repo: string, pollSeconds: number, requiredApprovals: number) {
  return ClusterFixture.fakeRunnerConfig({
    attempts: 3,
    landing: {
      mode: "pull_request",
      pull_request: {
        poll_seconds: pollSeconds,
        required_checks: ["ci"],
        merge: "auto",
        required_approvals: requiredApprovals,
      },
    },
    forge: { kind: "github", url: forge.url, repository: repo, token: BOT.token },
  });
}

const task = (id: string) =>
  scriptedTask(
    id,
    ['execute: write src/app.ts "export const v = 1;\\n"; submit "Bump v"', 'review: approve "Right"'].join(
      "\n",
    ),
    { title: "Bump v" },
  );

const hookUrl = (project: string) => `${gateway.url}/api/v1/forge/${project}/webhooks/github`;

/** The stored deliveries of a project: id, event, action, whether applied. */
function storedDeliveries(project: string) {
  return cluster.scratch.db
    .selectFrom("forge_webhook_deliveries")
    .select(["delivery_id", "event", "action", "applied_at"])
    .where("project_id", "=", project)
    .orderBy("received_at")
    .execute();
}

function post(project: string, headers: Record<string, string>, body: string) {
  return fetch(hookUrl(project), { method: "POST", headers, body });
}

const payloadOf = (d: WebhookDelivery) =>
  JSON.parse(d.body) as { action?: string; repository?: { full_name?: string } };

describe("forge webhooks through the gateway (GitHub double → gateway process → coordinator)", () => {
  it("webhooks alone drive open → green → approved → merged; a redelivery applies once; a bad signature is a 401", async () => {
    const repo = "acme/hooks";
    const project = "hooks-only";
    await repository(repo);
    await cluster.addProject({
      id: project,
      tasks: [task("W-1")],
      remote: () => forge.cloneUrl(repo),
      runnerConfig: prConfig(repo, 0, 1),
    });
    forge.addWebhook(hookUrl(project), SECRET);

    const opened = await cluster.waitForProject(
      project,
      (s) => pr(s, "W-1")?.status === "open" && s.tasks.get("W-1")?.status === "pr_open",
      180_000,
    );
    const head = pr(opened, "W-1")?.headSha ?? "";
    const number = pr(opened, "W-1")?.number ?? 0;

    // CI goes green: only the check_run webhook can tell the coordinator (no polling).
    forge.setCheckRun(repo, head, { name: "ci", conclusion: "success" });
    await cluster.waitForProject(project, (s) => pr(s, "W-1")?.checks === "success", 120_000);
    // A person approves: the pull_request_review webhook; the coordinator merges (merge: auto).
    await forge.review(repo, number, { login: HUMAN.login, state: "APPROVED" });
    const done = await cluster.waitForProject(project, (s) => s.tasks.get("W-1")?.status === "done", 120_000);
    const main = await forge.git.resolve(repo, "refs/heads/main");
    expect(pr(done, "W-1")).toMatchObject({ status: "merged", mergeCommitSha: main, mergedBy: BOT.login });
    expect(forge.pulls(repo).filter((p) => p.head === "overseer/pr/W-1")).toHaveLength(1);
    await forge.flushWebhooks();

    // Every delivery reached the gateway (202) and was stored once and applied.
    const sent = forge.deliveries.filter((d) => d.url === hookUrl(project));
    expect(sent.length).toBeGreaterThan(0);
    expect(sent.map((d) => d.status).every((s) => s === 202)).toBe(true);
    const stored = await storedDeliveries(project);
    expect(stored.map((d) => d.delivery_id).sort()).toEqual(
      sent.map((d) => d.headers["x-github-delivery"]).sort(),
    );
    const events = stored.map((d) => `${d.event}.${d.action}`);
    expect(events).toEqual(
      expect.arrayContaining(["pull_request.opened", "check_run.completed", "pull_request_review.submitted"]),
    );
    await waitUntil(async () => (await storedDeliveries(project)).every((d) => d.applied_at !== null));

    // The forge redelivers the check_run delivery: stored before, so nothing is stored or applied again.
    const green = sent.find((d) => d.event === "check_run" && payloadOf(d).action === "completed");
    if (!green) throw new Error("no check_run delivery");
    const again = await post(project, green.headers, green.body);
    expect(again.status).toBe(202);
    expect(await again.json()).toMatchObject({
      delivery_id: green.headers["x-github-delivery"],
      stored: false,
    });
    expect(await storedDeliveries(project)).toHaveLength(stored.length);

    // A delivery signed with another secret is refused, saying which header and which setting.
    const forged: Record<string, string> = {
      ...green.headers,
      "x-github-delivery": "11111111-2222-4333-8444-555555555555",
    };
    forged["x-hub-signature-256"] = `sha256=${"0".repeat(64)}`;
    const refused = await post(project, forged, green.body);
    expect(refused.status).toBe(401);
    const error = ((await refused.json()) as { error: { code: string; message: string } }).error;
    expect(error.code).toBe("bad_signature");
    expect(error.message).toContain("x-hub-signature-256");
    expect(error.message).toContain("OVERSEER_FORGE_WEBHOOK_SECRET");
    const unsigned: Record<string, string> = { ...forged };
    delete unsigned["x-hub-signature-256"];
    expect((await post(project, unsigned, green.body)).status).toBe(401);
    expect(await storedDeliveries(project)).toHaveLength(stored.length);
    expect(forge.takeViolations()).toEqual([]);
    await printCalls("webhooks-only", project, "W-1", stored.length);
  }, 600_000);

  it("a lost check_run webhook is caught up by conditional polling (304 while nothing changed)", async () => {
    const repo = "acme/lossy";
    const project = "hooks-lossy";
    await repository(repo);
    await cluster.addProject({
      id: project,
      tasks: [task("L-1")],
      remote: () => forge.cloneUrl(repo),
      runnerConfig: prConfig(repo, 1, 0),
    });
    forge.addWebhook(hookUrl(project), SECRET);

    const opened = await cluster.waitForProject(
      project,
      (s) => pr(s, "L-1")?.status === "open" && s.tasks.get("L-1")?.status === "pr_open",
      180_000,
    );
    const head = pr(opened, "L-1")?.headSha ?? "";
    const number = pr(opened, "L-1")?.number ?? 0;
    const pullPath = `/api/v3/repos/${repo}/pulls/${number}`;
    // Quiet polls: nothing changed on the pull request, so GitHub answers 304.
    await waitUntil(() => forge.requests.some((r) => r.path === pullPath && r.status === 304));

    forge.loseWebhooks({ event: "check_run", action: "completed" });
    forge.setCheckRun(repo, head, { name: "ci", conclusion: "success" });
    const done = await cluster.waitForProject(project, (s) => s.tasks.get("L-1")?.status === "done", 120_000);
    expect(pr(done, "L-1")).toMatchObject({ status: "merged", mergedBy: BOT.login });
    expect(forge.pulls(repo).filter((p) => p.head === "overseer/pr/L-1")).toHaveLength(1);
    await forge.flushWebhooks();

    // The green check never reached the gateway: only a poll can have seen it.
    const lost = forge.deliveries.filter((d) => d.url === hookUrl(project) && d.lost);
    expect(lost.map((d) => [d.event, payloadOf(d).action])).toEqual([["check_run", "completed"]]);
    const stored = await storedDeliveries(project);
    expect(stored.some((d) => d.event === "check_run" && d.action === "completed")).toBe(false);
    // Conditional polls: the checks were read with If-None-Match and answered 304 before they changed.
    const checkReads = forge.requests.filter((r) =>
      r.path.startsWith(`/api/v3/repos/${repo}/commits/${head}/`),
    );
    expect(checkReads.some((r) => r.status === 304)).toBe(true);
    expect(checkReads.some((r) => r.status === 200)).toBe(true);
    // …and counted apart from the calls that cost quota (`overseer_forge_api_not_modified_total`).
    const row = await cluster.scratch.db
      .selectFrom("pull_requests")
      .select(["api_calls", "api_not_modified"])
      .where("project_id", "=", project)
      .where("task_id", "=", "L-1")
      .executeTakeFirstOrThrow();
    expect(row.api_not_modified).toBeGreaterThan(0);
    expect(row.api_not_modified).toBeLessThan(row.api_calls);
    expect(forge.takeViolations()).toEqual([]);
    await printCalls("lost-webhook-polled-1s", project, "L-1", stored.length);
  }, 600_000);
});

/** Figures for the closing note: the task's forge API calls (and 304s among them), the deliveries stored. */
async function printCalls(
  figure: string,
  project: string,
  taskId: string,
  deliveries: number,
): Promise<void> {
  const row = await cluster.scratch.db
    .selectFrom("pull_requests")
    .select(["api_calls", "api_not_modified"])
    .where("project_id", "=", project)
    .where("task_id", "=", taskId)
    .executeTakeFirstOrThrow();
  console.log(
    JSON.stringify({
      figure,
      forgeApiCallsForTask: row.api_calls,
      notModified: row.api_not_modified,
      deliveriesStored: deliveries,
    }),
  );
}

async function waitUntil(check: () => boolean | Promise<boolean>, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
