import { mkdir } from "node:fs/promises";
import path from "node:path";
import { runCli } from "@overseer/cli";
import { createApiToken } from "@overseer/db";
import { type RunningGateway, startGateway } from "@overseer/gateway";
import { WorkerRegistry } from "@overseer/queue";
import { type Browser, chromium, type Page } from "playwright-core";
import { expect } from "vitest";
import type { ClusterFixture } from "../support/cluster-fixture.ts";
import { REPO_ROOT } from "../support/service-process.ts";

/**
 * Where an operator reads a real CLI's run (README "Watching runs"): a gateway over the suite's
 * cluster serving the built web app, Debian's Chromium (playwright-core) on the run page, and
 * `overseer logs` in process. With SCREENSHOTS=1 the run page of `SCREENSHOT_AGENT`'s executor
 * is saved as docs/screenshots/transcript-real-cli.png, the README's picture.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const SCREENSHOT_AGENT = "claude";

export interface ExpectedRun {
  kind: string;
  runId: string;
  action: string;
  /** The shell command the model ran (overseer-agent submit or approve). */
  verb: string;
  /** The file the executor wrote with the CLI's own tool; null for a reviewer. */
  edit: string | null;
}

export class TranscriptViews {
  private constructor(
    private readonly gateway: RunningGateway,
    private readonly token: string,
    private readonly browser: Browser,
    private readonly page: Page,
  ) {}

  static async start(cluster: ClusterFixture): Promise<TranscriptViews> {
    const gateway = await startGateway(
      {
        db: cluster.scratch.db,
        redis: cluster.redis,
        queues: cluster.queues,
        live: cluster.live,
        registry: new WorkerRegistry(cluster.redis, cluster.prefix),
        logger: cluster.logger,
      },
      { port: 0, processMetrics: false, dataDir: path.join(cluster.dataDir, "gateway") },
    );
    const { token } = await createApiToken(cluster.scratch.db, { name: "watcher", scope: "operate" });
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"],
    });
    const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    page.setDefaultTimeout(60_000);
    await page.goto(`${gateway.url}/`);
    await page.getByLabel("API token").fill(token);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Fleet" }).waitFor();
    return new TranscriptViews(gateway, token, browser, page);
  }

  async close(): Promise<void> {
    await this.browser.close();
    await this.gateway.close();
  }

  /**
   * The run page draws the run's transcript: the shell call with its command (and exit 0 where
   * the CLI says it), the edit with its link to the diff, the final message, the usage meter.
   */
  async expectRunPage(run: ExpectedRun): Promise<void> {
    const page = this.page;
    await page.goto(`${this.gateway.url}/#/run/${run.runId}`);
    const transcript = page.getByTestId("transcript");
    const what = `${run.kind} ${run.action} run page`;
    await transcript.getByText("Done.", { exact: true }).last().waitFor();
    const shell = transcript.locator('[data-kind="tool_call"]').filter({ hasText: run.verb });
    expect(await shell.count(), `${what}: the shell call`).toBeGreaterThan(0);
    // Gemini's stream-json shows a command's output, not its exit status.
    if (run.kind !== "gemini")
      expect(await shell.first().getByTestId("exit-code").textContent(), what).toBe("exit 0");
    if (run.edit !== null) {
      const edit = transcript.locator('[data-kind="file_edit"]').filter({ hasText: run.edit });
      await edit.getByRole("button", { name: "Show in diff" }).waitFor();
    }
    expect(await page.getByTestId("usage-meter").textContent(), `${what}: the meter`).toMatch(
      /Tokens in\s*[1-9]/,
    );
    expect(await transcript.getByText(/^\{"type":/).count(), `${what}: no raw JSON event`).toBe(0);
    if (process.env.SCREENSHOTS === "1" && run.kind === SCREENSHOT_AGENT && run.edit !== null) {
      await page.evaluate("window.scrollTo(0, document.querySelector('.run-output').offsetTop - 56)");
      const dir = path.join(REPO_ROOT, "docs/screenshots");
      await mkdir(dir, { recursive: true });
      await page.screenshot({ path: path.join(dir, "transcript-real-cli.png"), fullPage: false });
    }
  }

  /** `overseer logs RUN`, piped: the transcript as plain text, not the CLI's JSON. */
  async expectLogs(run: ExpectedRun): Promise<void> {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli(["logs", run.runId], {
      out: (line) => out.push(line),
      err: (line) => err.push(line),
      env: { OVERSEER_URL: this.gateway.url, OVERSEER_TOKEN: this.token },
      cwd: process.cwd(),
    });
    const text = out.join("\n");
    const what = `${run.kind} ${run.action} overseer logs`;
    expect(code, `${what}: ${err.join("\n")}`).toBe(0);
    // A shell command may span lines (Codex's `bash -lc` script): its block names the verb.
    expect(text, what).toMatch(/^\S{8} \$ /m);
    expect(text, what).toContain(run.verb);
    expect(text, what).toMatch(/^\S{8} assistant: Done\.$/m);
    expect(text, what).toMatch(/^\S{8} tokens [\d,]+ in/m);
    if (run.kind !== "gemini") expect(text, what).toMatch(/^ {9}↳ exit 0/m);
    if (run.edit !== null) expect(text, what).toMatch(new RegExp(`^\\S{8} ✎ \\w+ (\\S*/)?${run.edit}$`, "m"));
    expect(text, `${what}: no raw JSON event`).not.toMatch(/^\S{8} \{"type":/m);
  }
}
