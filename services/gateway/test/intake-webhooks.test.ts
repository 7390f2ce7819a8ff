// The intake webhook route (POST /api/v1/intake/sources/{source_id}/webhook) for GitLab, Linear
// and Jira, through the real gateway app and Postgres. Each delivery is the tracker double's own,
// made by a person's change and signed as that tracker signs (GitLab: the secret as it is in
// X-Gitlab-Token, payloads from GitLab's webhook examples; Linear: Linear-Signature, the hex
// HMAC-SHA256 of the body, with the body's webhookTimestamp, payloads typed by @linear/sdk's
// webhook types; Jira: X-Hub-Signature sha256=<hex HMAC> of admin webhooks with a secret). A good
// delivery is stored once (sent twice: one row, one re-read queued); a missing or wrong proof is a
// 401 naming the secret's variable with nothing stored and nothing queued; a Linear delivery whose
// signed timestamp is stale is refused the same way. (GitHub's case is in intake-routes.test.ts.)
import { GitLabDouble, JiraDouble, LinearDouble } from "@overseer/test-support";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { seedProject, useGatewayFixture } from "./support/gateway-fixture.ts";

const fx = useGatewayFixture();
const NOWHERE = "http://127.0.0.1:9/hook";
/** A second webhook whose secret is not the source's: its deliveries are signed, but wrongly. */
const ELSEWHERE = "http://127.0.0.1:9/other-hook";
const SECRETS = {
  gitlab: { env: "OVERSEER_TEST_INTAKE_HOOK_GITLAB", secret: "gitlab-hook-secret" },
  linear: { env: "OVERSEER_TEST_INTAKE_HOOK_LINEAR", secret: "lin_wh_linear-hook-secret" },
  jira: { env: "OVERSEER_TEST_INTAKE_HOOK_JIRA", secret: "jira-hook-secret" },
} as const;
const TOKEN_ENV = "OVERSEER_TEST_INTAKE_HOOK_TOKEN";

let gitlab: GitLabDouble;
let linear: LinearDouble;
let jira: JiraDouble;

beforeAll(async () => {
  for (const { env, secret } of Object.values(SECRETS)) process.env[env] = secret;
  process.env[TOKEN_ENV] = "unused-by-the-webhook-route";
  await seedProject(fx, "hooks");
  gitlab = await GitLabDouble.start();
  await gitlab.createProject("acme/app");
  gitlab.addWebhook(NOWHERE, SECRETS.gitlab.secret);
  gitlab.addWebhook(ELSEWHERE, "not-the-gitlab-secret");
  linear = await LinearDouble.start();
  linear.workspace.addTeam("ENG", "Engineering");
  linear.addWebhook(NOWHERE, SECRETS.linear.secret);
  linear.addWebhook(ELSEWHERE, "lin_wh_not-the-secret");
  jira = await JiraDouble.start();
  jira.addWebhook(NOWHERE, SECRETS.jira.secret);
  jira.addWebhook(ELSEWHERE, "not-the-jira-secret");
}, 60_000);

afterAll(async () => {
  for (const { env } of Object.values(SECRETS)) delete process.env[env];
  delete process.env[TOKEN_ENV];
  await Promise.all([gitlab?.close(), linear?.close(), jira?.close()]);
});

afterEach(() => {
  expect([...gitlab.takeViolations(), ...linear.takeViolations(), ...jira.takeViolations()]).toEqual([]);
});

interface Delivery {
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly body: string;
}

async function addSource(kind: keyof typeof SECRETS, baseUrl: string, container: string) {
  const created = await fx.request("POST", "/api/v1/projects/hooks/intake/sources", {
    token: fx.tokens.admin,
    body: {
      kind,
      base_url: baseUrl,
      query: { container },
      token_env: TOKEN_ENV,
      webhook_secret_env: SECRETS[kind].env,
    },
  });
  expect(created.status, created.text).toBe(201);
  return created.body.source as { id: string; webhook_path: string };
}

