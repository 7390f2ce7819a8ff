/**
 * The worker's run fence opened ahead of a landing (run-fence.ts `open` with the approved
 * head), against real Postgres: its read and row locks are taken as it opens, so a cancel
 * waits for the landing push and is then refused; it refuses a head other than the one
 * recorded at the submit before anything is pushed; and once closed unused (as before a
 * landing's check command), the push reads the run again and a cancel that came meanwhile
 * stops it.
 */
import { createScratchDatabase, getRun, getTask, RunNotLiveError, type ScratchDatabase } from "@overseer/db";
import type { PushBranchResult } from "@overseer/git";
import {
  cancelTask,
  runJobFixture,
  SUBMITTED_HEAD,
  tasksInReview,
  waitForLockWait,
  waitForRowLocksHeld,
} from "@overseer/test-support";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresRunFence } from "../src/run-fence.ts";

let scratch: ScratchDatabase;
beforeAll(async () => {
  scratch = await createScratchDatabase();
});
afterAll(async () => {
  await scratch?.drop();
});

const HEAD = SUBMITTED_HEAD;
const inReview = async (projectId: string) => (await tasksInReview(scratch.db, projectId))[0] as string;
const cancel = (projectId: string) => cancelTask(scratch.db, projectId);

/** A push that counts its calls and goes through. */
function countedPush(): { push: () => Promise<PushBranchResult>; calls: () => number } {
  let calls = 0;
  return {
    push: async () => {
      calls += 1;
      return { ok: true };
    },
    calls: () => calls,
  };
}

describe("worker run fence opened ahead of a landing", () => {
  it("holds the run from its opening: a cancel waits for the landing push, then is refused", async () => {
    const runId = await inReview("wfence-land");
    const fence = postgresRunFence(scratch.db).open(runJobFixture({ runId, projectId: "wfence-land" }), {
      sourceSha: HEAD,
    });
    // The landing integrates meanwhile; a cancel arriving once the fence holds its row locks
    // (taken in the background: open does not wait for them) waits for them.
    await waitForRowLocksHeld(scratch.db, "tasks");
    let cancelSettled = false;
    const cancelled = cancel("wfence-land").finally(() => {
      cancelSettled = true;
    });
    cancelled.catch(() => undefined);
    await waitForLockWait(scratch.db, "tasks");
    expect(cancelSettled).toBe(false);
    const { push, calls } = countedPush();
    expect(await fence.guard(push)).toEqual({ ok: true });
    await fence.close();
    expect(calls()).toBe(1);
    // The landing was recorded with the push: the cancel that waited is refused.
    await expect(cancelled).rejects.toThrow(/already landed|concurrent transition/);
    expect((await getRun(scratch.db, runId))?.transition).toBe("approve");
    expect((await getTask(scratch.db, "wfence-land", "S00-001"))?.status).toBe("review");
  });

  it("refuses a head other than the submitted one before anything is pushed", async () => {
    const runId = await inReview("wfence-head");
    const fence = postgresRunFence(scratch.db).open(runJobFixture({ runId, projectId: "wfence-head" }), {
      sourceSha: "b".repeat(40),
    });
    const { push, calls } = countedPush();
    await expect(fence.guard(push)).rejects.toThrow(/not the submitted head Postgres recorded/);
    await fence.close();
    expect(calls()).toBe(0);
    expect((await getRun(scratch.db, runId))?.transition).toBeNull();
  });

  it("closed unused (a check command runs), it holds nothing; the push reads the run again", async () => {
    const runId = await inReview("wfence-closed");
    const fence = postgresRunFence(scratch.db).open(runJobFixture({ runId, projectId: "wfence-closed" }), {
      sourceSha: HEAD,
    });
    await fence.close();
    // Nothing held: the cancel commits at once, and the push after it is refused unmade.
    await cancel("wfence-closed");
    const { push, calls } = countedPush();
    const pushed = fence.guard(push);
    await expect(pushed).rejects.toBeInstanceOf(RunNotLiveError);
    await expect(pushed).rejects.toThrow(/the run is cancelled/);
    expect(calls()).toBe(0);
    expect((await getRun(scratch.db, runId))?.status).toBe("cancelled");
  });

  it("a second push (after a lost race) runs under a fence of its own, read then", async () => {
    const runId = await inReview("wfence-twice");
    const fence = postgresRunFence(scratch.db).open(runJobFixture({ runId, projectId: "wfence-twice" }), {
      sourceSha: HEAD,
    });
    const lost = async (): Promise<PushBranchResult> => ({ ok: false, reason: "stale", actualSha: HEAD });
    expect(await fence.guard(lost)).toEqual({ ok: false, reason: "stale", actualSha: HEAD });
    // The first fence committed with the lost push: a landing not recorded, nothing held.
    expect((await getRun(scratch.db, runId))?.transition).toBeNull();
    const { push, calls } = countedPush();
    expect(await fence.guard(push)).toEqual({ ok: true });
    await fence.close();
    expect(calls()).toBe(1);
    expect((await getRun(scratch.db, runId))?.transition).toBe("approve");
  });
});
