/**
 * How the benchmarks start the coordinator, workers and gateway: by default from the production
 * build (scripts/build.mjs, what `npm run build` writes to dist/ and operators run with plain
 * `node dist/<service>.js`), built once per bench process into a scratch dir that is removed when
 * the process exits; with `--tsx` (bench-main.ts) the TypeScript entry points through tsx, as the
 * tests do. Through tsx a worker spends more CPU per run (its forks copy a larger heap, the
 * loader's hooks) than the build does, so a figure measured that way is not the operators'.
 */
import { rmSync } from "node:fs";
import { buildProduction, productionBuildDir } from "../support/production-build.ts";
import type { StartServiceOptions } from "../support/service-process.ts";

export type ServicesMode = "build" | "tsx";

let built: Promise<string> | null = null;

/** `startService` options for `mode`: the build's dir (built on first use) or none (tsx). */
export async function benchServices(mode: ServicesMode): Promise<StartServiceOptions> {
  if (mode === "tsx") return {};
  built ??= buildOnce();
  return { builtDir: await built };
}

/** What the JSON's `conditions` says about how the services ran. */
export function servicesCondition(mode: ServicesMode): string {
  return mode === "tsx"
    ? "TypeScript through tsx (node --import tsx services/*/src/*-main.ts)"
    : "production build (node dist/*.js, scripts/build.mjs --no-web)";
}

async function buildOnce(): Promise<string> {
  const dir = productionBuildDir();
  process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
  process.stderr.write(`[bench] services: production build into ${dir}\n`);
  await buildProduction(dir, { web: false });
  return dir;
}
