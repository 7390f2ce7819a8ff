import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

export type ServiceRole = "coordinator" | "gateway" | "worker";

/** TypeScript entry points, relative to the repository root (source checkout). */
const SOURCE_ENTRIES: Record<ServiceRole, string> = {
  coordinator: "services/coordinator/src/coordinator-main.ts",
  gateway: "services/gateway/src/gateway-main.ts",
  worker: "services/worker/src/worker-main.ts",
};

export interface ServiceEntries {
  /** `built` beside the production bundle (`dist/<role>.js`), `source` through the running loader (tsx). */
  readonly mode: "built" | "source";
  /** Node arguments that start `role`: the CLI's own loader flags (tsx, source maps) and the entry file. */
  args(role: ServiceRole): string[];
}

/**
 * How `overseer up` starts each service: from the production build when the CLI runs as
 * `dist/overseer.js` (the services' bundles sit beside it), else from the TypeScript sources
 * with the loader the CLI itself was started with (`npm run overseer` runs it under tsx).
 */
export function serviceEntries(moduleUrl: string = import.meta.url): ServiceEntries {
  const here = path.dirname(fileURLToPath(moduleUrl));
  const loaderFlags = process.execArgv.filter((flag) => !flag.startsWith("--inspect"));
  if (existsSync(path.join(here, "coordinator.js"))) {
    return { mode: "built", args: (role) => [...loaderFlags, path.join(here, `${role}.js`)] };
  }
  const root = path.resolve(here, "../../../..");
  return { mode: "source", args: (role) => [...loaderFlags, path.join(root, SOURCE_ENTRIES[role])] };
}
