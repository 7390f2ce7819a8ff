import { readFileSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { initBareRepo } from "@overseer/git";
import { fakeHarnessPath } from "@overseer/harness";
import { type Browser, chromium, type Page } from "playwright-core";
import { expect, inject } from "vitest";
import { REPO_ROOT } from "../support/service-process.ts";

/**
 * What the browser tests share: Debian's Chromium through playwright-core, signing in with the
 * demo cluster's operator token, axe-core on a view, screenshots (SCREENSHOTS=1), console-error
 * collection, and projects of their own created through the gateway's HTTP API (a bare
 * repository and the fake harness, as the demo's).
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
export const gatewayUrl = inject("gatewayUrl");
export const operatorToken = inject("operatorToken");
const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
const SHOTS = process.env.SCREENSHOTS === "1" ? path.join(REPO_ROOT, "docs/screenshots") : null;

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"],
  });
}

/** Collects console errors and uncaught page errors of `page` into `sink`. */
export function watchConsole(page: Page, sink: string[], label?: string): void {
  page.on("console", (m) => {
    if (m.type() === "error") sink.push(`${m.text()} @ ${label ?? page.url()}`);
  });
  page.on("pageerror", (e) => sink.push(`${e.message} @ ${label ?? page.url()}`));
}

export async function signIn(p: Page): Promise<void> {
  await p.goto(`${gatewayUrl}/`);
  await p.getByLabel("API token").fill(operatorToken);
  await p.getByRole("button", { name: "Sign in" }).click();
  await p.getByRole("heading", { name: "Fleet" }).waitFor();
}

/** axe-core (WCAG 2 A/AA rules) on the current view: no serious or critical violation. */
export async function checkAccessibility(p: Page, view: string): Promise<void> {
  await p.evaluate(`${axeSource}\n;0`);
  const result = (await p.evaluate(
    `axe.run(document, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa"] } }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.slice(0, 3).map((n) => n.target.join(" ")) })))`,
  )) as { id: string; impact: string; nodes: string[] }[];
  const serious = result.filter((v) => v.impact === "serious" || v.impact === "critical");
  expect(serious, `${view}: ${JSON.stringify(serious)}`).toEqual([]);
}

export async function shot(p: Page, name: string): Promise<void> {
  if (!SHOTS) return;
  await mkdir(SHOTS, { recursive: true });
  await p.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: false });
}

/** A call of the gateway's API with the operator token; non-2xx answers throw with the body. */
export async function gatewayApi<T>(method: "GET" | "POST", route: string, body?: unknown): Promise<T> {
  const res = await fetch(`${gatewayUrl}${route}`, {
    method,
    headers: {
      Authorization: `Bearer ${operatorToken}`,
      ...(body === undefined ? {} : { "Content-Type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${route} answered ${res.status}: ${text}`);
  return JSON.parse(text) as T;
}

export interface FakeTask {
  id: string;
  title: string;
  /** The task body, with its `overseer-fake` script block. */
  body: string;
  scope?: string[];
}

/**
 * Creates a project of the test's own through `POST /api/v1/projects` (a fresh bare repository,
 * the fake harness as the agent, as the demo's projects), adds `tasks` through the task route,
 * and starts it when `start` is set; the demo cluster's coordinator and workers run it.
 * `runnerConfig` adds to the runner config (e.g. `agent`, so the worker reads the output as that CLI's).
 */
export async function createFakeProject(
  id: string,
  tasks: FakeTask[],
  start: boolean,
  runnerConfig: Record<string, unknown> = {},
): Promise<void> {
  const repo = path.join(inject("dataDir"), "browser-repos", `${id}.git`);
  await mkdir(path.dirname(repo), { recursive: true });
  await initBareRepo(repo, { initialFiles: { "README.md": `# ${id}\n` }, branch: "main" });
  await gatewayApi("POST", "/api/v1/projects", {
    id,
    repo,
    objective: `Browser test project ${id}.`,
    runner_config: {
      argv: [process.execPath, fakeHarnessPath()],
      timeout_seconds: 120,
      retry_backoff_seconds: 1,
      ...runnerConfig,
    },
  });
  for (const t of tasks) {
    await gatewayApi("POST", `/api/v1/projects/${id}/tasks`, {
      ...t,
      scope: t.scope ?? ["docs/**", "src/**"],
    });
  }
  if (start) await gatewayApi("POST", `/api/v1/projects/${id}/start`, {});
}

/** Polls a task through the API until its status is one of `statuses`. */
export async function waitForTaskStatus(
  project: string,
  task: string,
  statuses: string[],
  timeoutMs = 200_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = "";
  while (Date.now() < deadline) {
    last = (await gatewayApi<{ status: string }>("GET", `/api/v1/projects/${project}/tasks/${task}`)).status;
    if (statuses.includes(last)) return;
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`task ${project}/${task} is ${last}, not ${statuses.join(" or ")}, after ${timeoutMs} ms`);
}
