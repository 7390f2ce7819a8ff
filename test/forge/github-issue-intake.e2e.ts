/**
 * Issue 23's GitHub case, the README's path ("Intake and notifications"): a labelled GitHub issue
 * becomes a task, runs, gets a comment with its pull request's link, and is closed on merge.
 * Overseer's parts are real (the gateway as its own process, an in-process coordinator with its
 * intake and tracker status runners, a bwrap worker running the fake harness, git, Postgres,
 * Redis); GitHub is the GitHub double (REST checked against @octokit/openapi, webhooks built on
 * @octokit/webhooks-examples and checked against @octokit/webhooks-schemas, signed
 * `X-Hub-Signature-256` as GitHub signs them).
 *
 * The source is added with `overseer intake add` and the repository's webhook pointed at the URL
 * it prints. Polling is left at ten minutes, so webhooks alone bring the issue in: a person opens
 * an issue, labels it `overseer` → a task, once (a redelivery of the `issues.labeled` delivery
 * stores nothing and asks for nothing) → executor and reviewer run → the pull request opens on
 * the double, naming the issue → the issue hears "started" and then a comment with the pull
 * request's `html_url` → CI goes green and a person merges on the double → the task is done → the issue gets the merge
 * comment, loses `overseer:working` and is closed (completed). A delivery signed with another
 * secret is refused 401 with a message naming the secret's variable, and is stored nowhere.
 */

import { createHmac } from "node:crypto";
import { runCli } from "@overseer/cli";
import { createApiToken, getIntakeItem, getTask } from "@overseer/db";
import type { WebhookDelivery } from "@overseer/test-support";
import { afterAll, describe, expect, it } from "vitest";
import { type GatewayProcess, startGatewayProcess } from "../support/gateway-process.ts";
import { REPO_ROOT } from "../support/service-process.ts";
import { waitFor } from "../support/wait-for.ts";
import { useGitHubCase } from "./github-setup.ts";
import { pr, until } from "./pull-request-state.ts";

const REPO = "acme/app";
const PROJECT = "gh-intake";
const TOKEN_ENV = "OVERSEER_E2E_GITHUB_TOKEN";
const SECRET_ENV = "OVERSEER_E2E_GITHUB_HOOK_SECRET";
const SECRET = "gh-intake-e2e-hook-secret";
/** `OVERSEER_DASHBOARD_URL` of the coordinator: the started comment links to the task's page. */
const DASHBOARD = "https://overseer.example.com/";

/** What the fake agents do: the executor bumps v and submits, the reviewer approves. */
const SCRIPT = [
  "```overseer-fake",
  'execute: write src/app.ts "export const v = 1;\\n"; submit "Bump v"',
  'review: approve "Fine"',
  "```",
].join("\n");

let gateway: GatewayProcess;
const tokenBefore = process.env[TOKEN_ENV];
const gh = useGitHubCase({
  repo: REPO,
  tag: "intake_e2e",
  coordinator: "coord-gh-intake",
  coordinatorOptions: { intakePollMs: 600_000, dashboardUrl: DASHBOARD },
  workers: 1,
  beforeCoordinator: async () => {
    // The token stays host-side: in the coordinator's environment (this process) and the gateway's.
    process.env[TOKEN_ENV] = BOT.token;
    gateway = await startGatewayProcess(
      cluster.env({ LOG_LEVEL: "info", [TOKEN_ENV]: BOT.token, [SECRET_ENV]: SECRET }),
    );
  },
});
const { cluster, bot: BOT, human: HUMAN } = gh;

afterAll(async () => {
  await gateway?.service.kill("SIGTERM");
  if (tokenBefore === undefined) delete process.env[TOKEN_ENV];
  else process.env[TOKEN_ENV] = tokenBefore;
});

/** `overseer …` over HTTP against the gateway, as an operator with an admin token runs it. */
async function overseer(token: string, ...args: string[]): Promise<{ code: number; out: string }> {
  const lines: string[] = [];
  const env = { OVERSEER_URL: gateway.url, OVERSEER_TOKEN: token };
  const code = await runCli(args, {
    out: (l: string) => lines.push(l),
    err: (l: string) => lines.push(l),
    env,
    cwd: REPO_ROOT,
  });
  return { code, out: lines.join("\n") };
}

const storedDeliveries = (sourceId: string) =>
  cluster.scratch.db
    .selectFrom("intake_webhook_deliveries")
    .select(["delivery_id", "issue_id"])
    .where("source_id", "=", sourceId)
    .execute();

const trackerUpdates = () =>
  cluster.scratch.db
    .selectFrom("tracker_updates")
    .select(["moment", "status", "data"])
    .where("project_id", "=", PROJECT)
    .orderBy("id")
    .execute();

