import { defineConfig } from "vitest/config";

const UNIT = ["packages/*/test/**/*.test.ts", "services/*/test/**/*.test.ts"];
const END_TO_END = ["test/**/*.test.ts"];

export default defineConfig({
  test: {
    exclude: ["**/node_modules/**"],
    // A bound on a hung test, not a speed target: the end-to-end tests start service processes
    // and real sandboxes, which on a busy two-core machine takes tens of seconds. Speed is
    // measured in npm run bench, never asserted here.
    testTimeout: 120_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Fails the run when a test leaves a process, a scratch database or a Redis key behind.
    globalSetup: ["test/support/leak-check.ts"],
    maxWorkers: 2,
    projects: [
      // The packages' and services' own tests share a worker's module graph (no per-file
      // isolation): importing the workspace again for each of ~150 files was half their time.
      // They keep no module-level state between files (scratch databases and key prefixes are
      // per file); an end-to-end file, which changes process-wide settings, stays isolated.
      // They run after the end-to-end files (groupOrder), three at a time: many of them wait on
      // sockets, child processes and timers, and with two a 2-core machine sat idle a third of
      // their phase (npm test 426 s with two, 378 s with three, same machine and commit).
      {
        extends: true,
        test: { name: "unit", include: UNIT, isolate: false, maxWorkers: 3, sequence: { groupOrder: 1 } },
      },
      { extends: true, test: { name: "e2e", include: END_TO_END } },
      // The web app's component tests: its views rendered to HTML with Preact's JSX runtime.
      {
        extends: true,
        oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
        test: { name: "web", include: ["apps/*/test/**/*.test.ts"] },
      },
    ],
    reporters: ["default", "./test/support/coverage-by-workspace-reporter.ts"],
    // On in `npm test` (`vitest run --coverage`), off for a targeted `npx vitest run PATH`.
    // Counts the code the test processes load; services the end-to-end tests start as child
    // processes are not instrumented, so their share shows only through in-process tests.
    coverage: {
      provider: "v8",
      include: ["packages/*/src/**/*.ts", "services/*/src/**/*.ts"],
      reporter: ["json-summary"],
      reportsDirectory: "coverage",
    },
  },
});
