import { defineConfig } from "vitest/config";

/**
 * `npm run test:images`: per-project run images end to end: a local registry (Debian's
 * docker-registry on loopback) serving images built from the host's Debian binaries, the
 * worker's image cache (skopeo, umoci) and projects whose tests need the image's toolchain, with
 * a real coordinator, worker, bwrap, git, Postgres and Redis. Runs after `npm test` in CI; skips
 * with the reason printed where the tools are missing.
 */
export default defineConfig({
  test: {
    include: ["test/images/**/*.e2e.ts"],
    exclude: ["**/node_modules/**"],
    testTimeout: 240_000,
    hookTimeout: 300_000,
    pool: "forks",
    maxWorkers: 1,
    globalSetup: ["test/support/leak-check.ts"],
  },
});
