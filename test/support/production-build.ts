import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import path from "node:path";
import { promisify } from "node:util";
import { REPO_ROOT } from "./service-process.ts";

/**
 * A fresh output dir for `scripts/build.mjs` (what `npm run build` runs after the web app's
 * build), inside the repository so the bundles resolve their npm dependencies from its
 * node_modules as `dist/` does; a random name so parallel builds never share one.
 */
export function productionBuildDir(): string {
  return path.join(REPO_ROOT, "node_modules", ".cache", `overseer-build-${randomBytes(4).toString("hex")}`);
}

/**
 * Runs the production build into `outDir`; resolves with what it printed. `web: false` skips
 * copying the web app (`--no-web`: the services run without it, the gateway answers its API).
 */
export async function buildProduction(outDir: string, options: { web?: boolean } = {}): Promise<string> {
  const args = ["scripts/build.mjs", "--out-dir", outDir, ...(options.web === false ? ["--no-web"] : [])];
  const { stdout } = await promisify(execFile)(process.execPath, args, { cwd: REPO_ROOT });
  return stdout;
}
