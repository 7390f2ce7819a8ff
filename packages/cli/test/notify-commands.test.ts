import { applyTransition, createProject, recordDeliveryOutcome, startDeliveryAttempt } from "@overseer/db";
import { WebhookReceiver } from "@overseer/test-support";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliGateway, type CliResult, runCapturedCli, startCliGateway } from "./cli-gateway.ts";

/**
 * `overseer notify add|list|remove|test|rotate|deliveries|redeliver` against a real listening
 * gateway over a scratch database, and a receiver that verifies with `standardwebhooks`.
 */

let env: CliGateway;
let receiver: WebhookReceiver;

beforeAll(async () => {
  env = await startCliGateway("clinotify");
  receiver = await WebhookReceiver.start("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
  await createProject(env.scratch.db, { id: "hooks", repo: "/tmp/none", runnerConfig: {}, objective: "o" });
});

afterAll(async () => {
  await receiver?.stop();
  await env?.close();
});

function cli(args: string[], scope: keyof CliGateway["tokens"] = "admin"): Promise<CliResult> {
  return runCapturedCli(args, { OVERSEER_URL: env.gateway.url, OVERSEER_TOKEN: env.tokens[scope] });
}

function secretIn(out: string): string {
  const secret = /(whsec_[A-Za-z0-9+/=]+)/.exec(out)?.[1];
  if (!secret) throw new Error(`no secret in: ${out}`);
  return secret;
}

async function add(args: string[] = []): Promise<{ id: string; secret: string }> {
  const r = await cli(["notify", "add", receiver.url, "--project", "hooks", ...args]);
  expect(r.code, r.err).toBe(0);
  const id = /added (sub_[0-9a-f]+)/.exec(r.out)?.[1];
  if (!id) throw new Error(`no id in: ${r.out}`);
  return { id, secret: secretIn(r.out) };
}

describe("overseer notify: subscriptions", () => {
  it("adds a filtered subscription, prints its secret once, lists it without the secret, and tests it", async () => {
    const { id, secret } = await add([
      "--event",
      "project.paused",
      "--event",
      "incident.recorded",
      "--severity",
      "warning",
    ]);
    const list = await cli(["notify", "list", "--project", "hooks"], "read");
    expect(list.code).toBe(0);
    expect(list.out).toMatch(new RegExp(`${id}\\s+hooks\\s+project.paused,incident.recorded\\s+warning`));
    expect(list.out).not.toContain(secret);
    receiver.useSecret(secret);
    const test = await cli(["notify", "test", id], "operate");
    expect(test.code, test.err).toBe(0);
    expect(test.out).toMatch(/test message msg_test_[0-9a-f]+ delivered to sub_[0-9a-f]+: HTTP 204/);
    expect(receiver.accepted.at(-1)?.payload).toMatchObject({
      type: "overseer.test",
      data: { subscription_id: id },
    });
  });

  it("refuses a wrong severity (exit 2) and an operate token's add (exit 1), saying why", async () => {
    const bad = await cli(["notify", "add", receiver.url, "--severity", "loud"]);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain("info, warning, critical");
    const operate = await cli(["notify", "add", receiver.url], "operate");
    expect(operate.code).toBe(1);
    expect(operate.err).toMatch(/admin/);
    const none = await cli(["notify", "remove"]);
    expect(none.code).toBe(2);
  });

  it("subscribes a Slack channel with --slack-channel (no secret printed) and lists it as slack:CHANNEL", async () => {
    const r = await cli(["notify", "add", "--slack-channel", "C0123456789", "--project", "hooks"]);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/added sub_[0-9a-f]+ → slack:C0123456789 \(hooks;/);
    expect(r.out).not.toContain("whsec_");
    expect(r.out).toContain("OVERSEER_SLACK_BOT_TOKEN");
    const list = await cli(["notify", "list", "--project", "hooks"], "read");
    expect(list.out).toContain("slack:C0123456789");
    const both = await cli(["notify", "add", receiver.url, "--slack-channel", "C0123456789"]);
    expect(both.code).toBe(2);
    expect(both.err).toContain("not both");
    const badChannel = await cli(["notify", "add", "--slack-channel", "#general"]);
    expect(badChannel.code).not.toBe(0);
    expect(badChannel.err).toContain("Slack channel id such as C0123456789");
  });

  it("rotates the secret: without an overlap the old one stops signing and the test fails (exit 1) until the receiver switches", async () => {
    const { id, secret } = await add();
    receiver.useSecret(secret);
    const rotated = await cli(["notify", "rotate", id, "--overlap", "0"]);
    expect(rotated.code, rotated.err).toBe(0);
    expect(rotated.out).toContain("no previous secret signs any more");
    const fresh = secretIn(rotated.out);
    expect(fresh).not.toBe(secret);
    const refused = await cli(["notify", "test", id], "operate");
    expect(refused.code).toBe(1);
    expect(refused.err).toContain("the receiver answered HTTP 400");
    receiver.useSecret(fresh);
    expect((await cli(["notify", "test", id], "operate")).code).toBe(0);
    const overlapping = await cli(["notify", "rotate", id]);
    expect(overlapping.out).toMatch(/the previous secret keeps signing beside it until \d{4}-/);
    // The receiver still holds the previous secret: it verifies during the overlap.
    expect((await cli(["notify", "test", id], "operate")).code).toBe(0);
  });

  it("removes a subscription once", async () => {
    const { id } = await add();
    expect((await cli(["notify", "remove", id])).out).toBe(`removed subscription ${id}`);
    const again = await cli(["notify", "remove", id]);
    expect(again.code).toBe(1);
    expect(again.err).toContain("overseer notify list");
  });
});

describe("overseer notify: deliveries", () => {
  it("lists a delivery, shows a dead letter, and redelivers it once however often asked", async () => {
    await createProject(env.scratch.db, {
      id: "paging",
      repo: "/tmp/none",
      runnerConfig: {},
      objective: "o",
    });
    const r = await cli(["notify", "add", receiver.url, "--project", "paging"]);
    const id = /added (sub_[0-9a-f]+)/.exec(r.out)?.[1] ?? "";
    await applyTransition(env.scratch.db, "paging", {
      kind: "start-project",
      by: "test",
      stage: null,
      sessionsLimit: null,
    });
    await applyTransition(env.scratch.db, "paging", {
      kind: "set-project-status",
      status: "paused",
      by: "test",
      reason: "budget_usd 2 reached",
      bound: "budget",
    });
    const json = await cli(["notify", "deliveries", "--subscription", id, "--json"], "read");
    const [delivery] = JSON.parse(json.out) as { id: string; status: string; type: string }[];
    expect(delivery).toMatchObject({ status: "pending", type: "project.paused" });
    if (!delivery) return;
    // The coordinator's last attempt failed: the dead letter it writes.
    await startDeliveryAttempt(env.scratch.db, delivery.id);
    await recordDeliveryOutcome(env.scratch.db, delivery.id, {
      status: "dead",
      httpStatus: 503,
      error: "the receiver answered HTTP 503",
    });
    const dead = await cli(["notify", "deliveries", "--status", "dead", "--project", "paging"], "read");
    expect(dead.out).toMatch(
      new RegExp(
        `${delivery.id}\\s+dead letter\\s+1\\s+project.paused\\s+paging\\s+${id}\\s+the receiver answered HTTP 503`,
      ),
    );
    const first = await cli(["notify", "redeliver", delivery.id], "operate");
    expect(first.code, first.err).toBe(0);
    expect(first.out).toMatch(/is pending again; it is sent once more with webhook-id msg_/);
    const second = await cli(["notify", "redeliver", delivery.id], "operate");
    expect(second.out).toBe(`delivery ${delivery.id} is pending, not a dead letter; nothing changed`);
    const bad = await cli(["notify", "redeliver", "abc"], "operate");
    expect(bad.code).toBe(2);
  });
});
