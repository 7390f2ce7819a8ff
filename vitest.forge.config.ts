import { defineConfig } from "vitest/config";

/**
 * `npm run test:forge`: landing through pull requests end to end against the forge doubles
 * (GitHub, GitLab, Gitea) with a real coordinator, worker, bwrap, git, Postgres and Redis.
 * Runs after `npm test` in CI; each case drives a whole task through its forge loop.
 */
export default defineConfig({
  test: {
    include: ["test/forge/**/*.e2e.ts"],
    exclude: ["**/node_modules/**"],
    testTimeout: 240_000,
    hookTimeout: 120_000,
    pool: "forks",
    maxWorkers: 2,
    globalSetup: ["test/support/leak-check.ts"],
  },
});
