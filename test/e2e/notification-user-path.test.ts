/**
 * The notification user path as the README's "Intake and notifications" section tells it, with
 * real processes (gateway, coordinator, the `overseer` CLI), Postgres and Redis: a subscription
 * added with `overseer notify add`, tested with `overseer notify test`; an event's notification
 * reaches a receiver that verifies it with the `standardwebhooks` library; a receiver that is down
 * dead-letters it after its attempts, and `overseer notify redeliver` (asked twice) delivers it once.
 */
import path from "node:path";
import { runCli } from "@overseer/cli";
import { createApiToken, listDeliveries } from "@overseer/db";
import { TransitionApplier } from "@overseer/transitions";
import { describe, expect, it } from "vitest";
import { useTestResources } from "../support/cluster-fixture.ts";
import { startGatewayProcess } from "../support/gateway-process.ts";
import { REPO_ROOT, spawnNode } from "../support/service-process.ts";
import { waitFor } from "../support/wait-for.ts";
import { WebhookReceiver } from "../support/webhook-receiver.ts";

const resources = useTestResources();
const CLI = path.join(REPO_ROOT, "packages/cli/src/bin.ts");
/** Replaced by the secret `overseer notify add` prints. */
const PLACEHOLDER = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

describe("notifications, the README's path", () => {
  it("notify add → an event → a verified delivery; a dead letter redelivered once with notify redeliver", async () => {
    const cluster = await resources.cluster();
    const db = cluster.scratch.db;
    await cluster.addProject({ id: "np", tasks: [], start: false });
    const good = await WebhookReceiver.start(PLACEHOLDER);
    const failing = await WebhookReceiver.start(PLACEHOLDER);
    resources.onRelease(() => good.stop());
    resources.onRelease(() => failing.stop());
    failing.up = false;
    const env = cluster.env({
      OVERSEER_NOTIFY_BACKOFF_MS: "100",
      OVERSEER_NOTIFY_ATTEMPTS: "3",
      LOG_LEVEL: "info",
    });
    resources.service("coordinator", env);
    const gateway = await startGatewayProcess(env);
    resources.onRelease(async () => void (await gateway.service.kill("SIGTERM")));
    const admin = (await createApiToken(db, { name: "admin", scope: "admin" })).token;

    const cliEnv = { OVERSEER_URL: gateway.url, OVERSEER_TOKEN: admin };
    /** `overseer …` as its own process (the first add, proving the installed entry point). */
    const overseerProcess = async (...args: string[]) => {
      const run = spawnNode(["--import", "tsx", CLI, ...args], cliEnv);
      return { code: await run.exited, out: run.output() };
    };
    /** `overseer …` in this process (the same verbs over HTTP, without a tsx start each). */
    const overseer = async (...args: string[]) => {
      const lines: string[] = [];
      const io = {
        out: (l: string) => lines.push(l),
        err: (l: string) => lines.push(l),
        env: cliEnv,
        cwd: REPO_ROOT,
      };
      const code = await runCli(args, io);
      return { code, out: lines.join("\n") };
    };
    type Run = (...args: string[]) => Promise<{ code: number | string | null; out: string }>;
    const add = async (receiver: WebhookReceiver, run: Run = overseer): Promise<string> => {
      const r = await run("notify", "add", receiver.url, "--project", "np");
      expect(r.code, r.out).toBe(0);
      receiver.useSecret(/signing secret[^:]*: (whsec_\S+)/.exec(r.out)?.[1] ?? "");
      return /added (sub_[0-9a-f]+)/.exec(r.out)?.[1] ?? "";
    };
    const goodId = await add(good, overseerProcess);
    const failingId = await add(failing);
    const tested = await overseer("notify", "test", goodId);
    expect(tested.code, tested.out).toBe(0);
    expect(good.accepted.map((a) => a.payload.type)).toEqual(["overseer.test"]);

    // The event: the project pauses at its budget bound (a `project.paused` notification).
    const transitions = new TransitionApplier({ db });
    await transitions.apply("np", { kind: "start-project", by: "test", stage: null, sessionsLimit: null });
    await transitions.apply("np", {
      kind: "set-project-status",
      status: "paused",
      by: "test",
      reason: "budget_usd 5 reached",
      bound: "budget",
    });
    const delivered = await waitFor("the good receiver's delivery", async () =>
      good.accepted.find((a) => a.payload.type === "project.paused"),
    );
    expect(delivered.payload.data).toMatchObject({
      project_id: "np",
      severity: "warning",
      reason: "budget_usd 5 reached",
    });
    const dead = await waitFor(
      "the failing receiver's dead letter",
      async () => (await listDeliveries(db, { subscriptionId: failingId, status: "dead", limit: 5 }))[0],
      60_000,
    );
    expect(dead.attempts).toBe(3);
    expect(failing.turnedAway).toBe(3);
    const listed = await overseer("notify", "deliveries", "--status", "dead");
    expect(listed.out).toMatch(
      new RegExp(`${dead.id}\\s+dead letter\\s+3\\s+project.paused\\s+np\\s+${failingId}`),
    );

    failing.up = true;
    const first = await overseer("notify", "redeliver", dead.id);
    expect(first.code, first.out).toBe(0);
    expect(first.out).toContain(`delivery ${dead.id} is pending again`);
    const second = await overseer("notify", "redeliver", dead.id);
    expect(second.code, second.out).toBe(0);
    expect(second.out).toMatch(/not a dead letter; nothing changed/);
    await waitFor(
      "the redelivery",
      async () => (await listDeliveries(db, { subscriptionId: failingId, status: "delivered", limit: 5 }))[0],
    );
    expect(failing.accepted.map((a) => [a.id, a.payload.type])).toEqual([
      [dead.webhook_id, "project.paused"],
    ]);
    expect(failing.duplicates).toBe(0);
    expect(failing.refused).toBe(0);
    expect(good.duplicates).toBe(0);
    expect(good.refused).toBe(0);
  });
});
