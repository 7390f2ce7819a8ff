// `overseer status` of a project that lands through pull requests, against a real listening
// gateway: the forge and merge policy, and one line per open pull request (link, checks, review).
import { applyTransition, createProject } from "@overseer/db";
import { openPullRequest, taskCard } from "@overseer/test-support";
import { importTasks, startProject, TransitionApplier } from "@overseer/transitions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliGateway, runCapturedCli, startCliGateway } from "./cli-gateway.ts";

const TOKEN = "glpat-statusCanary0123456789";
let env: CliGateway;

beforeAll(async () => {
  env = await startCliGateway("clipr");
  const db = env.scratch.db;
  await createProject(db, {
    id: "shop",
    repo: "/tmp/none",
    runnerConfig: {
      landing: { mode: "pull_request", pull_request: { merge: "queue", merge_method: "merge" } },
      forge: { kind: "gitlab", url: "https://gitlab.example", repository: "team/sub/shop", token: TOKEN },
    },
    objective: "Shop",
  });
  const applier = new TransitionApplier({ db });
  await importTasks(applier, "shop", [{ ...taskCard("S00-001"), scope: ["**"] }]);
  await startProject(applier, "shop");
  await openPullRequest(db, "shop", {
    taskId: "S00-001",
    number: 7,
    url: "https://gitlab.example/team/sub/shop/-/merge_requests/7",
    head: "abc123",
  });
  await applyTransition(db, "shop", {
    kind: "pr-checks",
    taskId: "S00-001",
    headSha: "abc123",
    state: "failure",
    failing: [{ name: "test", url: null, logTail: "1 failed" }],
    maxAttempts: 3,
  });
}, 120_000);

afterAll(async () => {
  await env?.close();
});

describe("overseer status in pull_request mode", () => {
  it("names the forge and merge policy and each open pull request with its checks and review", async () => {
    const vars = { OVERSEER_URL: env.gateway.url, OVERSEER_TOKEN: env.tokens.read };
    const text = await runCapturedCli(["status", "--project", "shop"], vars);
    expect(text.code, text.err).toBe(0);
    expect(text.out).toContain(
      "landing: through pull requests into main on gitlab https://gitlab.example (team/sub/shop); merge: queue (the forge's auto-merge or merge queue, by merge)",
    );
    expect(text.out).toContain(
      "pull request: S00-001 PR #7 open https://gitlab.example/team/sub/shop/-/merge_requests/7 → main (checks failure, review none, 0 approvals)",
    );
    expect(text.out).not.toContain(TOKEN);
    const json = JSON.parse((await runCapturedCli(["status", "--json", "--project", "shop"], vars)).out);
    expect(json).toMatchObject({
      landing_mode: "pull_request",
      pull_requests: { forge: "gitlab", repository: "team/sub/shop", merge: "queue", merge_method: "merge" },
      open_pull_requests: [{ task_id: "S00-001", number: 7, checks: "failure", ci_failures: 1 }],
    });
  });
});