/** The deliveries of one change: the one signed with the source's secret, and the wrongly signed one. */
function pairOf(sent: readonly Delivery[]): { good: Delivery; wrong: Delivery } {
  const good = sent.find((d) => d.url === NOWHERE);
  const wrong = sent.find((d) => d.url === ELSEWHERE);
  if (!good || !wrong) throw new Error("the double sent no delivery for the change");
  return { good, wrong };
}

const post = (source: { webhook_path: string }, delivery: Delivery, headers = delivery.headers) =>
  fx.request("POST", source.webhook_path, { token: null, rawBody: delivery.body, headers });

async function stored(sourceId: string) {
  return fx.scratch.db
    .selectFrom("intake_webhook_deliveries")
    .select(["delivery_id", "issue_id"])
    .where("source_id", "=", sourceId)
    .orderBy("delivery_id")
    .execute();
}

async function readsQueued(sourceId: string) {
  const jobs = await fx.deps.queues.intake.queue.getJobs(["waiting", "delayed", "active"]);
  return jobs.filter((j) => j.data.sourceId === sourceId).map((j) => j.data.issueId as string);
}

/** Sent twice: stored once (one row), one re-read of the issue queued. */
async function expectStoredOnce(
  source: { id: string; webhook_path: string },
  delivery: Delivery,
  expected: { deliveryId: string; issueId: string },
): Promise<void> {
  const before = await stored(source.id);
  const first = await post(source, delivery);
  expect(first.status, first.text).toBe(200);
  expect(first.body).toEqual({
    source_id: source.id,
    delivery_id: expected.deliveryId,
    stored: true,
    issue_id: expected.issueId,
  });
  const again = await post(source, delivery);
  expect(again.status, again.text).toBe(200);
  expect(again.body).toMatchObject({ delivery_id: expected.deliveryId, stored: false });
  const after = await stored(source.id);
  expect(after.length).toBe(before.length + 1);
  expect(after).toContainEqual({ delivery_id: expected.deliveryId, issue_id: expected.issueId });
  expect((await readsQueued(source.id)).filter((id) => id === expected.issueId)).toHaveLength(1);
}

/** A 401 saying which secret to set; nothing stored, nothing queued. */
async function expectRefused(
  kind: keyof typeof SECRETS,
  source: { id: string; webhook_path: string },
  delivery: Delivery,
  headers = delivery.headers,
): Promise<void> {
  const rows = await stored(source.id);
  const queued = await readsQueued(source.id);
  const refused = await post(source, delivery, headers);
  expect(refused.status, refused.text).toBe(401);
  expect(refused.body.error.code).toBe("bad_signature");
  expect(refused.text).toContain(SECRETS[kind].env);
  expect(refused.text).toContain("nothing was stored");
  expect(refused.text).not.toContain(SECRETS[kind].secret);
  expect(await stored(source.id)).toEqual(rows);
  expect(await readsQueued(source.id)).toEqual(queued);
}

const without = (headers: Record<string, string>, name: string) =>
  Object.fromEntries(Object.entries(headers).filter(([key]) => key.toLowerCase() !== name));

describe("GitLab: X-Gitlab-Token", () => {
  it("stores an Issue Hook and a Note Hook once each; a missing or wrong token is refused", async () => {
    const source = await addSource("gitlab", gitlab.url, "acme/app");
    let from = gitlab.deliveries.length;
    const iid = gitlab.openIssue("acme/app", { title: "Hooked", labels: ["overseer"] });
    await gitlab.flushWebhooks();
    const opened = pairOf(gitlab.deliveries.slice(from).filter((d) => d.event === "Issue Hook"));
    await expectStoredOnce(source, opened.good, {
      deliveryId: opened.good.headers["x-gitlab-event-uuid"] as string,
      issueId: String(iid),
    });
    from = gitlab.deliveries.length;
    gitlab.commentOnIssue("acme/app", iid, "root", "Please also add a test.");
    await gitlab.flushWebhooks();
    const noted = pairOf(gitlab.deliveries.slice(from).filter((d) => d.event === "Note Hook"));
    await expectRefused("gitlab", source, noted.wrong);
    await expectRefused("gitlab", source, noted.good, without(noted.good.headers, "x-gitlab-token"));
    await expectStoredOnce(source, noted.good, {
      deliveryId: noted.good.headers["x-gitlab-event-uuid"] as string,
      issueId: String(iid),
    });
  });
});

