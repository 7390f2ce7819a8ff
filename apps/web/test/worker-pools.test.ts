import { ProjectStatusSchema, WorkerSchema } from "@overseer/api-contract";
import { h } from "preact";
import { renderToString } from "preact-render-to-string";
import { describe, expect, it } from "vitest";
import { PoolWaitingNotice, WorkerPools } from "../src/components/worker-pools.tsx";

/** The pool fields of a status as the gateway answers them (checked against the contract's schema). */
function poolFields(pool: string, pool_waiting: string | null) {
  return ProjectStatusSchema.pick({ pool: true, pool_waiting: true }).parse({ pool, pool_waiting });
}

const text = (html: string) =>
  html
    .replace(/<[^>]+>/g, "")
    .replace(/\s+/g, " ")
    .trim();

describe("worker pools in the dashboard", () => {
  it("says a project waits for a worker in its pool, with the fix", () => {
    const html = renderToString(
      h(PoolWaitingNotice, { status: poolFields("jdk", "waiting for a worker in pool jdk") }),
    );
    expect(html).toContain('data-testid="pool-waiting"');
    expect(text(html)).toBe(
      "waiting for a worker in pool jdk: its queued runs start once a worker with OVERSEER_WORKER_POOLS naming it is live (see Workers).",
    );
  });

  it("shows nothing while a live worker serves the pool", () => {
    expect(renderToString(h(PoolWaitingNotice, { status: poolFields("jdk", null) }))).toBe("");
  });

  it("lists a worker's pools and marks a draining one", () => {
    const worker = WorkerSchema.pick({ pools: true, draining: true });
    expect(
      text(
        renderToString(
          h(WorkerPools, { worker: worker.parse({ pools: ["default", "jdk"], draining: false }) }),
        ),
      ),
    ).toBe("default, jdk");
    expect(
      text(renderToString(h(WorkerPools, { worker: worker.parse({ pools: ["gpu"], draining: true }) }))),
    ).toBe("gpu draining");
  });
});
