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
      rig.approveJob("S01-003", head, { agentId: executor, executorAgentId: executor }),
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
    const result = await rig.run(rig.approveJob("S01-004", head, { executorAgentId: executor }));
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
    // The submitted head's tree landed as one new commit; the task branch is no ancestor of main.
    expect(await rig.git("show", "main:src/S01-005.txt")).toBe(
      await rig.git("show", `${head}:src/S01-005.txt`),
    );
    expect(await rig.git("merge-base", "--is-ancestor", head, "main").catch(() => "not an ancestor")).toBe(
      "not an ancestor",
    );
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
    const reviewer = rig.approveJob("S04-001", head, { executorAgentId: job.agentId });
    const review = await rig.run(reviewer);
    expect(review.landedSha).toMatch(/^[0-9a-f]{40}$/);
    // The landed commit keeps the worker's trailers of the head (not the forged ones) and names it.
    expect(await trailersOf(review.landedSha as string)).toBe(
      `${ours.replace("Status: review", "Status: approved")}\nReviewed-by: ${reviewer.agentId}\nReviewed-head: ${head}`,
    );
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
    // Every run's directory is emptied (checkout, control dir) after its result; the worker
    // keeps a few emptied ones for its next runs (run-dirs.ts).
    const runs = path.join(rig.dataDir, "runs");
    const left = async () => {
      const dirs = await readdir(runs).catch(() => []);
      return (await Promise.all(dirs.map((d) => readdir(path.join(runs, d))))).flat();
    };
    await waitFor(async () => (await left()).length === 0);
  });
});

/** What Postgres `text`/`jsonb` can hold: no NUL, no lone surrogate (UTF-8 round trip is exact). */
function storable(text: string): boolean {
  return !text.includes("\u0000") && Buffer.from(text, "utf8").toString("utf8") === text;
}
const REPLACEMENT = "\ufffd";

describe("breach 2: poison text in a result is normalised at the worker boundary", () => {
  it("a submit whose message and summary hold \\u0000 and \\ud800 escapes, and poisoned output, is reported storable", async () => {
    // The agent writes the control file itself (JSON escapes) and prints NUL, invalid UTF-8
    // and an encoded lone surrogate (ED A0 80) to its output.
    const job = rig.job(
      [
        "echo poison > src/poison.txt",
        "printf 'out \\000 nul \\377\\376 bad \\355\\240\\200 surrogate\\n'",
        `printf '%s' '{"version":1,"kind":"submit","message":"Add poison\\u0000 here\\ud800","summary":"sum\\u0000\\ud800"}' > "$OVERSEER_CONTROL_DIR/transition.json"`,
      ].join("; "),
      { taskId: "S02-001" },
    );
    const result = await rig.run(job);
    expect(result.outcome).toMatchObject({ kind: "transition", transition: { kind: "submit" } });
    const transition = result.outcome.kind === "transition" ? result.outcome.transition : null;
    const message = transition?.kind === "submit" ? transition.message : "";
    const summary = transition?.kind === "submit" ? (transition.summary ?? "") : "";
    expect(storable(message)).toBe(true);
    expect(storable(summary)).toBe(true);
    expect(message).toContain(`Add poison${REPLACEMENT} here${REPLACEMENT}`);
    expect(summary).toBe(`sum${REPLACEMENT}${REPLACEMENT}`);
    expect(storable(result.output)).toBe(true);
    expect(result.output).toContain("out ");
    expect(result.output).toContain(" surrogate");
    expect(result.output).toContain(REPLACEMENT);
    // The work itself was kept: the task branch holds the file and a storable commit message.
    expect(result.branchHead).toMatch(/^[0-9a-f]{40}$/);
    expect(await rig.git("show", `${result.branchHead}:src/poison.txt`)).toBe("poison");
    expect(storable(await rig.git("log", "-1", "--format=%B", result.branchHead as string))).toBe(true);
  });

  it("a reject whose feedback holds raw invalid UTF-8 bytes is reported storable, and the task carries on", async () => {
    const { head, executor } = await submitted("S02-002");
    const review = await rig.run(
      rig.job(
        `printf '{"version":1,"kind":"reject","feedback":"redo \\377\\376\\300\\200 it"}' > "$OVERSEER_CONTROL_DIR/transition.json"`,
        { taskId: "S02-002", action: "review", executorAgentId: executor, expectedTaskHead: head },
      ),
    );
    expect(review.outcome).toMatchObject({ kind: "transition", transition: { kind: "reject" } });
    const feedback =
      review.outcome.kind === "transition" && review.outcome.transition.kind === "reject"
        ? review.outcome.transition.feedback
        : "";
    expect(storable(feedback)).toBe(true);
    expect(feedback).toMatch(/^redo \ufffd+ it$/);
    // The next run on the task (the executor redoing the work) runs and submits as usual.
    const redo = await rig.run(
      rig.job("echo redone > src/S02-002.txt; echo Redo | overseer-agent submit --message-file -", {
        taskId: "S02-002",
        expectedTaskHead: head,
      }),
    );
    expect(redo.outcome).toMatchObject({ kind: "transition", transition: { kind: "submit" } });
    expect(redo.branchHead).not.toBe(head);
  });
});

