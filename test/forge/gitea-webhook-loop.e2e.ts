/**
 * Events in on Gitea / Forgejo: the Gitea double sends its webhooks, signed as Gitea signs them
 * (X-Gitea-Signature, HMAC-SHA256 of the body; X-Gitea-Event as Gitea names each event), to the
 * real gateway running as its own process; the gateway stores each delivery once by
 * X-Gitea-Delivery and the coordinator applies it. With `poll_seconds: 0` nothing is polled, so
 * every step after the pull request opens got there by a delivery: the Gitea Actions status
 * (`status`), a person's requested changes with an inline comment (`pull_request_rejected`),
 * the fix's green status, their approval (`pull_request_approved`), and the merge.
 */

import { GiteaDouble } from "@overseer/test-support";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClusterFixture, scriptedTask } from "../support/cluster-fixture.ts";
import { type GatewayProcess, startGatewayProcess } from "../support/gateway-process.ts";
import { pr } from "./pull-request-state.ts";

const SECRET = "e2e-gitea-webhook-secret";
const REPO = "acme/gitea-hooks";
const BOT = { login: "overseer-bot", token: "gitea-overseer-hooks" };
const HUMAN = { login: "alice", token: "gitea-alice-hooks" };
const CI = "CI / test (pull_request)";

let forge: GiteaDouble;
let gateway: GatewayProcess;
const cluster = new ClusterFixture({ sandbox: "bwrap" });

beforeAll(async () => {
  forge = await GiteaDouble.start();
  forge.addUser(BOT);
  forge.addUser(HUMAN);
  await forge.createRepository(REPO, { "README.md": "# app\n", "src/app.ts": "export const v = 0;\n" });
  await forge.protectBranch(REPO, ["main"], [CI]);
  await cluster.setup();
  gateway = await startGatewayProcess(
    cluster.env({ LOG_LEVEL: "info", OVERSEER_FORGE_WEBHOOK_SECRET: SECRET }),
  );
  await cluster.startCoordinator("coord-gitea-hooks", { forgeRetryBaseMs: 20 });
  await cluster.startWorker(2);
}, 120_000);

afterAll(async () => {
  await gateway?.service.kill();
  await cluster.teardown();
  await forge?.close();
});

const hookUrl = (project: string) => `${gateway.url}/api/v1/forge/${project}/webhooks/gitea`;

function storedDeliveries(project: string) {
  return cluster.scratch.db
    .selectFrom("forge_webhook_deliveries")
    .select(["delivery_id", "event", "action", "applied_at"])
    .where("project_id", "=", project)
    .orderBy("received_at")
    .execute();
}

