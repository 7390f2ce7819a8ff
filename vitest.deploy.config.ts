import { defineConfig } from "vitest/config";

/**
 * `npm run test:deploy`: scripts/test-deploy.sh builds the image, brings the compose cluster up
 * and then runs this suite against it (test/deploy/). Not part of `npm test`: it needs root,
 * Docker and minutes. No leak check: the script removes every container, volume and file.
 */
export default defineConfig({
  test: {
    include: ["test/deploy/**/*.e2e.ts"],
    exclude: ["**/node_modules/**"],
    testTimeout: 900_000,
    hookTimeout: 120_000,
    pool: "forks",
    maxWorkers: 1,
  },
});
