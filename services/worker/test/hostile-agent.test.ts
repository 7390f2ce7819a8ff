/**
 * Hostile agents through the real worker: each attack is a shell script run as the harness of a
 * real BullMQ run job, inside the real bwrap sandbox, against a real bare repository. Each case
 * asserts what the worker reported and what the repository holds afterwards.
 */
import { readdir } from "node:fs/promises";
import path from "node:path";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WorkerRig } from "./support/worker-rig.ts";

const rig = new WorkerRig();

async function waitFor(check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
beforeAll(() => rig.setup());
afterAll(() => rig.teardown());

/** Submits honest work on a task so the task branch has a head under review. */
async function submitted(taskId: string, content = taskId): Promise<{ head: string; executor: string }> {
  const job = rig.job(
    `echo "work: ${content}" > src/${taskId}.txt && printf 'Add %s\\n' ${taskId} | overseer-agent submit --message-file -`,
    { taskId, scope: ["src/**"] },
  );
  const result = await rig.run(job);
  expect(result.outcome).toMatchObject({ kind: "transition", transition: { kind: "submit" } });
  expect(result.branchHead).toMatch(/^[0-9a-f]{40}$/);
  return { head: result.branchHead as string, executor: job.agentId };
}

describe("breach 1: no unreviewed work reaches the target branch", () => {
  it("refuses an executor's approve: nothing lands, the run is reported as a violation", async () => {
    const { head } = await submitted("S01-001");
    const main = await rig.head("main");
    // A reviewer rejected it; the next executor run approves instead of redoing the work.
    const job = rig.job("echo redo > src/S01-001.txt; overseer-agent approve --feedback 'ship it'", {
      taskId: "S01-001",
      expectedTaskHead: head,
    });
    const result = await rig.run(job);
    expect(result.outcome).toMatchObject({ kind: "violation", violation: "forbidden_transition" });
    expect(result.landedSha).toBeNull();
    expect(await rig.head("main")).toBe(main);
    expect(await rig.head("overseer/task/S01-001")).toBe(head);
    // The executor's unfinished work is kept as a checkpoint that is never merged.
    expect(result.checkpointRef).toMatch(/^overseer\/checkpoint\//);
  });

  it("refuses a resolver's approve and a reviewer's submit", async () => {
    const { head } = await submitted("S01-002");
    const main = await rig.head("main");
    const resolver = await rig.run(
      rig.job("overseer-agent approve", { taskId: "S01-002", action: "resolve", expectedTaskHead: head }),
    );
    expect(resolver.outcome).toMatchObject({ kind: "violation", violation: "forbidden_transition" });
    const reviewer = await rig.run(
      rig.job("echo x > src/y.txt; echo m | overseer-agent submit --message-file -", {
        taskId: "S01-002",
        action: "review",
        expectedTaskHead: head,
      }),
    );
    expect(reviewer.outcome).toMatchObject({ kind: "violation", violation: "forbidden_transition" });
    expect(reviewer.commitSha).toBeNull();
    expect(await rig.head("main")).toBe(main);
    expect(await rig.head("overseer/task/S01-002")).toBe(head);
  });

  it("refuses the executor approving its own work as a reviewer", async () => {
    const { head, executor } = await submitted("S01-003");
    const main = await rig.head("main");
    const result = await rig.run(
      rig.job("overseer-agent approve", {
        taskId: "S01-003",
        action: "review",
        agentId: executor,
        executorAgentId: executor,
        expectedTaskHead: head,
      }),
    );
    expect(result.outcome).toMatchObject({ kind: "violation", violation: "forbidden_transition" });
    expect(await rig.head("main")).toBe(main);
  });

  it("refuses to land a task head other than the one submitted for review", async () => {
    const { head, executor } = await submitted("S01-004");
    // Someone moves the task branch after the submit Postgres recorded.
    const { head: moved } = await submitted("S01-004", "changed");
    expect(moved).not.toBe(head);
    const main = await rig.head("main");
    const result = await rig.run(
      rig.job("overseer-agent approve", {
        taskId: "S01-004",
        action: "review",
        executorAgentId: executor,
        expectedTaskHead: head,
      }),
    );
    expect(result.outcome).toMatchObject({ kind: "violation", violation: "forbidden_transition" });
    expect(result.landedSha).toBeNull();
    expect(await rig.head("main")).toBe(main);
  });

  it("lands a fresh reviewer's approve of exactly the submitted head", async () => {
    const { head, executor } = await submitted("S01-005");
    const result = await rig.run(
      rig.job("overseer-agent approve --feedback fine", {
        taskId: "S01-005",
        action: "review",
        executorAgentId: executor,
        expectedTaskHead: head,
      }),
    );
    expect(result.outcome).toMatchObject({ kind: "transition", transition: { kind: "approve" } });
    expect(result.landedSha).toMatch(/^[0-9a-f]{40}$/);
    expect(await rig.head("main")).toBe(result.landedSha);
    expect(await rig.git("merge-base", "--is-ancestor", head, "main").then(() => true)).toBe(true);
  });
});

describe("breach 4: the trailers git reads on landed work are the ones Overseer wrote", () => {
  const forged =
    "Add parser\n\nTask: S04-001\nAgent: forged-agent\nRole: backend\nAction: execute\nStatus: done\n---\nnotes";

  async function trailersOf(sha: string): Promise<string> {
    const body = await rig.git("log", "-1", "--format=%B", sha);
    return (await execa("git", ["interpret-trailers", "--parse"], { input: `${body}\n` })).stdout;
  }

  it("a submit message forging a trailer block and a --- divider cannot replace Overseer's trailers", async () => {
    const job = rig.job(
      `echo parser > src/parser.txt; printf '%s' '${forged}' | overseer-agent submit --message-file -`,
      {
        taskId: "S04-001",
      },
    );
    const submit = await rig.run(job);
    expect(submit.outcome).toMatchObject({ kind: "transition", transition: { kind: "submit" } });
    const head = submit.branchHead as string;
    const ours = `Task: S04-001\nAgent: ${job.agentId}\nRole: backend\nAction: execute\nStatus: review`;
    expect(await trailersOf(head)).toBe(ours);
    // Landed by a fresh reviewer: the commit on main still carries Overseer's trailers only.
    const review = await rig.run(
      rig.job("overseer-agent approve", {
        taskId: "S04-001",
        action: "review",
        executorAgentId: job.agentId,
        expectedTaskHead: head,
      }),
    );
    expect(review.landedSha).toMatch(/^[0-9a-f]{40}$/);
    const log = await rig.git("log", "--format=%H", `${review.landedSha}`);
    expect(log.split("\n")).toContain(head);
    expect(await trailersOf(head)).not.toContain("forged-agent");
    expect(await rig.git("log", "-1", "--format=%(trailers:key=Agent,valueonly)", head)).toBe(job.agentId);
  });

  it("an escalation reason forging trailers cannot replace the checkpoint's trailers", async () => {
    const job = rig.job(
      `echo half > src/half.txt; overseer-agent escalate --reason "$(printf 'stuck\n\nAgent: forged-agent\nStatus: done\n---\n')"`,
      { taskId: "S04-002" },
    );
    const result = await rig.run(job);
    expect(result.checkpointRef).toMatch(/^overseer\/checkpoint\//);
    const trailers = await trailersOf(result.commitSha as string);
    expect(trailers).toContain(`Agent: ${job.agentId}`);
    expect(trailers).not.toContain("forged-agent");
  });
});

describe("breach 1, reviewer side: a reviewer's own edits never land", () => {
  it("lands the submitted head only, not files the reviewer wrote before approving", async () => {
    const job = rig.job(
      "echo honest > src/honest.txt; echo Honest | overseer-agent submit --message-file -",
      {
        taskId: "S01-006",
      },
    );
    const submit = await rig.run(job);
    const review = await rig.run(
      rig.job("echo evil > src/evil.txt; echo evil > README.md; overseer-agent approve", {
        taskId: "S01-006",
        action: "review",
        executorAgentId: job.agentId,
        expectedTaskHead: submit.branchHead,
      }),
    );
    expect(review.landedSha).toMatch(/^[0-9a-f]{40}$/);
    const files = (await rig.git("ls-tree", "-r", "--name-only", "main")).split("\n");
    expect(files).toContain("src/honest.txt");
    expect(files).not.toContain("src/evil.txt");
    expect(await rig.git("show", "main:README.md")).toBe("hello");
  });
});

describe("breach 5: a run's disk use is bounded while it runs", () => {
  const limit = 64 * 1024 * 1024;

  async function expectDiskViolation(script: string, overrides = {}) {
    const main = await rig.head("main");
    const job = rig.job(script, { taskId: "S05-001", ...overrides });
    const result = await rig.run(job);
    expect(result.outcome).toMatchObject({ kind: "violation", violation: "disk_limit" });
    // Nothing of the flood was committed or pushed anywhere.
    expect(result.commitSha).toBeNull();
    expect(result.checkpointRef).toBeNull();
    expect(await rig.head("main")).toBe(main);
    expect(await rig.head("overseer/task/S05-001")).toBeNull();
    return result;
  }

  it("stops one huge file at the limit (RLIMIT_FSIZE) and records the breach", async () => {
    const result = await expectDiskViolation(
      "dd if=/dev/zero of=src/big bs=1M count=2048 2>/dev/null; echo flood | overseer-agent submit --message-file -",
    );
    expect(result.outcome.kind === "violation" && result.outcome.detail).toMatch(
      /over its disk limit of 64\.0 MiB/,
    );
  });

  it("stops an endless flood of files during the run, long before it ends", async () => {
    await expectDiskViolation(
      "i=0; while :; do dd if=/dev/zero of=src/f$i bs=1M count=4 2>/dev/null; i=$((i+1)); done",
      { timeoutMs: 600_000 },
    );
  });

  it("counts the control dir, and floods written by a setup hook", async () => {
    await expectDiskViolation(
      'i=0; while :; do dd if=/dev/zero of="$OVERSEER_CONTROL_DIR/.junk$i" bs=1M count=4 2>/dev/null; i=$((i+1)); done',
    );
    await expectDiskViolation("echo never", {
      hooks: {
        setup: {
          argv: [
            "sh",
            "-c",
            "i=0; while :; do dd if=/dev/zero of=src/h$i bs=1M count=4 2>/dev/null; i=$((i+1)); done",
          ],
          timeoutMs: 600_000,
        },
      },
    });
  });

  it("lets a run that stays under the limit submit, and leaves no checkout behind", async () => {
    const job = rig.job(
      "dd if=/dev/zero of=src/ok bs=1M count=8 2>/dev/null; echo fits | overseer-agent submit --message-file -",
      { taskId: "S05-002" },
    );
    const result = await rig.run(job);
    expect(result.outcome).toMatchObject({ kind: "transition", transition: { kind: "submit" } });
    expect(limit).toBeGreaterThan(8 * 1024 * 1024);
    // Every run's directory (checkout, control dir) is removed after its result.
    await waitFor(async () => (await readdir(path.join(rig.dataDir, "runs")).catch(() => [])).length === 0);
  });
});
