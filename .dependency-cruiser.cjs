/**
 * The layering of the repository, checked by `npm run check:boundaries` (part of `npm test`).
 * docs/architecture.md explains the layers; each package's README says what it must not import.
 *
 *   packages/domain      pure: imports nothing but itself (no node: modules, no npm packages)
 *   packages/process     leaf: node built-ins only
 *   packages/input-errors leaf: zod only (the one zod-issue formatter, below config and sandbox)
 *   config, git, sandbox low-level: never import db, queue, harness, transitions or cli
 *   packages/api-contract the HTTP API's schemas: domain and zod only (no Hono, no service)
 *   packages/cli         talks to the gateway over HTTP only: never imports it
 *   packages/*           never import services/*
 *   services/*           never import another service
 *   across workspaces    only through what the other side's package.json "exports" offers
 *   everywhere           no import cycles, no import of test code from src
 */
const { readdirSync, readFileSync, existsSync } = require("node:fs");
const { join } = require("node:path");

/** The file paths of an exports map, conditional entries included. */
function leaves(value) {
  if (typeof value === "string") return [value];
  return Object.values(value ?? {}).flatMap(leaves);
}

/** Every file a workspace offers through its package.json "exports" (src/index.ts, declared subpaths). */
function exportedFiles() {
  const files = [];
  for (const group of ["packages", "services"]) {
    for (const name of readdirSync(join(__dirname, group))) {
      const manifest = join(__dirname, group, name, "package.json");
      if (!existsSync(manifest)) continue;
      const exportsMap = JSON.parse(readFileSync(manifest, "utf8")).exports ?? {};
      for (const target of leaves(exportsMap)) {
        files.push(`^${group}/${name}/${target.replace(/^\.\//, "").replace(/\./g, "\\.")}$`);
      }
    }
  }
  return files;
}

const LOW_LEVEL = "^packages/(domain|process|input-errors|config|git|sandbox|api-contract)/";
const ORCHESTRATION = "^packages/(db|queue|harness|transitions|cli)/";

module.exports = {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment: "An import cycle: split the shared part into its own module.",
      from: {},
      to: { circular: true },
    },
    {
      name: "packages-never-import-services",
      severity: "error",
      comment:
        "Packages are libraries; services compose them. Move the shared code into a package. (A package's tests may start a service as a fixture, declared in its devDependencies.)",
      from: { path: "^packages/[^/]+/src/" },
      to: { path: "^services/" },
    },
    {
      name: "services-never-import-services",
      severity: "error",
      comment: "A service imports packages only; code two services share belongs in a package.",
      from: { path: "^services/([^/]+)/" },
      to: { path: "^services/", pathNot: "^services/$1/" },
    },
    {
      name: "domain-is-pure",
      severity: "error",
      comment: "packages/domain is the pure state machine: commands in, state and events out; no I/O.",
      from: { path: "^packages/domain/src/" },
      to: { pathNot: "^packages/domain/src/" },
    },
    {
      name: "process-is-a-leaf",
      severity: "error",
      comment: "packages/process answers liveness questions with node built-ins only.",
      from: { path: "^packages/process/src/" },
      to: { pathNot: "^packages/process/src/", dependencyTypesNot: ["core"] },
    },
    {
      name: "input-errors-is-a-leaf",
      severity: "error",
      comment:
        "packages/input-errors holds the one zod-issue formatter that config, sandbox and every boundary use: it imports no other workspace.",
      from: { path: "^packages/input-errors/src/" },
      to: { path: "^(packages|services)/", pathNot: "^packages/input-errors/src/" },
    },
    {
      name: "api-contract-is-schemas-only",
      severity: "error",
      comment:
        "packages/api-contract is the HTTP API's zod schemas, shared by the gateway, the CLI and the web app: it imports domain and zod, never a service, Hono or I/O packages.",
      from: { path: "^packages/api-contract/src/" },
      to: { path: "^(packages|services)/", pathNot: "^packages/(api-contract|domain)/src/" },
    },
    {
      name: "api-contract-needs-only-zod",
      severity: "error",
      comment: "The contract's only third-party code is zod and its OpenAPI extension (the CLI loads it).",
      from: { path: "^packages/api-contract/src/" },
      to: {
        dependencyTypes: ["npm", "npm-dev", "npm-optional", "npm-peer", "npm-no-pkg", "npm-unknown", "core"],
        pathNot: "node_modules/(zod|@asteasolutions/zod-to-openapi)/",
      },
    },
    {
      name: "cli-never-imports-the-gateway",
      severity: "error",
      comment:
        "The CLI reaches the gateway over HTTP with the shared contract (@overseer/api-contract), never its code. (Its tests may start a gateway as a fixture.)",
      from: { path: "^packages/cli/src/" },
      to: { path: "^services/gateway/" },
    },
    {
      name: "low-level-never-imports-orchestration",
      severity: "error",
      comment:
        "config, git, sandbox (and domain, process) sit below db, queue, harness, transitions and cli.",
      from: { path: LOW_LEVEL },
      to: { path: ORCHESTRATION },
    },
    {
      name: "nothing-imports-the-cli",
      severity: "error",
      comment: "The CLI is a program at the top of the stack; share code through a package instead.",
      from: { path: "^(packages|services)/", pathNot: "^packages/cli/" },
      to: { path: "^packages/cli/" },
    },
    {
      name: "only-through-index",
      severity: "error",
      comment: "Another workspace is reached through its package name and exports map, never its internals.",
      from: { path: "^(packages|services)/([^/]+)/" },
      to: {
        path: "^(packages|services)/[^/]+/src/",
        pathNot: ["^$1/$2/", ...exportedFiles()],
      },
    },
    {
      name: "src-never-imports-tests",
      severity: "error",
      comment: "Production code must not depend on test code or fixtures.",
      from: { path: "^(packages|services)/[^/]+/src/" },
      to: { path: "^(packages|services)/[^/]+/test/" },
    },
    {
      name: "src-never-imports-test-support",
      severity: "error",
      comment: "packages/test-support holds fixtures for tests; production code never loads them.",
      from: { path: "^(packages|services)/[^/]+/src/", pathNot: "^packages/test-support/" },
      to: { path: "^packages/test-support/" },
    },
    {
      name: "not-to-unresolvable",
      severity: "error",
      comment: "An import that resolves to nothing: a missing file or an undeclared package.",
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: ["node_modules", "/dist/", "\\.d\\.ts$"] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      mainFields: ["module", "main", "types", "typings"],
      extensions: [".ts", ".mjs", ".js", ".cjs", ".d.ts", ".json"],
    },
    skipAnalysisNotInRules: true,
  },
};
