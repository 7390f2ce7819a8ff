/**
 * Events in on GitLab: the GitLab double sends its webhooks as GitLab does (X-Gitlab-Token with
 * the secret, X-Gitlab-Event, X-Gitlab-Event-UUID; payloads shaped like the documented Merge
 * Request Hook, Pipeline Hook and Note Hook) to the real gateway running as its own process; the
 * gateway stores each delivery once by its UUID and the coordinator applies it. With
 * `poll_seconds: 0` nothing is polled, so every step after the merge request opens got there by
 * a delivery: the head pipeline's result (Pipeline Hook), a person's inline discussion (Note
 * Hook), the fix's green pipeline, their approval (Merge Request Hook, action `approval`), and
 * the merge. And a Pipeline Hook lost on its way is caught up by polling.
 */

import { GitLabDouble } from "@overseer/test-support";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClusterFixture, scriptedTask } from "../support/cluster-fixture.ts";
import { type GatewayProcess, startGatewayProcess } from "../support/gateway-process.ts";
import { pr } from "./pull-request-state.ts";

const SECRET = "e2e-gitlab-webhook-secret";
const PROJECT = "acme/gitlab-hooks";
const BOT = { username: "overseer-bot", token: "glpat-overseer-hooks", accessLevel: 40 };
const HUMAN = { username: "alice", token: "glpat-alice-hooks", accessLevel: 40 };

let forge: GitLabDouble;
let gateway: GatewayProcess;
const cluster = new ClusterFixture({ sandbox: "bwrap" });

beforeAll(async () => {
  forge = await GitLabDouble.start();
  forge.addUser(BOT);
  forge.addUser(HUMAN);
  await forge.createProject(
    PROJECT,
    { "README.md": "# app\n", "src/app.ts": "export const v = 0;\n" },
    { pipelineMustSucceed: true },
  );
  await forge.protectBranch(PROJECT, ["main"]);
  await cluster.setup();
  gateway = await startGatewayProcess(
    cluster.env({ LOG_LEVEL: "info", OVERSEER_FORGE_WEBHOOK_SECRET: SECRET }),
  );
  await cluster.startCoordinator("coord-gitlab-hooks", { forgeRetryBaseMs: 20 });
  await cluster.startWorker(2);
}, 120_000);

afterAll(async () => {
  await gateway?.service.kill();
  await cluster.teardown();
  await forge?.close();
});

const hookUrl = (project: string) => `${gateway.url}/api/v1/forge/${project}/webhooks/gitlab`;

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

function pipeline(sha: string, iid: number, status: "success" | "failed"): void {
  forge.setPipeline(
    PROJECT,
    sha,
    [{ name: "test", status, log: status === "failed" ? "FAIL src/app.test.ts\n" : "ok\n" }],
    `refs/merge-requests/${iid}/head`,
    "merge_request_event",
  );
}

