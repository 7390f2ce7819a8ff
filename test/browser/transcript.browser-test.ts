import { readFileSync } from "node:fs";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../support/service-process.ts";
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
 * A run's transcript rendering live (issue 25): the run page is open while the agent works, and
 * its entries arrive over SSE. The agent is the fake harness replaying, line by line with a
 * pause in the middle, the stream-json output recorded from the pinned real Claude Code CLI
 * (packages/transcript/test/fixtures/, recorded by test/agents/transcript-samples.e2e.ts: a
 * Write of hello.txt, a Bash command that failed with exit 127, "Done.", the result with its
 * cost), under a runner config with `agent: claude`. It goes through Overseer's own stack: the
 * worker parses it, publishes `run.transcript` events (Redis, the gateway's project stream) and
 * stores the transcript; the page reads the transcript route and those events, never the log,
 * to draw it; nothing is mocked. Then the file edit opens the commit diff, and the task page shows what the agents
 * did. (The README's picture is a real CLI's run: test/agents/transcript-views.ts.)
 */
const FIXTURE = path.join(REPO_ROOT, "packages/transcript/test/fixtures/claude-2.1.332.jsonl");
const PROJECT = "transcript-live";
const TASK = "S00-001";

let browser: Browser;
let page: Page;
const consoleErrors: string[] = [];

/** A fake-harness string argument (its escapes: \" \\ \n). */
const quoted = (text: string) =>
  `"${text.replaceAll("\\", "\\\\").replaceAll('"', '\\"').replaceAll("\n", "\\n")}"`;

/**
 * The execute script: the recorded lines up to the Write call, a pause long enough to look at
 * the page, then the Write's result with the file it wrote, the failed Bash call, the final
 * message and the result with its cost, and the submit.
 */
function replayScript(): string {
  const lines = readFileSync(FIXTURE, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "");
  if (lines.length !== 8) throw new Error(`${FIXTURE}: expected 8 recorded lines, found ${lines.length}`);
  const print = (from: number, to: number) => lines.slice(from, to).map((l) => `print ${quoted(l)}`);
  const steps = [
    ...print(0, 3),
    "sleep 20",
    ...print(3, 4),
    `write hello.txt ${quoted("hello from a real agent CLI\n")}`,
    ...print(4, 8),
    `submit ${quoted("Add hello.txt")}`,
  ];
  return `execute: ${steps.join("; ")}`;
}

beforeAll(async () => {
  browser = await launchBrowser();
  page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  page.setDefaultTimeout(120_000);
  watchConsole(page, consoleErrors);
  await createFakeProject(
    PROJECT,
    [
      {
        id: TASK,
        title: "Add hello.txt",
        body: `Create hello.txt with a greeting.\n\n\`\`\`overseer-fake\n${replayScript()}\n\`\`\`\n`,
        scope: ["hello.txt"],
      },
    ],
    true,
    { agent: "claude" },
  );
  await signIn(page);
});

afterAll(async () => {
  await browser?.close();
});

/** The first run of the task once it exists. */
async function firstRun(): Promise<{ id: string; status: string }> {
  const deadline = Date.now() + 200_000;
  while (Date.now() < deadline) {
    const { runs } = await gatewayApi<{ runs: { id: string; status: string; action: string }[] }>(
      "GET",
      `/api/v1/projects/${PROJECT}/runs?task=${TASK}`,
    );
    const run = runs.find((r) => r.action === "execute");
    if (run && run.status !== "queued") return run;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`no run of ${PROJECT}/${TASK} started`);
}

describe("a run's transcript, live", () => {
  it("renders entries as they stream while the page is open", async () => {
    const run = await firstRun();
    const stored = page.waitForResponse(
      (r) => r.url().endsWith(`/api/v1/projects/${PROJECT}/runs/${run.id}/transcript`) && r.ok(),
    );
    // The project stream, which carries the run.transcript events.
    const events = page.waitForRequest((r) => r.url().includes(`/api/projects/${PROJECT}/events/stream`));
    await page.goto(`${url}/#/run/${run.id}`);
    await Promise.all([stored, events]);
    const transcript = page.getByTestId("transcript");
    // The Write call arrives first, while the agent is still working.
    const write = transcript.locator('[data-kind="tool_call"]').first();
    await write.getByText(/Tool Write/).waitFor();
    await write
      .getByText(/hello\.txt/)
      .first()
      .waitFor();
    expect(await transcript.getByText("Done.", { exact: true }).count()).toBe(0);
    expect(await page.locator("h1 .pill").first().textContent()).toMatch(/running/i);
    // The rest arrives on the same page, without a reload.
    await transcript.getByText("Done.", { exact: true }).waitFor();
    const bash = transcript.locator('[data-kind="tool_call"]').nth(1);
    expect(await bash.getByTestId("exit-code").textContent()).toBe("exit 127");
    // A failed command's output is open; the file edit is listed.
    await bash
      .locator("details.tr-output[open] pre")
      .getByText(/command not found/)
      .waitFor();
    await transcript
      .locator('[data-kind="file_edit"]')
      .getByText(/hello\.txt/)
      .waitFor();
    await page.getByTestId("meter-cost").getByText("$0.0127").waitFor();
    // Drawn from the worker's entries: no CLI parser ships in the web app.
    const html = await (await fetch(`${url}/`)).text();
    for (const [, asset] of html.matchAll(/src="(\/assets\/[^"]+\.js)"/g)) {
      const js = await (await fetch(`${url}${asset}`)).text();
      expect(js).not.toContain("api_retry");
      expect(js).not.toContain("command_execution");
    }
    await checkAccessibility(page, "run transcript");
  });

  it("keeps tool output collapsible and searchable", async () => {
    const transcript = page.getByTestId("transcript");
    const output = transcript.locator('[data-kind="tool_call"]').first().locator("details.tr-output");
    expect(await output.getAttribute("open")).toBeNull();
    await output.locator("summary").click();
    await output
      .locator("pre")
      .getByText(/File created successfully/)
      .waitFor();
    await page.getByTestId("transcript-search").fill("command not found");
    await page.getByText(/^1 of \d+ entries match$/).waitFor();
    expect(await transcript.getByText("Done.", { exact: true }).count()).toBe(0);
    await page.getByTestId("transcript-search").fill("");
  });

  it("opens the commit diff at an edited file, and keeps the raw log one click away", async () => {
    await waitForTaskStatus(PROJECT, TASK, ["done"]);
    await page.reload();
    const transcript = page.getByTestId("transcript");
    await transcript.getByText("Done.", { exact: true }).waitFor();
    // Where the run's time went: its stored phases, back to back from queue wait to result applied.
    const timeline = page.getByTestId("phase-timeline");
    await timeline.locator('[data-phase="agent"]').waitFor();
    await timeline.locator('[data-phase="result_applied"]').waitFor();
    expect(await timeline.locator("li").first().getAttribute("data-phase")).toBe("queue_wait");
    await transcript.locator('[data-kind="file_edit"]').getByRole("button", { name: "Show in diff" }).click();
    await page.locator('pre.diff [data-file="hello.txt"].d-focus').waitFor();
    await page.locator("pre.diff").getByText("hello from a real agent CLI").waitFor();
    await page.getByRole("tab", { name: "Raw log" }).click();
    await page
      .getByTestId("run-log")
      .getByText(/"type":"result"/)
      .waitFor();
  });

  it("shows what the agents did on the task page, run by run", async () => {
    const logs: string[] = [];
    page.on("request", (r) => {
      if (/\/api\/v1\/runs\/[^/]+\/log$/.test(r.url())) logs.push(r.url());
    });
    const stored = page.waitForResponse(
      (r) => r.url().endsWith(`/api/v1/projects/${PROJECT}/tasks/${TASK}/transcript`) && r.ok(),
    );
    await page.goto(`${url}/#/project/${PROJECT}/task/${TASK}`);
    await stored;
    await page.getByRole("heading", { name: "What the agents did" }).waitFor();
    const transcript = page.getByTestId("transcript");
    await transcript.getByRole("link", { name: /^execute #1 ·/ }).waitFor();
    await transcript.getByRole("link", { name: /^review #1 ·/ }).waitFor();
    await transcript.getByText("Done.", { exact: true }).waitFor();
    // The task's transcript route, not each run's stored log parsed in the browser.
    expect(logs).toEqual([]);
    await checkAccessibility(page, "task transcript");
  });

  it("logged no error in the browser console", () => {
    expect(consoleErrors).toEqual([]);
  });
});