describe("breach 3: an output flood leaves the run's live log in Redis within its bounds", () => {
  const maxLogBytes = 64 * 1024;
  const maxLogEntries = 16;
  const flood = new WorkerRig();
  beforeAll(() => flood.setup({ maxOutputBytes: maxLogBytes }, { maxLogBytes, maxLogEntries }));
  afterAll(() => flood.teardown());

  /** The run's live log stream as one text (a line may straddle two entries). */
  async function streamText(runId: string): Promise<string> {
    return (await flood.live.readLog(runId, "0", 10_000)).map((entry) => entry.data).join("");
  }

  /** Entries and UTF-8 bytes of the run's live log stream right now. */
  async function streamSize(runId: string): Promise<{ entries: number; bytes: number }> {
    const entries = await flood.live.readLog(runId, "0", 10_000);
    return {
      entries: entries.length,
      bytes: entries.reduce((sum, entry) => sum + Buffer.byteLength(entry.data, "utf8"), 0),
    };
  }

  it("a 32 MiB flood (500x the bound) keeps the stream under its byte and entry bounds, and the run submits", async () => {
    const floodBytes = 32 * 1024 * 1024;
    const job = flood.job(
      `echo head-marker; yes 'flood line 0123456789 abcdefghijklmnopqrstuvwxyz' | head -c ${floodBytes}; echo; echo tail-marker; echo done > src/flood.txt; echo Flood | overseer-agent submit --message-file -`,
      { taskId: "S03-001" },
    );
    // Sample the stream while the flood runs, and once more after the result.
    let largest = { entries: 0, bytes: 0 };
    let running = true;
    const sampler = (async () => {
      while (running) {
        const size = await streamSize(job.runId);
        largest = {
          entries: Math.max(largest.entries, size.entries),
          bytes: Math.max(largest.bytes, size.bytes),
        };
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    const result = await flood.run(job).finally(() => {
      running = false;
    });
    await sampler;
    expect(result.outcome).toMatchObject({ kind: "transition", transition: { kind: "submit" } });
    // The stored output is capped too: its end is kept, with a marker for what was dropped.
    expect(Buffer.byteLength(result.output, "utf8")).toBeLessThan(maxLogBytes + 1024);
    expect(result.outputTruncated).toBe(true);
    expect(result.output).toContain("tail-marker");
    // The batcher may still be sending its last append after the result: wait for the tail.
    await waitFor(async () => (await streamText(job.runId)).includes("tail-marker"));
    const after = await streamSize(job.runId);
    largest = {
      entries: Math.max(largest.entries, after.entries),
      bytes: Math.max(largest.bytes, after.bytes),
    };
    expect(after.entries).toBeGreaterThan(0);
    expect(largest.entries).toBeLessThanOrEqual(maxLogEntries);
    expect(largest.bytes).toBeLessThanOrEqual(maxLogBytes);
    // The start of the flood was trimmed from the stream (the stored output drops it too).
    const text = await streamText(job.runId);
    expect(text).not.toContain("head-marker");
    expect(result.output).not.toContain("head-marker");
  }, 120_000);

  it("a flood of invalid UTF-8 and NUL bytes is bounded the same way and streams storable text", async () => {
    const job = flood.job(
      "head -c 2097152 /dev/urandom; echo; echo end-marker; echo junk > src/junk.txt; echo Junk | overseer-agent submit --message-file -",
      { taskId: "S03-002", scope: ["src/**"] },
    );
    const result = await flood.run(job);
    expect(result.outcome).toMatchObject({ kind: "transition", transition: { kind: "submit" } });
    expect(storable(result.output)).toBe(true);
    await waitFor(async () => (await streamText(job.runId)).includes("end-marker"));
    const entries = await flood.live.readLog(job.runId, "0", 10_000);
    expect(entries.length).toBeLessThanOrEqual(maxLogEntries);
    // U+FFFD is 3 bytes where a bad byte was 1: the bound is on what the stream holds.
    expect(
      entries.reduce((sum, entry) => sum + Buffer.byteLength(entry.data, "utf8"), 0),
    ).toBeLessThanOrEqual(maxLogBytes);
    for (const entry of entries) expect(storable(entry.data)).toBe(true);
  }, 120_000);
});
