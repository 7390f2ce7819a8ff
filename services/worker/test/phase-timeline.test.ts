/**
 * The run's phase timeline (run-context.ts PhaseClock) as a real worker records it, against real
 * git, Redis and bwrap: the phases a run reaches, in order, back to back from its creation to
 * the result, and nothing for the phases it skips.
 */
import type { RunPhase, RunResult } from "@overseer/run-contract";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PhaseClock } from "../src/run-context.ts";
import { WorkerRig } from "./support/worker-rig.ts";

const rig = new WorkerRig();
beforeAll(() => rig.setup());
afterAll(() => rig.teardown());

const names = (result: RunResult) => (result.timing.timeline ?? []).map((p) => p.name);

/** Each phase starts where the one before it ended (to the rounding of a tenth of a millisecond). */
function expectBackToBack(timeline: readonly RunPhase[]): void {
  for (let i = 1; i < timeline.length; i++) {
    const before = timeline[i - 1] as RunPhase;
    const phase = timeline[i] as RunPhase;
    expect(Math.abs(before.startedAt + before.durationMs - phase.startedAt), phase.name).toBeLessThan(0.25);
    expect(phase.durationMs, phase.name).toBeGreaterThanOrEqual(0);
  }
}

describe("phase timeline of a run", () => {
  it("a submit with both hooks: queue wait, checkout, sandbox, hooks, agent, scope check, commit, push, back to back", async () => {
    const createdAt = Date.now() - 1500;
    const job = rig.job("echo work > src/work.txt; echo Work | overseer-agent submit --message-file -", {
      taskId: "S09-001",
      createdAt,
      hooks: {
        setup: { argv: ["sh", "-c", "sleep 0.2"], timeoutMs: 30_000 },
        afterRun: { argv: ["sh", "-c", "true"], timeoutMs: 30_000 },
      },
    });
    const result = await rig.run(job);
    expect(result.outcome).toMatchObject({ kind: "transition", transition: { kind: "submit" } });
    const timeline = result.timing.timeline ?? [];
    expect(names(result).filter((n) => n !== "fetch")).toEqual([
      "queue_wait",
      "checkout",
      "sandbox",
      "setup_hook",
      "agent",
      "after_run_hook",
      "scope_check",
      "commit",
      "push",
    ]);
    expectBackToBack(timeline);
    // The queue wait starts at the run's creation, not at the enqueue.
    expect(timeline[0]).toMatchObject({ name: "queue_wait", startedAt: createdAt });
    expect(timeline[0]?.durationMs).toBeGreaterThanOrEqual(1500);
    const setup = timeline.find((p) => p.name === "setup_hook");
    expect(setup?.durationMs).toBeGreaterThanOrEqual(200);
    // The agent phase holds the harness: from before its spawn to after its exit.
    const agent = timeline.find((p) => p.name === "agent") as RunPhase;
    expect(agent.startedAt).toBeLessThanOrEqual(result.timing.spawnedAt as number);
    expect(agent.startedAt + agent.durationMs).toBeGreaterThanOrEqual(result.timing.exitedAt as number);
    // The phases end before the report; the per-phase totals agree with the timeline.
    const last = timeline.at(-1) as RunPhase;
    expect(last.startedAt + last.durationMs).toBeLessThanOrEqual(result.timing.reportedAt + 1);
    expect(result.timing.phases?.agent).toBe(agent.durationMs);
    expect(result.timing.phases).not.toHaveProperty("queue_wait");
  });

  it("an approve lands: its last phase is land, and a review commits nothing", async () => {
    const submit = await rig.run(
      rig.job("echo land > src/land.txt; echo Land | overseer-agent submit --message-file -", {
        taskId: "S09-002",
      }),
    );
    const review = await rig.run(rig.approveJob("S09-002", submit.branchHead, { executorAgentId: "other" }));
    expect(review.landedSha).toMatch(/^[0-9a-f]{40}$/);
    expect(names(review).filter((n) => n !== "fetch")).toEqual([
      "queue_wait",
      "checkout",
      "sandbox",
      "agent",
      "scope_check",
      "land",
    ]);
    expectBackToBack(review.timing.timeline ?? []);
  });

  it("a failing setup hook ends the timeline there: no agent, no git phases", async () => {
    const result = await rig.run(
      rig.job("echo never", {
        taskId: "S09-003",
        hooks: { setup: { argv: ["sh", "-c", "exit 3"], timeoutMs: 30_000 } },
      }),
    );
    expect(result.outcome).toMatchObject({ kind: "no-transition" });
    expect(names(result).at(-1)).toBe("setup_hook");
    expect(names(result)).not.toContain("agent");
  });

  it("a run ended before its checkout (no such main branch) has only its queue wait and fetch", async () => {
    const result = await rig.run(
      rig.job("echo never", {
        taskId: "S09-004",
        mainBranch: "no-such-branch",
        landingBranch: "no-such-branch",
      }),
    );
    expect(result.outcome).toMatchObject({ kind: "misconfigured", reason: "configuration_error" });
    expect(names(result).filter((n) => n !== "fetch")).toEqual(["queue_wait"]);
  });
});

describe("PhaseClock", () => {
  it("starts the queue wait at the enqueue for a job without createdAt, and never before the pick by skew", () => {
    const enqueuedAt = Date.now() - 40;
    const clock = new PhaseClock({ enqueuedAt });
    expect(clock.timeline[0]).toMatchObject({ name: "queue_wait", startedAt: enqueuedAt });
    // A creation "after" the pick (another host's clock ahead) counts as no wait.
    const skewed = new PhaseClock({ enqueuedAt: Date.now(), createdAt: Date.now() + 60_000 });
    expect(skewed.timeline[0]?.durationMs).toBe(0);
    expect(skewed.timeline[0]?.startedAt).toBe(skewed.pickedAt);
  });

  it("sums a phase lapped twice in the per-phase totals", () => {
    const clock = new PhaseClock({ enqueuedAt: Date.now() });
    clock.lap("commit");
    clock.lap("push");
    clock.lap("commit");
    expect(clock.timeline.map((p) => p.name)).toEqual(["queue_wait", "commit", "push", "commit"]);
    const commits = clock.timeline
      .filter((p) => p.name === "commit")
      .reduce((sum, p) => sum + p.durationMs, 0);
    expect(clock.phases.commit).toBeCloseTo(commits, 1);
  });
});