describe("GitLab webhooks through the gateway (GitLab double → gateway process → coordinator)", () => {
  it("webhooks alone drive open → green → inline discussion → fix → green → approved → merged", async () => {
    const project = "gitlab-hooks-only";
    await cluster.addProject({
      id: project,
      tasks: [
        scriptedTask(
          "L-1",
          [
            'execute: write src/app.ts "export const v = 1;\\n"; submit "Bump v"',
            'execute#2: write src/app.ts "export const V = 1;\\n"; submit "Name it V, as asked"',
            'review: approve "Right"',
          ].join("\n"),
          { title: "Bump v" },
        ),
      ],
      remote: () => forge.cloneUrl(PROJECT),
      runnerConfig: ClusterFixture.fakeRunnerConfig({
        attempts: 3,
        landing: {
          mode: "pull_request",
          pull_request: { poll_seconds: 0, required_checks: ["test"], merge: "auto", required_approvals: 1 },
        },
        forge: { kind: "gitlab", url: forge.url, repository: PROJECT, token: BOT.token },
      }),
    });
    forge.addWebhook(hookUrl(project), SECRET);

    const opened = await cluster.waitForProject(
      project,
      (s) => pr(s, "L-1")?.status === "open" && s.tasks.get("L-1")?.status === "pr_open",
      180_000,
    );
    const first = pr(opened, "L-1");
    if (!first?.number) throw new Error("no merge request");
    const iid = first.number;
    const describes = (head: string) =>
      waitUntil(() =>
        (forge.mergeRequests(PROJECT).find((m) => m.iid === iid)?.description ?? "").includes(
          head.slice(0, 12),
        ),
      );
    await describes(first.headSha);

    // Green: only the Pipeline Hook can tell the coordinator (no polling).
    pipeline(first.headSha, iid, "success");
    await cluster.waitForProject(project, (s) => pr(s, "L-1")?.checks === "success", 120_000);
    // An inline discussion (Note Hook): the task goes back to an executor.
    forge.comment(PROJECT, iid, {
      username: HUMAN.username,
      path: "src/app.ts",
      line: 1,
      body: "Call it V.",
    });
    const fixed = await cluster.waitForProject(
      project,
      (s) => pr(s, "L-1")?.status === "open" && pr(s, "L-1")?.headSha !== first.headSha,
      180_000,
    );
    const second = pr(fixed, "L-1");
    if (!second) throw new Error("no merge request");
    const prompts = await cluster.scratch.db
      .selectFrom("runs")
      .select(["prompt"])
      .where("project_id", "=", project)
      .where("action", "=", "execute")
      .orderBy("created_at")
      .execute();
    expect(prompts[1]?.prompt).toContain("Call it V.");
    await waitUntil(() => forge.discussions(PROJECT, iid)[0]?.notes.at(-1)?.author === BOT.username);
    await describes(second.headSha);
    pipeline(second.headSha, iid, "success");
    await cluster.waitForProject(
      project,
      (s) => pr(s, "L-1")?.checks === "success" && pr(s, "L-1")?.headSha === second.headSha,
      120_000,
    );
    await forge.approve(PROJECT, iid, HUMAN.username);
    const done = await cluster.waitForProject(project, (s) => s.tasks.get("L-1")?.status === "done", 120_000);
    const main = await forge.git.resolve(PROJECT, "refs/heads/main");
    expect(pr(done, "L-1")).toMatchObject({ status: "merged", mergeCommitSha: main, mergedBy: BOT.username });
    expect(await forge.git.git(PROJECT, ["show", `${main}:src/app.ts`])).toContain("V = 1");
    await forge.flushWebhooks();

    // Every delivery reached the gateway (202), was stored once by X-Gitlab-Event-UUID, and applied.
    const sent = forge.deliveries.filter((d) => d.url === hookUrl(project));
    expect(sent.map((d) => d.status).every((s) => s === 202)).toBe(true);
    const stored = await storedDeliveries(project);
    expect(stored.map((d) => d.delivery_id).sort()).toEqual(
      sent.map((d) => d.headers["x-gitlab-event-uuid"]).sort(),
    );
    expect(stored.map((d) => `${d.event}.${d.action}`)).toEqual(
      expect.arrayContaining([
        "Merge Request Hook.open",
        "Pipeline Hook.null",
        "Note Hook.null",
        "Merge Request Hook.approval",
        "Merge Request Hook.merge",
      ]),
    );
    await waitUntil(async () => (await storedDeliveries(project)).every((d) => d.applied_at !== null));
    expect(forge.takeViolations()).toEqual([]);
    const row = await cluster.scratch.db
      .selectFrom("pull_requests")
      .select(["api_calls"])
      .where("project_id", "=", project)
      .where("task_id", "=", "L-1")
      .executeTakeFirstOrThrow();
    console.log(
      JSON.stringify({
        figure: "pull-request-loop-webhooks",
        forge: "gitlab",
        forgeApiCallsForTask: row.api_calls,
        deliveries: stored.length,
        rounds: 2,
      }),
    );
  }, 600_000);

  it("a lost Pipeline Hook is caught up by polling (GitLab gives no ETag: full reads)", async () => {
    const project = "gitlab-hooks-lossy";
    await cluster.addProject({
      id: project,
      tasks: [
        scriptedTask(
          "P-1",
          'execute: write src/p.ts "export const p = 1;\\n"; submit "Add p"\nreview: approve',
        ),
      ],
      remote: () => forge.cloneUrl(PROJECT),
      runnerConfig: ClusterFixture.fakeRunnerConfig({
        landing: {
          mode: "pull_request",
          pull_request: { poll_seconds: 1, required_checks: ["test"], merge: "auto", required_approvals: 0 },
        },
        forge: { kind: "gitlab", url: forge.url, repository: PROJECT, token: BOT.token },
      }),
    });
    forge.addWebhook(hookUrl(project), SECRET);
    const opened = await cluster.waitForProject(
      project,
      (s) => pr(s, "P-1")?.status === "open" && s.tasks.get("P-1")?.status === "pr_open",
      180_000,
    );
    const head = pr(opened, "P-1");
    if (!head?.number) throw new Error("no merge request");
    forge.loseWebhooks({ event: "Pipeline Hook" });
    pipeline(head.headSha, head.number, "success");
    const done = await cluster.waitForProject(project, (s) => s.tasks.get("P-1")?.status === "done", 120_000);
    expect(pr(done, "P-1")).toMatchObject({ status: "merged", mergedBy: BOT.username });
    expect(forge.mergeRequests(PROJECT).filter((m) => m.source === "overseer/pr/P-1")).toHaveLength(1);
    await forge.flushWebhooks();
    // The green pipeline never reached the gateway: only a poll can have seen it.
    const lost = forge.deliveries.filter((d) => d.url === hookUrl(project) && d.lost);
    expect(lost.map((d) => d.event)).toEqual(["Pipeline Hook"]);
    const stored = await storedDeliveries(project);
    expect(stored.some((d) => d.event === "Pipeline Hook")).toBe(false);
    expect(forge.takeViolations()).toEqual([]);
    const row = await cluster.scratch.db
      .selectFrom("pull_requests")
      .select(["api_calls"])
      .where("project_id", "=", project)
      .where("task_id", "=", "P-1")
      .executeTakeFirstOrThrow();
    console.log(
      JSON.stringify({
        figure: "lost-webhook-polled-1s",
        forge: "gitlab",
        forgeApiCallsForTask: row.api_calls,
        deliveries: stored.length,
      }),
    );
  }, 300_000);
});
