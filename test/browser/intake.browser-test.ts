import { applyTransition, connectDatabase } from "@overseer/db";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import {
  checkAccessibility,
  createFakeProject,
  gatewayApi,
  launchBrowser,
  shot,
  signIn,
  gatewayUrl as url,
  watchConsole,
} from "./browser-support.ts";

/**
 * A project's intake page (README "Intake and notifications"): its tracker source with kind and
 * query, and a tracker update that went dead shown as a dead letter and sent again from the
 * page with its Redeliver button; a dead notification delivery likewise on the Notifications
 * page. The source is added through the API (its token variable is
 * set nowhere, so nothing reaches a tracker); the dead update is seeded in the demo's database,
 * as the coordinator leaves one after its last attempt.
 */
const PROJECT = "browser-intake";
let browser: Browser;
let page: Page;
let updateId = "";
let deliveryId = "";
const consoleErrors: string[] = [];

beforeAll(async () => {
  await createFakeProject(PROJECT, [], true);
  const { source } = await gatewayApi<{ source: { id: string } }>(
    "POST",
    `/api/v1/projects/${PROJECT}/intake/sources`,
    {
      kind: "github",
      base_url: "http://127.0.0.1:9",
      query: { container: "acme/app", labels: ["overseer"] },
      token_env: "OVERSEER_BROWSER_TEST_UNSET_TOKEN",
    },
  );
  const db = connectDatabase(inject("databaseUrl"));
  try {
    const row = await db.db
      .insertInto("tracker_updates")
      .values({
        key: `${source.id}:12:started:first`,
        source_id: source.id,
        issue_id: "12",
        project_id: PROJECT,
        task_id: "acme-app-12",
        moment: "started",
        occurrence: "first",
        event_id: null,
        data: JSON.stringify({}),
        status: "dead",
        attempts: 5,
        last_error: "GitHub 503: Service Unavailable",
      })
      .returning("id")
      .executeTakeFirstOrThrow();
    updateId = String(row.id);
    // A notification to a receiver that is down: a bound pause writes its delivery, which the
    // coordinator tries; marked dead here as after its last attempt.
    const { subscription } = await gatewayApi<{ subscription: { id: string } }>(
      "POST",
      "/api/v1/notifications/subscriptions",
      { url: "http://127.0.0.1:9/down", project_id: PROJECT, event_types: ["project.paused"] },
    );
    await applyTransition(db.db, PROJECT, {
      kind: "set-project-status",
      status: "paused",
      by: "browser-test",
      reason: "budget_usd 1 reached",
      bound: "budget",
    });
    const delivery = await db.db
      .updateTable("notification_deliveries")
      .set({ status: "dead", attempts: 5, last_error: "connect ECONNREFUSED 127.0.0.1:9" })
      .where("subscription_id", "=", subscription.id)
      .returning("id")
      .executeTakeFirstOrThrow();
    deliveryId = String(delivery.id);
  } finally {
    await db.close();
  }
  browser = await launchBrowser();
  page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  page.setDefaultTimeout(120_000);
  watchConsole(page, consoleErrors);
  await signIn(page);
});

afterAll(async () => {
  await browser?.close();
});

describe("intake in the web app", () => {
  it("shows the project's source and a dead tracker update, and redelivers it from the page", async () => {
    await page.goto(`${url}/#/project/${PROJECT}`);
    await page.getByTestId("project-intake").click();
    await page.getByRole("heading", { name: `Intake of ${PROJECT}` }).waitFor();
    const source = page.locator("[data-testid^=source-src_]");
    await source.getByText("acme/app · label overseer").waitFor();
    await expect.poll(() => source.locator("td").nth(1).textContent()).toBe("github");
    const row = page.getByTestId(`tracker-update-${updateId}`);
    await row.getByText("dead letter").waitFor();
    await row.getByText("GitHub 503: Service Unavailable").waitFor();
    await checkAccessibility(page, "intake");
    await shot(page, "intake");
    await page.getByTestId(`redeliver-update-${updateId}`).click();
    await page.getByRole("status").getByText(`Tracker update ${updateId} is pending again`).waitFor();
    // The coordinator took it again: its attempts started over (it may be dead again, the
    // source's token variable being set nowhere).
    const after = await gatewayApi<{
      updates: { id: string; attempts: number; last_error: string | null }[];
    }>("GET", `/api/v1/intake/updates?project_id=${PROJECT}`);
    expect(after.updates.find((u) => u.id === updateId)?.attempts).toBeLessThan(5);
  });

  it("shows a dead notification delivery and redelivers it from the Notifications page", async () => {
    await page.goto(`${url}/#/notifications`);
    const row = page.getByTestId(`delivery-${deliveryId}`);
    await row.getByText("dead letter").waitFor();
    await row.getByText("connect ECONNREFUSED 127.0.0.1:9").waitFor();
    await page.getByTestId(`redeliver-${deliveryId}`).click();
    await page.getByRole("status").getByText(`Delivery ${deliveryId} is pending again`).waitFor();
  });

  it("logged no error in the browser console", () => {
    expect(consoleErrors).toEqual([]);
  });
});
