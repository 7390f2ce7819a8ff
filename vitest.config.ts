import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["packages/*/test/**/*.test.ts", "services/*/test/**/*.test.ts", "test/**/*.test.ts"],
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