/** Step 1: `overseer intake add` with an admin token; the source's id and its webhook URL. */
async function addSource(admin: string): Promise<{ sourceId: string; hookUrl: string }> {
  const added = await overseer(
    admin,
    ...["intake", "add", "github", REPO, "--project", PROJECT, "--label", "overseer"],
    ...["--token-env", TOKEN_ENV, "--webhook-secret-env", SECRET_ENV, "--base-url", gh.forge.url],
  );
  expect(added.code, added.out).toBe(0);
  const sourceId = /added (src_[0-9a-f]+): github acme\/app \(label overseer\)/.exec(added.out)?.[1];
  const hookPath = /webhook URL: <gateway URL>(\S+)/.exec(added.out)?.[1];
  if (!sourceId || !hookPath) throw new Error(`unexpected intake add output:\n${added.out}`);
  expect(hookPath).toBe(`/api/v1/intake/sources/${sourceId}/webhook`);
  return { sourceId, hookUrl: `${gateway.url}${hookPath}` };
}

/**
 * Step 3: the `issues.labeled` delivery again, as GitHub's "Redeliver" sends it (the same
 * X-GitHub-Delivery): 200, stored once, nothing asked. Then the same body signed with another
 * secret (a forgery, or a webhook set up with the wrong secret): 401 naming the secret's
 * variable, stored nowhere; and sent form-encoded (GitHub's other content type): 415 saying
 * to send JSON.
 */
async function replays(sourceId: string, hookUrl: string, issueId: string, labelled: WebhookDelivery) {
  const post = (headers: Record<string, string>, body = labelled.body) =>
    fetch(hookUrl, { method: "POST", headers, body });
  const again = await post(labelled.headers);
  expect(again.status).toBe(200);
  expect(await again.json()).toEqual({
    source_id: sourceId,
    delivery_id: labelled.headers["x-github-delivery"],
    stored: false,
    issue_id: issueId,
  });

  const forgedId = "00000000-0000-4000-8000-f0f0f0f0f0f0";
  const wrong = createHmac("sha256", "not-the-secret").update(labelled.body).digest("hex");
  const refused = await post({
    ...labelled.headers,
    "x-github-delivery": forgedId,
    "x-hub-signature-256": `sha256=${wrong}`,
  });
  expect(refused.status).toBe(401);
  const problem = JSON.stringify(await refused.json());
  expect(problem).toContain("bad_signature");
  expect(problem).toContain(SECRET_ENV);

  const form = `payload=${encodeURIComponent(labelled.body)}`;
  const formSignature = createHmac("sha256", SECRET).update(form).digest("hex");
  const asForm = await post(
    {
      ...labelled.headers,
      "content-type": "application/x-www-form-urlencoded",
      "x-github-delivery": "00000000-0000-4000-8000-f0f0f0f0f0f1",
      "x-hub-signature-256": `sha256=${formSignature}`,
    },
    form,
  );
  expect(asForm.status).toBe(415);
  expect(JSON.stringify(await asForm.json())).toContain("application/json");

  const stored = (await storedDeliveries(sourceId)).map((d) => d.delivery_id);
  expect(stored).not.toContain(forgedId);
  expect(stored.filter((id) => id === labelled.headers["x-github-delivery"])).toHaveLength(1);
}

const startedComment = (taskId: string) =>
  `Overseer started work on this issue as task \`${taskId}\` ([dashboard](https://overseer.example.com/#/project/${PROJECT}/task/${taskId})).`;

/** The bot's comments on the issue, first line each (the hidden marker follows). */
const botComments = (number: number) =>
  gh.forge
    .comments(REPO, number)
    .filter((c) => c.login === BOT.login)
    .map((c) => c.body.split("\n")[0] ?? "");

/**
 * Step 5: the task runs (executor, reviewer) and its pull request opens on the double; the
 * issue hears that work started, then the pull request's html_url. The pull request as recorded.
 */
async function pullRequestCommented(taskId: string, number: number) {
  const open = await cluster.waitForProject(
    PROJECT,
    (s) => s.tasks.get(taskId)?.status === "pr_open" && pr(s, taskId)?.status === "open",
    240_000,
  );
  const opened = pr(open, taskId);
  if (!opened?.number || !opened.headSha) throw new Error("no pull request recorded");
  const htmlUrl = `${gh.forge.url}/${REPO}/pull/${opened.number}`;
  expect(opened.url).toBe(htmlUrl);
  expect(gh.forge.pulls(REPO).map((p) => [p.number, p.state])).toEqual([[opened.number, "open"]]);
  // The pull request names its issue (GitHub links the two), without a closing keyword.
  expect(gh.forge.pulls(REPO)[0]?.body).toContain(
    `From issue ${REPO}#${number}; its status is reported there.`,
  );
  await until(() => botComments(number).some((c) => c.includes(htmlUrl)), 120_000);
  expect(botComments(number)).toEqual([
    startedComment(taskId),
    `Overseer opened a pull request for task \`${taskId}\`: ${htmlUrl}`,
  ]);
  expect(gh.forge.issues(REPO).find((i) => i.number === number)).toMatchObject({
    state: "open",
    labels: ["overseer", "overseer:working"],
  });
  return { number: opened.number, headSha: opened.headSha, htmlUrl };
}