/**
 * A tracker that signs its body with an HMAC (Linear, Jira): a person files an issue titled
 * "Hooked" and comments on it; the filing's delivery tampered, unsigned or signed with another
 * secret is refused, and both deliveries are stored once.
 */
async function hmacSignedCase(
  kind: "linear" | "jira",
  source: { id: string; webhook_path: string },
  double: { deliveries: readonly Delivery[]; settled(): Promise<void> },
  headers: { id: string; signature: string },
  person: { file(): { id: string }; comment(issue: { id: string }): void },
): Promise<void> {
  let from = double.deliveries.length;
  const issue = person.file();
  await double.settled();
  const filed = pairOf(double.deliveries.slice(from));
  await expectRefused(kind, source, { ...filed.good, body: filed.good.body.replace("Hooked", "Hijacked") });
  await expectRefused(kind, source, filed.good, without(filed.good.headers, headers.signature));
  await expectRefused(kind, source, filed.wrong);
  const idOf = (d: Delivery) => d.headers[headers.id] as string;
  await expectStoredOnce(source, filed.good, { deliveryId: idOf(filed.good), issueId: issue.id });
  from = double.deliveries.length;
  person.comment(issue);
  await double.settled();
  const commented = pairOf(double.deliveries.slice(from));
  await expectStoredOnce(source, commented.good, { deliveryId: idOf(commented.good), issueId: issue.id });
}

describe("Linear: Linear-Signature and webhookTimestamp", () => {
  it("stores an Issue and a Comment delivery once each; a tampered, unsigned or wrongly signed one is refused", async () => {
    const source = await addSource("linear", linear.url, "ENG");
    await hmacSignedCase(
      "linear",
      source,
      linear,
      { id: "linear-delivery", signature: "linear-signature" },
      {
        file: () => linear.fileIssue("ENG", { title: "Hooked", assignee: linear.bot }),
        comment: (issue) => {
          const filed = linear.workspace.issues.find((i) => i.id === issue.id);
          if (filed) linear.comment(filed, "Use Postgres.");
        },
      },
    );
  });

  it("refuses a delivery whose signed webhookTimestamp is two minutes old (a replay), storing nothing", async () => {
    const source = await addSource("linear", linear.url, "ENG");
    const from = linear.deliveries.length;
    // Linear made and signed this delivery two minutes ago: its signature holds, its timestamp does not.
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() - 120_000 });
    try {
      linear.fileIssue("ENG", { title: "Replayed", assignee: linear.bot });
    } finally {
      vi.useRealTimers();
    }
    await linear.settled();
    const { good } = pairOf(linear.deliveries.slice(from));
    expect(
      Date.now() - (JSON.parse(good.body) as { webhookTimestamp: number }).webhookTimestamp,
    ).toBeGreaterThan(60_000);
    await expectRefused("linear", source, good);
    expect(await stored(source.id)).toEqual([]);
    // The control: received when it was sent, the very same delivery is taken.
    const signedAt = (JSON.parse(good.body) as { webhookTimestamp: number }).webhookTimestamp;
    vi.useFakeTimers({ toFake: ["Date"], now: signedAt + 1_000 });
    try {
      expect((await post(source, good)).body).toMatchObject({ stored: true });
    } finally {
      vi.useRealTimers();
    }
  });
});

describe("Jira: X-Hub-Signature (admin webhook with a secret)", () => {
  it("stores an issue and a comment delivery once each; a tampered, unsigned or wrongly signed one is refused", async () => {
    const source = await addSource("jira", jira.url, "PROJ");
    await hmacSignedCase(
      "jira",
      source,
      jira,
      { id: "x-atlassian-webhook-identifier", signature: "x-hub-signature" },
      {
        file: () => jira.fileIssue("PROJ", { summary: "Hooked", assignee: jira.bot }),
        comment: (issue) => {
          const filed = jira.issue(issue.id);
          if (filed) jira.comment(filed, "Export as CSV, please.");
        },
      },
    );
  });
});
