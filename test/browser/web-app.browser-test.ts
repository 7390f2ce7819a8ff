import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  checkAccessibility,
  launchBrowser,
  shot,
  signIn,
  operatorToken as token,
  gatewayUrl as url,
  watchConsole,
} from "./browser-support.ts";

/**
 * The operator web app in a real Chromium (Debian's /usr/bin/chromium through playwright-core)
 * against the running demo cluster: sign in, the fleet, a run's live log, a decision resolved
 * by clicking an option, pause and resume, a task's diff, a mission's status panel; axe-core on every view; no console
 * error anywhere. With SCREENSHOTS=1 each view is saved to docs/screenshots/.
 */
let browser: Browser;
let context: BrowserContext;
let page: Page;
const consoleErrors: string[] = [];

beforeAll(async () => {
  browser = await launchBrowser();
  context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  page = await context.newPage();
  page.setDefaultTimeout(120_000);
  watchConsole(page, consoleErrors);
});

afterAll(async () => {
  await browser?.close();
});

describe("operator web app against the demo cluster", () => {
  it("asks for a token, keeps it out of the URL, and lists the demo projects", async () => {
    await page.goto(`${url}/`);
    await page.getByRole("heading", { name: "Sign in" }).waitFor();
    await checkAccessibility(page, "sign in");
    await shot(page, "sign-in");
    await signIn(page);
    expect(page.url()).not.toContain(token);
    for (const id of ["demo-approve", "demo-reject", "demo-decision"]) {
      await page.getByTestId(`fleet-${id}`).waitFor();
    }
    // Wait until every demo project has run something, then check the view.
    await page.getByTestId("fleet-demo-approve").getByText("2/2 done").waitFor({ timeout: 200_000 });
    await checkAccessibility(page, "fleet");
    await shot(page, "fleet");
  });

  it("shows a project's board and its prerequisites graph", async () => {
    await page.goto(`${url}/#/project/demo-reject`);
    await page.getByRole("heading", { name: /demo-reject/ }).waitFor();
    await page.getByTestId("task-S00-001").waitFor();
    await checkAccessibility(page, "project board");
    await shot(page, "project-board");
    await page.getByRole("tab", { name: "Prerequisites graph" }).click();
    await page.getByRole("img", { name: /Prerequisites of/ }).waitFor();
  });

  it("shows a mission's status on its project page until it completes with its evidence", async () => {
    await page.goto(`${url}/#/project/demo-mission`);
    const panel = page.getByTestId("mission-panel");
    await panel.getByText("Completed", { exact: true }).waitFor({ timeout: 200_000 });
    await panel
      .getByTestId("mission-evidence")
      .getByText(/landed on main/)
      .waitFor();
    const text = (await panel.textContent()) ?? "";
    expect(text).toContain("Round 2 of 3");
    expect(text).toContain("Completion evidence");
    expect(await panel.getByTestId("mission-spend").textContent()).toMatch(/Spent \$[\d.]+ \(no budget\)/);
    await checkAccessibility(page, "mission");
    await shot(page, "mission");
  });

  it("opens a task's timeline and the syntax-highlighted diff of its commit", async () => {
    await page.goto(`${url}/#/project/demo-approve/task/S00-001`);
    await page.getByRole("heading", { name: "Timeline" }).waitFor();
    const diffButton = page.getByRole("button", { name: /Show diff of/ }).first();
    await diffButton.click();
    await page.locator("pre.diff").getByText("Hello from Overseer").waitFor();
    expect(await page.locator("pre.diff .d-add").count()).toBeGreaterThan(0);
    await checkAccessibility(page, "task");
    await shot(page, "task");
  });

  it("follows a run's log over SSE, with search", async () => {
    await page.goto(`${url}/#/project/demo-approve/task/S00-002`);
    await page.getByRole("link", { name: "execute #1", exact: true }).click();
    await page.getByRole("heading", { name: /execute #1/ }).waitFor();
    // The transcript is the default; the raw log is one click away.
    await page.getByRole("tab", { name: "Raw log" }).click();
    await page
      .getByTestId("run-log")
      .getByText(/fake-harness/)
      .first()
      .waitFor();
    await page.getByTestId("log-search").fill("fake-harness");
    await page.getByText(/matching line/).waitFor();
    await checkAccessibility(page, "run");
    await shot(page, "run");
  });

  it("resolves a decision by clicking an option; the card leaves and the task resumes", async () => {
    await page.goto(`${url}/#/needs`);
    const card = page.locator('[data-testid^="decision-demo-decision-"]').first();
    await card.waitFor({ timeout: 200_000 });
    await checkAccessibility(page, "needs you");
    await shot(page, "needs-you");
    await card.getByLabel("Note").fill("chosen in the browser test");
    await card.getByTestId("option-postgres").click();
    await card.waitFor({ state: "detached" });
    await page.goto(`${url}/#/project/demo-decision/task/S00-001`);
    await page.locator("h1 .pill", { hasText: "Done" }).waitFor({ timeout: 200_000 });
  });

  it("pauses and resumes a project after confirming", async () => {
    await page.goto(`${url}/#/project/demo-approve`);
    await page.getByRole("heading", { name: /demo-approve/ }).waitFor();
    await page.getByTestId("pause-project").click();
    await page.getByRole("dialog").getByRole("button", { name: "Confirm: Pause" }).click();
    await page.locator("#project-title .pill", { hasText: "paused" }).waitFor();
    await page.getByTestId("resume-project").click();
    await page.getByRole("dialog").getByRole("button", { name: "Confirm: Resume" }).click();
    await page.locator("#project-title .pill", { hasText: "active" }).waitFor();
  });

  it("shows incidents, notifications, workers and queues, and charts", async () => {
    for (const [hash, heading, name] of [
      ["#/incidents", "Incidents", "incidents"],
      ["#/notifications", "Notifications", "notifications"],
      ["#/workers", "Workers and queues", "workers"],
      ["#/charts", "Charts", "charts"],
    ] as const) {
      await page.goto(`${url}/${hash}`);
      await page.getByRole("heading", { name: heading, exact: true }).waitFor();
      await expect.poll(() => page.locator(".state.loading").count(), { timeout: 60_000 }).toBe(0);
      await checkAccessibility(page, name);
      await shot(page, name);
    }
    await page.goto(`${url}/#/workers`);
    await page
      .getByText(/busy|idle/)
      .first()
      .waitFor();
    await page.goto(`${url}/#/charts`);
    await page.getByText("Runs per minute").waitFor();
  });

  it("is usable at phone width", async () => {
    // sessionStorage is per tab: a new tab signs in again.
    const phone = await context.newPage();
    phone.setDefaultTimeout(120_000);
    watchConsole(phone, consoleErrors, "phone");
    await phone.setViewportSize({ width: 390, height: 844 });
    await signIn(phone);
    await phone.getByTestId("fleet-demo-approve").waitFor();
    const overflow = (await phone.evaluate(
      "document.documentElement.scrollWidth - window.innerWidth",
    )) as number;
    expect(overflow).toBeLessThanOrEqual(1);
    await shot(phone, "fleet-phone");
    await phone.close();
  });

  it("serves the API reference from local assets", async () => {
    await page.goto(`${url}/docs`);
    await page.getByText("Overseer gateway API").first().waitFor();
    await shot(page, "api-reference");
  });

  it("logged no error in the browser console", () => {
    expect(consoleErrors).toEqual([]);
  });
});
