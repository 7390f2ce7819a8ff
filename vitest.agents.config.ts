import { defineConfig } from "vitest/config";

/** `npm run test:agents`: the real agent CLIs (installed into a cache outside the repo) against a mock model. */
export default defineConfig({
  test: {
    include: ["test/agents/**/*.e2e.ts"],
    exclude: ["**/node_modules/**"],
    testTimeout: 240_000,
    hookTimeout: 900_000,
    pool: "forks",
    maxWorkers: 1,
    globalSetup: ["test/support/leak-check.ts"],
  },
});