async function waitUntil(check: () => boolean | Promise<boolean>, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe("Gitea webhooks through the gateway (Gitea double → gateway process → coordinator)", () => {
  it("webhooks alone drive open → green → changes requested → fix → green → approved → merged", async () => {
    const project = "gitea-hooks-only";
    await cluster.addProject({
      id: project,
      tasks: [
        scriptedTask(
          "G-1",
          [
            'execute: write src/app.ts "export const v = 1;\\n"; submit "Bump v"',
            'execute#2: write src/app.ts "export const V = 1;\\n"; submit "Name it V, as asked"',
            'review: approve "Right"',
          ].join("\n"),
          { title: "Bump v" },
        ),
      ],
      remote: () => forge.cloneUrl(REPO),
      runnerConfig: ClusterFixture.fakeRunnerConfig({
        attempts: 3,
        landing: {
          mode: "pull_request",
          pull_request: { poll_seconds: 0, required_checks: [CI], merge: "auto", required_approvals: 1 },
        },
        forge: { kind: "gitea", url: forge.url, repository: REPO, token: BOT.token },
      }),
    });
    forge.addWebhook(hookUrl(project), SECRET);

    const opened = await cluster.waitForProject(
      project,
      (s) => pr(s, "G-1")?.status === "open" && s.tasks.get("G-1")?.status === "pr_open",
      180_000,
    );
    const first = pr(opened, "G-1");
    if (!first?.number) throw new Error("no pull request");
    const number = first.number;

    // Green: only the `status` delivery can tell the coordinator (no polling).
    forge.actionsJob(REPO, first.headSha, { workflow: "CI", job: "test", state: "success", log: "ok\n" });
    await cluster.waitForProject(project, (s) => pr(s, "G-1")?.checks === "success", 120_000);
    // Changes requested inline (`pull_request_rejected`): the task goes back to an executor.
    await forge.review(REPO, number, {
      login: HUMAN.login,
      state: "REQUEST_CHANGES",
      body: "Constants are upper case here.",
      comments: [{ path: "src/app.ts", line: 1, body: "Call it V." }],
    });
    const fixed = await cluster.waitForProject(
      project,
      (s) => pr(s, "G-1")?.status === "open" && pr(s, "G-1")?.headSha !== first.headSha,
      180_000,
    );
    const second = pr(fixed, "G-1");
    if (!second) throw new Error("no pull request");
    const prompts = await cluster.scratch.db
      .selectFrom("runs")
      .select(["prompt"])
      .where("project_id", "=", project)
      .where("action", "=", "execute")
      .orderBy("created_at")
      .execute();
    expect(prompts[1]?.prompt).toContain("Call it V.");
    // The fix is answered on the thread's line, then green and approved on the new head.
    await waitUntil(() => forge.threads(REPO, number)[0]?.comments.at(-1)?.login === BOT.login);
    await waitUntil(() =>
      (forge.pulls(REPO).find((p) => p.number === number)?.body ?? "").includes(second.headSha.slice(0, 12)),
    );
    forge.actionsJob(REPO, second.headSha, { workflow: "CI", job: "test", state: "success", log: "ok\n" });
    await cluster.waitForProject(
      project,
      (s) => pr(s, "G-1")?.checks === "success" && pr(s, "G-1")?.headSha === second.headSha,
      120_000,
    );
    await forge.review(REPO, number, { login: HUMAN.login, state: "APPROVED" });
    const done = await cluster.waitForProject(project, (s) => s.tasks.get("G-1")?.status === "done", 120_000);
    const main = await forge.git.resolve(REPO, "refs/heads/main");
    expect(pr(done, "G-1")).toMatchObject({ status: "merged", mergeCommitSha: main, mergedBy: BOT.login });
    expect(await forge.git.git(REPO, ["show", `${main}:src/app.ts`])).toContain("V = 1");
    await forge.flushWebhooks();

    // Every delivery reached the gateway (202), was stored once by X-Gitea-Delivery, and applied.
    const sent = forge.deliveries.filter((d) => d.url === hookUrl(project));
    expect(sent.map((d) => d.status).every((s) => s === 202)).toBe(true);
    const stored = await storedDeliveries(project);
    expect(stored.map((d) => d.delivery_id).sort()).toEqual(
      sent.map((d) => d.headers["x-gitea-delivery"]).sort(),
    );
    expect(stored.map((d) => `${d.event}.${d.action}`)).toEqual(
      expect.arrayContaining([
        "pull_request.opened",
        "status.null",
        "pull_request_rejected.reviewed",
        "pull_request_approved.reviewed",
        "pull_request.closed",
      ]),
    );
    await waitUntil(async () => (await storedDeliveries(project)).every((d) => d.applied_at !== null));
    expect(forge.takeViolations()).toEqual([]);
    const row = await cluster.scratch.db
      .selectFrom("pull_requests")
      .select(["api_calls"])
      .where("project_id", "=", project)
      .where("task_id", "=", "G-1")
      .executeTakeFirstOrThrow();
    console.log(
      JSON.stringify({
        figure: "pull-request-loop-webhooks",
        forge: "gitea",
        forgeApiCallsForTask: row.api_calls,
        deliveries: stored.length,
        rounds: 2,
      }),
    );
  }, 600_000);
});
