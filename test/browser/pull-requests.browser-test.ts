import { fakeHarnessPath } from "@overseer/harness";
import { GitHubDouble } from "@overseer/test-support";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  checkAccessibility,
  gatewayApi,
  launchBrowser,
  shot,
  signIn,
  gatewayUrl as url,
  waitForTaskStatus,
  watchConsole,
} from "./browser-support.ts";

/**
 * A project that lands through pull requests, in the web app (README "Land through pull
 * requests"): the demo cluster's coordinator opens the pull request on a GitHub double; the
 * project view names the forge and the merge policy and shows the task in the "PR" column with
 * its link, checks and review; the task view shows the same.
 */
const REPO = "acme/shop";
const BOT = { login: "overseer-bot", token: "browser-forge-token" };
let forge: GitHubDouble;
let browser: Browser;
let page: Page;
const consoleErrors: string[] = [];

beforeAll(async () => {
  forge = await GitHubDouble.start();
  forge.addUser(BOT);
  await forge.createRepository(REPO, { "README.md": "# shop\n" });
  await forge.protectBranch(REPO, ["main"], ["ci"]);
  browser = await launchBrowser();
  page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  page.setDefaultTimeout(120_000);
  watchConsole(page, consoleErrors);
});

afterAll(async () => {
  await browser?.close();
  await forge?.close();
});

describe("pull requests in the web app", () => {
  it("shows the forge, the merge policy and the open pull request on the board and the task", async () => {
    await gatewayApi("POST", "/api/v1/projects", {
      id: "browser-pr",
      repo: forge.cloneUrl(REPO),
      objective: "Browser test project browser-pr.",
      runner_config: {
        argv: [process.execPath, fakeHarnessPath()],
        timeout_seconds: 120,
        retry_backoff_seconds: 1,
        landing: {
          mode: "pull_request",
          pull_request: { merge: "auto", required_approvals: 2, required_checks: ["ci"], poll_seconds: 1 },
        },
        forge: { kind: "github", url: forge.url, repository: REPO, token: BOT.token },
      },
    });
    await gatewayApi("POST", "/api/v1/projects/browser-pr/tasks", {
      id: "S00-001",
      title: "Add the cart",
      scope: ["src/**"],
      body: '```overseer-fake\nexecute: write src/cart.ts "export const cart = [];\\n"; submit "Add the cart"\nreview: approve "Fine"\n```\n',
    });
    await gatewayApi("POST", "/api/v1/projects/browser-pr/start", {});
    await waitForTaskStatus("browser-pr", "S00-001", ["pr_open"]);
    type TaskPr = { pull_request: { number: number | null; head_sha: string; checks: string } };
    const taskPr = async (check: (pr: TaskPr["pull_request"]) => boolean, what: string) => {
      const deadline = Date.now() + 120_000;
      for (;;) {
        const pr = (await gatewayApi<TaskPr>("GET", "/api/v1/projects/browser-pr/tasks/S00-001"))
          .pull_request;
        if (check(pr)) return pr;
        if (Date.now() > deadline)
          throw new Error(`the pull request never got ${what}: ${JSON.stringify(pr)}`);
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    };
    const opened = await taskPr((pr) => pr.number !== null, "opened");
    forge.setCheckRun(REPO, opened.head_sha, { name: "ci", conclusion: "success" });
    await taskPr((pr) => pr.checks === "success", "green checks");
    const pull = forge.pulls(REPO).find((p) => p.number === opened.number);
    if (!pull) throw new Error("no pull request on the double");

    await signIn(page);
    await page.goto(`${url}/#/project/browser-pr`);
    const landing = page.getByTestId("landing");
    await landing.getByTestId("merge-policy").waitFor();
    expect(await landing.textContent()).toContain("Approved work lands through pull requests into main on");
    expect(await landing.getByTestId("merge-policy").textContent()).toContain(
      `github ${forge.url} (${REPO}) · merge: auto by squash once 2 approvals and checks ci green`,
    );
    const column = page.getByRole("region", { name: /^PR: 1$/ });
    const card = column.getByTestId("task-S00-001");
    const link = card.getByRole("link", { name: `PR #${pull.number}` });
    expect(await link.getAttribute("href")).toBe(`${forge.url}/${REPO}/pull/${pull.number}`);
    expect(await card.getByTestId("pull-request").textContent()).toContain("checks success");
    await checkAccessibility(page, "project board with a pull request");
    await shot(page, "project-pull-request");

    await card.getByRole("link", { name: /S00-001/ }).click();
    await page.getByRole("heading", { name: /S00-001/ }).waitFor();
    await page.getByTestId("merge-policy").waitFor();
    expect(await page.getByTestId("pull-request").textContent()).toContain(`PR #${pull.number}`);
    expect(await page.getByTestId("merge-policy").textContent()).toContain("merge: auto by squash");
    await checkAccessibility(page, "task with a pull request");
    expect(forge.takeViolations()).toEqual([]);
    expect(consoleErrors).toEqual([]);
  });
});
