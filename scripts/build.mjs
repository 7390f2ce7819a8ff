#!/usr/bin/env node
// `npm run build`: the production build. Each service and the CLI become one ES module under
// dist/ that runs with plain `node` (no tsx, no TypeScript at run time):
//
//   dist/coordinator.js   services/coordinator/src/coordinator-main.ts
//   dist/gateway.js       services/gateway/src/gateway-main.ts
//   dist/worker.js        services/worker/src/worker-main.ts
//   dist/overseer.js      packages/cli/src/bin.ts (the `overseer` CLI, executable, `#!/usr/bin/env node`)
//   dist/healthcheck.js   packages/cli/src/healthcheck-main.ts (container liveness probe)
//   dist/bin/             overseer-agent and the fake harness (bound into every sandboxed run)
//   dist/process-spawner.pl, .mjs  the small process the worker and gateway start git through
//                         (packages/process/bin/, Perl, or plain Node ESM where there is no
//                         perl; found beside the bundle)
//   dist/web/             the built operator web app (apps/web/dist), served by the gateway
//   dist/package.json     the installable CLI package: `npm install -g ./dist` puts `overseer` on
//                         PATH (a link to this dir, so a rebuild updates it)
//
// The workspace packages (@overseer/*) are compiled into each file; every npm dependency stays
// an import resolved from node_modules at run time (`npm ci --omit=dev` is enough to run them).
// Files the code finds on disk at run time sit next to the bundles: the harness looks for
// `bin/` beside its module (packages/harness/src/bundled-paths.ts), the gateway for `web/`
// (services/gateway/src/views/web-assets.ts). Database migrations are compiled in.
//
// Options: --out-dir DIR (default dist), --no-web (skip copying the web app, for quick tests).
import { chmod, cp, mkdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { build } from "esbuild";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

/** Output file (without .js) → TypeScript entry point. */
const ENTRIES = {
  coordinator: "services/coordinator/src/coordinator-main.ts",
  gateway: "services/gateway/src/gateway-main.ts",
  worker: "services/worker/src/worker-main.ts",
  overseer: "packages/cli/src/bin.ts",
  healthcheck: "packages/cli/src/healthcheck-main.ts",
};

const HARNESS_BIN = ["overseer-agent", "fake-harness.mjs"];

/** Plain-JS entries the bundles start as child processes, copied beside them (not bound into runs). */
const SIDE_ENTRIES = {
  "process-spawner.mjs": "packages/process/bin/process-spawner.mjs",
  "process-spawner.pl": "packages/process/bin/process-spawner.pl",
};

/** Bare imports other than the workspace's own packages stay external (resolved from node_modules). */
const externalDependencies = {
  name: "external-dependencies",
  setup(pluginBuild) {
    pluginBuild.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith("@overseer/") || args.path.startsWith("node:")) return undefined;
      return { path: args.path, external: true };
    });
  },
};

/**
 * dist/package.json: what `npm install -g ./dist` (or `npm link` inside dist/) installs: the
 * `overseer` bin. It has no dependencies of its own: the bundles resolve theirs from the
 * node_modules above dist/ (npm links a local directory, it does not copy it).
 */
function cliPackage(manifest) {
  return {
    name: manifest.name,
    version: manifest.version,
    description: manifest.description,
    private: true,
    type: "module",
    engines: manifest.engines,
    bin: { overseer: "overseer.js" },
  };
}

async function exists(path) {
  return stat(path).then(
    () => true,
    () => false,
  );
}

async function main() {
  const { values } = parseArgs({
    options: {
      "out-dir": { type: "string", default: "dist" },
      "no-web": { type: "boolean", default: false },
    },
  });
  const outDir = resolve(ROOT, values["out-dir"]);
  const started = performance.now();
  await rm(outDir, { recursive: true, force: true });
  await mkdir(outDir, { recursive: true });

  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: Object.fromEntries(Object.entries(ENTRIES).map(([name, file]) => [name, join(ROOT, file)])),
    outdir: outDir,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20.5",
    sourcemap: "linked",
    plugins: [externalDependencies],
    logLevel: "warning",
    metafile: true,
    banner: { js: "// Built by scripts/build.mjs from the TypeScript sources; do not edit." },
  });

  const binDir = join(outDir, "bin");
  await mkdir(binDir, { recursive: true });
  for (const name of HARNESS_BIN) {
    const target = join(binDir, name);
    await cp(join(ROOT, "packages/harness/bin", name), target);
    await chmod(target, 0o755);
  }

  for (const [name, source] of Object.entries(SIDE_ENTRIES)) await cp(join(ROOT, source), join(outDir, name));

  const manifest = JSON.parse(await readFile(join(ROOT, "package.json"), "utf8"));
  await chmod(join(outDir, "overseer.js"), 0o755);
  await writeFile(join(outDir, "package.json"), `${JSON.stringify(cliPackage(manifest), null, 2)}\n`);

  if (!values["no-web"]) {
    const webDist = join(ROOT, "apps/web/dist");
    if (!(await exists(join(webDist, "index.html")))) {
      process.stderr.write("build: apps/web/dist is missing; run `npm run build:web` first\n");
      process.exit(1);
    }
    await cp(webDist, join(outDir, "web"), { recursive: true });
  }

  const outputs = Object.entries(result.metafile.outputs)
    .filter(([file]) => file.endsWith(".js"))
    .map(([file, info]) => `${file} ${(info.bytes / 1024).toFixed(0)} KiB`);
  process.stdout.write(
    `build: ${manifest.name} ${manifest.version} → ${outDir} in ${Math.round(performance.now() - started)} ms\n` +
      outputs.map((line) => `  ${line}\n`).join(""),
  );
}

await main();
