/**
 * `npm run bench:web`: the operator web app's first-load size and the Fleet view's first
 * render with a large fleet (default 200 projects, 10,000 tasks), in Debian's Chromium
 * through playwright-core against a gateway process over a scratch database. JSON on stdout
 * and in bench-results/web-<timestamp>.json.
 *
 *   --projects N (200)  --tasks-per-project N (50)  --runs N (3 measured page loads)
 */
import { randomBytes } from "node:crypto";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { gzipSync } from "node:zlib";
import { createApiToken, createScratchDatabase } from "@overseer/db";
import { createTestRedis, deleteRedisKeys, testRedisUrl } from "@overseer/test-support";
import { chromium } from "playwright-core";
import { type GatewayProcess, startGatewayProcess } from "../support/gateway-process.ts";
import { REPO_ROOT } from "../support/service-process.ts";
import { claimNext, seedActiveProject } from "./bench-seed.ts";

const { values: args } = parseArgs({
  options: {
    projects: { type: "string", default: "200" },
    "tasks-per-project": { type: "string", default: "50" },
    runs: { type: "string", default: "3" },
  },
});
const projects = Number(args.projects);
const perProject = Number(args["tasks-per-project"]);
const loads = Number(args.runs);

/** Gzip size of everything index.html loads before the first render (its scripts and styles). */
async function bundleSize(): Promise<Record<string, number>> {
  const dist = path.join(REPO_ROOT, "apps/web/dist");
  const html = await readFile(path.join(dist, "index.html"), "utf8");
  const files = [...html.matchAll(/(?:src|href)="\/(assets\/[^"]+)"/g)].map((m) => m[1] ?? "");
  let raw = Buffer.byteLength(html);
  let gzip = gzipSync(html).byteLength;
  for (const f of files) {
    const body = await readFile(path.join(dist, f));
    raw += body.byteLength;
    gzip += gzipSync(body).byteLength;
  }
  return { files: files.length + 1, raw_bytes: raw, gzip_bytes: gzip };
}

const scratch = await createScratchDatabase(undefined, "overseer_webbench");
const prefix = `webbench-${randomBytes(4).toString("hex")}`;
let gateway: GatewayProcess | null = null;
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"],
});
try {
  const seedStart = performance.now();
  for (let p = 0; p < projects; p++) {
    const id = `bench-${String(p).padStart(3, "0")}`;
    await seedActiveProject(scratch.db, id, perProject, { objective: `Bench project ${p}` });
    if (p % 4 === 0) await claimNext(scratch.db, id);
  }
  const seedMs = performance.now() - seedStart;
  const { token } = await createApiToken(scratch.db, { name: "webbench", scope: "read" });
  gateway = await startGatewayProcess(
    {
      DATABASE_URL: scratch.url,
      REDIS_URL: testRedisUrl(),
      OVERSEER_QUEUE_PREFIX: prefix,
      LOG_LEVEL: "info",
    },
    60_000,
  );
  const url = gateway.url;

  const apiTimes: number[] = [];
  for (let i = 0; i < loads; i++) {
    const t = performance.now();
    const res = await fetch(`${url}/api/v1/fleet`, { headers: { Authorization: `Bearer ${token}` } });
    await res.json();
    apiTimes.push(performance.now() - t);
  }

  const renders: { first_row_ms: number; dom_rows: number }[] = [];
  for (let i = 0; i < loads; i++) {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    await context.addInitScript(`sessionStorage.setItem("overseer.token", ${JSON.stringify(token)})`);
    const page = await context.newPage();
    await page.goto(`${url}/#/`);
    await page.locator('[data-testid^="fleet-bench-"]').first().waitFor({ timeout: 120_000 });
    const firstRow = (await page.evaluate("performance.now()")) as number;
    const rows = await page.locator('[data-testid^="fleet-bench-"]').count();
    renders.push({ first_row_ms: Math.round(firstRow), dom_rows: rows });
    await context.close();
  }
  const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)] ?? 0;
  const result = {
    bench: "web",
    conditions: {
      cpus: os.cpus().length,
      node: process.version,
      projects,
      tasks: projects * perProject,
      viewport: "1280x800",
      browser: browser.version(),
      note: "Chromium, the gateway process, Postgres and Redis share the machine; first_row_ms is from navigation start to the first Fleet row in the DOM (app load, session check, /api/v1/fleet, render)",
      seed_ms: Math.round(seedMs),
    },
    bundle_first_load: await bundleSize(),
    fleet_api_ms: { median: Math.round(median(apiTimes)), all: apiTimes.map(Math.round) },
    fleet_first_render_ms: { median: median(renders.map((r) => r.first_row_ms)), all: renders },
  };
  const json = JSON.stringify(result, null, 2);
  process.stdout.write(`${json}\n`);
  const dir = path.join(REPO_ROOT, "bench-results");
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, `web-${new Date().toISOString().replace(/[:.]/g, "-")}.json`), `${json}\n`);
} finally {
  await browser.close();
  if (gateway) await gateway.service.kill("SIGTERM");
  const redis = createTestRedis();
  await deleteRedisKeys(redis, prefix);
  redis.disconnect();
  await scratch.drop();
}
