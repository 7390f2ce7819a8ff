import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["packages/*/test/**/*.test.ts", "services/*/test/**/*.test.ts", "test/**/*.test.ts"],
    exclude: ["**/node_modules/**"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Fails the run when a test leaves a process, a scratch database or a Redis key behind.
    globalSetup: ["test/support/leak-check.ts"],
    maxWorkers: 2,
  },
});