/**
 * Step 6: CI goes green; a person merges on the double; Overseer notices, the task is done, and
 * the issue gets the merge comment, loses overseer:working and is closed as completed.
 */
async function mergedAndClosed(
  taskId: string,
  number: number,
  pull: { number: number; headSha: string; htmlUrl: string },
) {
  gh.forge.setCheckRun(REPO, pull.headSha, { name: "ci", conclusion: "success" });
  await cluster.waitForProject(PROJECT, (s) => pr(s, taskId)?.checks === "success", 120_000);
  const mergeSha = await gh.forge.mergeByHuman(REPO, pull.number, HUMAN.login, "merge");
  const done = await cluster.waitForProject(PROJECT, (s) => s.tasks.get(taskId)?.status === "done", 120_000);
  expect(pr(done, taskId)).toMatchObject({
    status: "merged",
    mergeCommitSha: mergeSha,
    mergedBy: HUMAN.login,
  });
  const issue = () => gh.forge.issues(REPO).find((i) => i.number === number);
  await until(() => issue()?.state === "closed", 120_000);
  expect(issue()).toMatchObject({ state: "closed", stateReason: "completed", labels: ["overseer"] });
  expect(botComments(number)).toEqual([
    startedComment(taskId),
    `Overseer opened a pull request for task \`${taskId}\`: ${pull.htmlUrl}`,
    `The pull request of task \`${taskId}\` merged: ${pull.htmlUrl}`,
  ]);
  // The close is the update's last write; its row is marked delivered right after.
  const updates = await waitFor("the merged update marked delivered", async () => {
    const rows = await trackerUpdates();
    return rows.every((u) => u.status === "delivered") ? rows : undefined;
  });
  expect(updates.map((u) => u.moment)).toEqual(["started", "pr_opened", "merged"]);
}

describe("GitHub issue intake end to end (GitHub double → gateway → coordinator → worker → pull request)", () => {
  it("a labelled issue becomes a task once, its PR link is commented, a person's merge closes it; a forged delivery is refused", async () => {
    await cluster.addProject({
      id: PROJECT,
      tasks: [],
      remote: () => gh.forge.cloneUrl(REPO),
      runnerConfig: gh.pullRequestConfig({ merge: "manual" }),
    });
    const admin = (await createApiToken(cluster.scratch.db, { name: "admin", scope: "admin" })).token;

    // 1. The operator subscribes the project to the repository's issues labelled `overseer`,
    //    and points the repository's webhook at the URL `intake add` prints.
    const { sourceId, hookUrl } = await addSource(admin);
    gh.forge.addWebhook(hookUrl, SECRET);

    // 2. A person opens an issue (not labelled yet: the dry run would take nothing), then
    //    labels it: its `issues.labeled` delivery makes it a task.
    const number = gh.forge.openIssue(REPO, {
      title: "Bump v",
      body: `Version 1 is out.\n\n- [ ] v is 1\n\n${SCRIPT}`,
      login: HUMAN.login,
    });
    const issueId = String(number);
    await gh.forge.flushWebhooks();
    const dryRun = await overseer(admin, "intake", "test", sourceId);
    expect(dryRun.code, dryRun.out).toBe(0);
    expect(dryRun.out).not.toContain(`${REPO}#${number}`);
    await gh.forge.changeIssue(REPO, number, { addLabel: "overseer", login: HUMAN.login });
    const labelled = gh.forge.deliveries.find(
      (d) => d.url === hookUrl && d.event === "issues" && JSON.parse(d.body).action === "labeled",
    );
    if (!labelled) throw new Error("the double sent no issues.labeled delivery");
    const taskId = `acme-app-${number}`;
    const taken = await waitFor(
      "intake to take the labelled issue",
      async () => (await getIntakeItem(cluster.scratch.db, sourceId, issueId))?.task_id ?? undefined,
      60_000,
    );
    expect(taken).toBe(taskId);
    expect(await getTask(cluster.scratch.db, PROJECT, taskId)).toMatchObject({
      title: "Bump v",
      acceptance: ["v is 1"],
    });

    // 3–4. Redelivered, forged, form-encoded.
    await replays(sourceId, hookUrl, issueId, labelled);

    // 5–6. Pull request, its link on the issue, a person's merge, the issue closed.
    const pull = await pullRequestCommented(taskId, number);
    await mergedAndClosed(taskId, number, pull);

    // Exactly one task came of the issue, however many deliveries its changes sent, each
    // answered 200 by the gateway; the double saw nothing GitHub would not send or answer.
    const state = await cluster.waitForProject(PROJECT, () => true);
    expect([...state.tasks.keys()]).toEqual([taskId]);
    await gh.forge.flushWebhooks();
    const sent = gh.forge.deliveries.filter((d) => d.url === hookUrl);
    expect(sent.map((d) => d.status).every((status) => status === 200)).toBe(true);
    expect(gh.forge.takeViolations()).toEqual([]);
  }, 600_000);
});
