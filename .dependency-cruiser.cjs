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

const LOW_LEVEL =
  "^packages/(domain|process|input-errors|settings|task-files|project-config|runtime|git|sandbox|api-contract)/";
const ORCHESTRATION = "^packages/(db|queue|harness|transitions|cli)/";
/** Every kind of npm dependency (declared or not) and node built-ins. */
const THIRD_PARTY = ["npm", "npm-dev", "npm-optional", "npm-peer", "npm-no-pkg", "npm-unknown", "core"];

/**
 * The forbidden imports, one row a rule: name → [importing files, imported files]. Both are
 * dependency-cruiser conditions; a string stands for `{ path: string }`. Every rule is an error.
 */
const FORBIDDEN = {
  "no-circular": [{}, { circular: true }],
  "packages-never-import-services": ["^packages/[^/]+/src/", "^services/"],
  "services-never-import-services": ["^services/([^/]+)/", { path: "^services/", pathNot: "^services/$1/" }],
  "domain-is-pure": ["^packages/domain/src/", { pathNot: "^packages/domain/src/" }],
  "process-is-a-leaf": [
    "^packages/process/src/",
    { pathNot: "^packages/process/src/", dependencyTypesNot: ["core"] },
  ],
  "input-errors-is-a-leaf": [
    "^packages/input-errors/src/",
    { path: "^(packages|services)/", pathNot: "^packages/input-errors/src/" },
  ],
  "api-contract-is-schemas-only": [
    "^packages/api-contract/src/",
    { path: "^(packages|services)/", pathNot: "^packages/(api-contract|domain)/src/" },
  ],
  "api-contract-needs-only-zod": [
    "^packages/api-contract/src/",
    { dependencyTypes: THIRD_PARTY, pathNot: "node_modules/(zod|@asteasolutions/zod-to-openapi)/" },
  ],
  "cli-never-imports-the-gateway": ["^packages/cli/src/", "^services/gateway/"],
  "low-level-never-imports-orchestration": [LOW_LEVEL, ORCHESTRATION],
  "nothing-imports-the-cli": [{ path: "^(packages|services)/", pathNot: "^packages/cli/" }, "^packages/cli/"],
  "only-through-index": [
    "^(packages|services)/([^/]+)/",
    { path: "^(packages|services)/[^/]+/src/", pathNot: ["^$1/$2/", ...exportedFiles()] },
  ],
  "src-never-imports-tests": ["^(packages|services)/[^/]+/src/", "^(packages|services)/[^/]+/test/"],
  "src-never-imports-test-support": [
    { path: "^(packages|services)/[^/]+/src/", pathNot: "^packages/test-support/" },
    "^packages/test-support/",
  ],
  "not-to-unresolvable": [{}, { couldNotResolve: true }],
};

/** Why each rule exists: the message shown when it is broken. */
const WHY = {
  "no-circular": "An import cycle: split the shared part into its own module.",
  "packages-never-import-services":
    "Packages are libraries; services compose them. Move the shared code into a package. (A package's tests may start a service as a fixture, declared in its devDependencies.)",
  "services-never-import-services":
    "A service imports packages only; code two services share belongs in a package.",
  "domain-is-pure": "packages/domain is the pure state machine: commands in, state and events out; no I/O.",
  "process-is-a-leaf": "packages/process answers liveness questions with node built-ins only.",
  "input-errors-is-a-leaf":
    "packages/input-errors holds the one zod-issue formatter that config, sandbox and every boundary use: it imports no other workspace.",
  "api-contract-is-schemas-only":
    "packages/api-contract is the HTTP API's zod schemas, shared by the gateway, the CLI and the web app: it imports domain and zod, never a service, Hono or I/O packages.",
  "api-contract-needs-only-zod":
    "The contract's only third-party code is zod and its OpenAPI extension (the CLI loads it).",
  "cli-never-imports-the-gateway":
    "The CLI reaches the gateway over HTTP with the shared contract (@overseer/api-contract), never its code. (Its tests may start a gateway as a fixture.)",
  "low-level-never-imports-orchestration":
    "config, git, sandbox (and domain, process) sit below db, queue, harness, transitions and cli.",
  "nothing-imports-the-cli":
    "The CLI is a program at the top of the stack; share code through a package instead.",
  "only-through-index":
    "Another workspace is reached through its package name and exports map, never its internals.",
  "src-never-imports-tests": "Production code must not depend on test code or fixtures.",
  "src-never-imports-test-support":
    "packages/test-support holds fixtures for tests; production code never loads them.",
  "not-to-unresolvable": "An import that resolves to nothing: a missing file or an undeclared package.",
};

const condition = (value) => (typeof value === "string" ? { path: value } : value);

module.exports = {
  forbidden: Object.entries(FORBIDDEN).map(([name, [from, to]]) => ({
    name,
    severity: "error",
    comment: WHY[name],
    from: condition(from),
    to: condition(to),
  })),
  options: {
    doNotFollow: { path: "node_modules" },
    // Build output and declaration files of the repository's own code only: a pattern such as
    // "/dist/" or "\\.d\\.ts$" would also drop every npm package whose entry point lies in dist/
    // or resolves to its types (hono, @asteasolutions/zod-to-openapi…), and the rules about npm
    // imports (api-contract-needs-only-zod, domain-is-pure, process-is-a-leaf) would never see them.
    exclude: {
      path: [
        "^dist/",
        "^(packages|services|apps)/[^/]+/dist/",
        "^(packages|services|test|scripts)/.*\\.d\\.ts$",
      ],
    },
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
