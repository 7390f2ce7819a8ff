import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  checkAccessibility,
  createFakeProject,
  gatewayApi,
  launchBrowser,
  signIn,
  gatewayUrl as url,
  waitForTaskStatus,
  watchConsole,
} from "./browser-support.ts";

/**
 * The Charts view keeps the chosen time range whatever the data (issue 25): a project with one
 * ended run (one bucket) and a project with none, both created through the API on the demo
 * cluster, both drawn over exactly the hour, and the day once "last day" is picked. The axis is
 * read from uPlot's applied x scale (`data-x-min` / `data-x-max`, Unix seconds).
 */
let browser: Browser;
let page: Page;
const consoleErrors: string[] = [];

beforeAll(async () => {
  browser = await launchBrowser();
  page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  page.setDefaultTimeout(120_000);
  watchConsole(page, consoleErrors);
  // One run that ends by asking the operator: exactly one ended run, so one bucket.
  await createFakeProject(
    "charts-one",
    [
      {
        id: "S00-001",
        title: "Ask once",
        body: '```overseer-fake\nexecute: ask "Which one?" a:A b:B\n```\n',
      },
    ],
    true,
  );
  await createFakeProject("charts-none", [], false);
  // Asking leaves the task blocked behind the operator's card.
  await waitForTaskStatus("charts-one", "S00-001", ["blocked", "awaiting_input"]);
  await signIn(page);
});

afterAll(async () => {
  await browser?.close();
});

/** The applied x scale of every chart on the page, as [min, max] in Unix seconds. */
async function xScales(p: Page): Promise<[number, number][]> {
  const charts = p.locator("figure.chart [data-x-max]");
  await expect.poll(() => charts.count(), { timeout: 60_000 }).toBe(3);
  return (await charts.evaluateAll((els) =>
    els.map((el) => [Number(el.getAttribute("data-x-min")), Number(el.getAttribute("data-x-max"))]),
  )) as [number, number][];
}

function expectSpan(scales: [number, number][], minutes: number, bucketSeconds: number): void {
  const now = Date.now() / 1000;
  for (const [min, max] of scales) {
    // The window ends at the answer's "now" and starts at the bucket holding now - minutes.
    expect(max).toBeGreaterThan(now - 120);
    expect(max).toBeLessThanOrEqual(now + 5);
    expect(max - min).toBeGreaterThanOrEqual(minutes * 60);
    expect(max - min).toBeLessThan(minutes * 60 + bucketSeconds);
  }
}

describe("charts keep the chosen time range", () => {
  it("draws one data point over the whole last hour", async () => {
    const stats = await gatewayApi<{ buckets: unknown[] }>(
      "GET",
      "/api/v1/stats/runs?minutes=60&bucket_seconds=60&project=charts-one",
    );
    expect(stats.buckets).toHaveLength(1);
    await page.goto(`${url}/#/charts/charts-one`);
    await page.getByRole("heading", { name: "Charts", exact: true }).waitFor();
    expect(await page.getByTestId("charts-project").inputValue()).toBe("charts-one");
    expectSpan(await xScales(page), 60, 60);
    await checkAccessibility(page, "charts, one point");
  });

  it("draws the hour, then the day, with no data at all", async () => {
    await page.goto(`${url}/#/charts/charts-none`);
    await page.getByText("No run ended in this range.").waitFor();
    expectSpan(await xScales(page), 60, 60);
    await page.getByLabel("Range").selectOption({ label: "last day" });
    await expect
      .poll(async () => {
        const [first] = await xScales(page);
        return first ? first[1] - first[0] : 0;
      })
      .toBeGreaterThanOrEqual(1440 * 60);
    expectSpan(await xScales(page), 1440, 900);
    await checkAccessibility(page, "charts, no data");
  });

  it("switches project from the selector", async () => {
    await page.getByTestId("charts-project").selectOption("charts-one");
    await page.waitForURL(/#\/charts\/charts-one$/);
    await page.getByTestId("charts-project").selectOption("");
    await page.waitForURL(/#\/charts$/);
  });

  it("logged no error in the browser console", () => {
    expect(consoleErrors).toEqual([]);
  });
});
