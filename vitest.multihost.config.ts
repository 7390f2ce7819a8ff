import { defineConfig } from "vitest/config";

/**
 * `npm run test:multihost`: Overseer across several hosts and in Redis's distributed forms. Workers
 * on hosts of their own (Linux network namespaces joined by veth links, made by the test; needs
 * root with CAP_SYS_ADMIN and `ip`), network partitions, and a Redis Cluster and a Sentinel group
 * of real `redis-server` processes losing their primary with runs in flight. Runs after `npm test`
 * in CI. One file at a time: the partitions and failovers are timed against leases and locks.
 */
export default defineConfig({
  test: {
    include: ["test/multihost/**/*.e2e.ts"],
    exclude: ["**/node_modules/**"],
    testTimeout: 240_000,
    hookTimeout: 120_000,
    pool: "forks",
    maxWorkers: 1,
    globalSetup: ["test/support/leak-check.ts"],
  },
});
