/**
 * The layering of the repository, checked by `npm run check:boundaries` (part of `npm test`).
 * docs/architecture.md draws it and each package's README says what it must not import;
 * test/docs/layering.test.ts reads the rules below and holds both to them.
 *
 *   MAY_IMPORT           one row a package: the only workspaces its src may import
 *   packages/domain      pure: imports nothing (no node: modules, no npm packages)
 *   packages/process     node built-ins only
 *   packages/event-stream eventsource-parser only, no node: modules (the web app bundles it)
 *   run-contract, api-contract  the wire contracts: zod only (run-contract: and node:net)
 *   packages/transcript  zod only, no node: modules (the web app bundles it)
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

/**
 * The layers of the house, bottom up: the workspaces each package's src may import, nothing else
 * (rule `layer-<package>`). A package imports only from its own layer or the ones below; the
 * programs on top (services, cli, test-support) may use any package (rules further down).
 *
 *   leaves         domain, process, input-errors, event-stream, transcript
 *   contracts      run-contract, api-contract
 *   configuration  task-files, project-config, settings, runtime
 *   execution      git, sandbox, forge, intake, notify, telemetry
 *   orchestration  db, queue, harness, transitions
 */
const MAY_IMPORT = {
  domain: [],
  process: [],
  "input-errors": [],
  "event-stream": [],
  transcript: [],
  "run-contract": ["input-errors", "transcript"],
  "api-contract": ["domain", "transcript"],
  "task-files": ["domain", "input-errors"],
  "project-config": ["input-errors", "run-contract", "task-files"],
  settings: ["input-errors", "process", "run-contract", "runtime", "task-files"],
  runtime: ["input-errors"],
  git: ["domain", "process"],
  sandbox: ["input-errors", "process", "run-contract"],
  forge: [],
  intake: ["forge", "input-errors"],
  notify: ["api-contract", "input-errors"],
  telemetry: ["run-contract", "transcript"],
  db: ["domain"],
  queue: ["input-errors", "run-contract", "settings"],
  harness: ["domain", "process", "project-config", "run-contract", "runtime", "task-files"],
  transitions: ["db", "domain", "queue", "runtime"],
};

/** One rule a row of MAY_IMPORT: the package's src reaches no workspace outside its row. */
const LAYER_RULES = Object.fromEntries(
  Object.entries(MAY_IMPORT).map(([name, allowed]) => [
    `layer-${name}`,
    [
      `^packages/${name}/src/`,
      { path: "^(packages|services)/", pathNot: `^packages/(${[name, ...allowed].join("|")})/` },
    ],
  ]),
);
const LAYER_WHY = Object.fromEntries(
  Object.entries(MAY_IMPORT).map(([name, allowed]) => [
    `layer-${name}`,
    `packages/${name} may import ${allowed.length === 0 ? "no other workspace" : allowed.join(", ")} (its row of MAY_IMPORT): move the shared code down a layer, or change the row and docs/architecture.md together.`,
  ]),
);

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
    { pathNot: ["^packages/process/src/", "node_modules/zod/"], dependencyTypesNot: ["core"] },
  ],
  ...LAYER_RULES,
  "api-contract-needs-only-zod": [
    "^packages/api-contract/src/",
    { dependencyTypes: THIRD_PARTY, pathNot: "node_modules/(zod|@asteasolutions/zod-to-openapi)/" },
  ],
  "event-stream-needs-only-its-parser": [
    "^packages/event-stream/src/",
    { dependencyTypes: THIRD_PARTY, pathNot: "node_modules/eventsource-parser/" },
  ],
  "transcript-needs-only-zod": [
    "^packages/transcript/src/",
    { dependencyTypes: THIRD_PARTY, pathNot: "node_modules/zod/" },
  ],
  "run-contract-needs-only-zod": [
    "^packages/run-contract/src/",
    { dependencyTypes: THIRD_PARTY, pathNot: ["node_modules/zod/", "^(node:)?net$"] },
  ],
  "cli-never-imports-the-gateway": ["^packages/cli/src/", "^services/gateway/"],
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
  "process-is-a-leaf":
    "packages/process spawns and watches processes with node built-ins only, and zod for the launch prelude a spawn request carries.",
  ...LAYER_WHY,
  "api-contract-needs-only-zod":
    "The contract's only third-party code is zod and its OpenAPI extension (the CLI loads it).",
  "event-stream-needs-only-its-parser":
    "The web app bundles packages/event-stream, the one SSE client of the web app, the CLI and the tests: its only outside code is eventsource-parser (no Node built-ins, no other package).",
  "transcript-needs-only-zod":
    "packages/transcript is pure (zod only, no Node built-ins): the worker, the gateway, the CLI and the web app all load it.",
  "run-contract-needs-only-zod":
    "The run contract is schemas only: zod, and node:net to tell IP literals apart; no I/O, so every side (worker, coordinator, harness, sandbox) can load it.",
  "cli-never-imports-the-gateway":
    "The CLI reaches the gateway over HTTP with the shared contract (@overseer/api-contract), never its code. (Its tests may start a gateway as a fixture.)",
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
