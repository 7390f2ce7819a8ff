import { defineConfig } from "vitest/config";

/**
 * `npm run test:browser`: the web app in Debian's Chromium (playwright-core, no browser
 * download) against the demo cluster started by `test/browser/demo-cluster-setup.ts`.
 */
export default defineConfig({
  test: {
    include: ["test/browser/**/*.browser-test.ts"],
    globalSetup: ["test/browser/demo-cluster-setup.ts"],
    testTimeout: 240_000,
    hookTimeout: 300_000,
    pool: "forks",
    maxWorkers: 1,
    fileParallelism: false,
  },
});
