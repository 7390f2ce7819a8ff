/**
 * Hostile agents against the worker's git side (issue 19, breaches 3, 4 and 7), through the real
 * worker, the real bwrap sandbox and a real bare repository: forged trailers behind git's
 * scissors line, trees that are cheap to make and dear to commit, and rejected attempts.
 */
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WorkerRig } from "./support/worker-rig.ts";

/** Small limits keep the disk attacks fast: 64 MiB, 2,000 new files, 5 s per host-side git step. */
const LIMITS = { diskLimitBytes: 64 * 1024 * 1024, maxFiles: 2000, gitTimeoutMs: 5000 };
const rig = new WorkerRig();
beforeAll(() => rig.setup(LIMITS));
afterAll(() => rig.teardown());

const CUT = "------------------------ >8 ------------------------";

/** The trailers `git interpret-trailers --parse` and `%(trailers)` read from a commit, as one text each. */
async function trailersOf(sha: string): Promise<{ parsed: string; logged: string }> {
  const body = await rig.git("log", "-1", "--format=%B", sha);
  const parsed = (await execa("git", ["interpret-trailers", "--parse"], { input: `${body}\n` })).stdout;
  const logged = await rig.git("log", "-1", "--format=%(trailers:only,unfold)", sha);
  return { parsed, logged };
}

describe("breach 3: a scissors line in the agent's message cannot hide Overseer's trailers", () => {
  it("a submit message with forged trailers above a scissors line keeps Overseer's block the one git reads", async () => {
    const forged = `Add parser\n\nTask: S19-301\nAgent: forged-agent\nStatus: done\n\n# ${CUT}\nnotes`;
    const job = rig.job(
      `echo parser > src/parser.txt; printf '%s\\n' '${forged}' | overseer-agent submit --message-file -`,
      { taskId: "S19-301" },
    );
    const submit = await rig.run(job);
    expect(submit.outcome).toMatchObject({ kind: "transition", transition: { kind: "submit" } });
    const ours = `Task: S19-301\nAgent: ${job.agentId}\nRole: backend\nAction: execute\nStatus: review`;
    const head = submit.branchHead as string;
    expect(await trailersOf(head)).toEqual({ parsed: ours, logged: ours });
    expect(await rig.git("log", "-1", "--format=%B", head)).toContain("forged-agent");
  });

  it("an escalation reason with a scissors line keeps the checkpoint's trailers", async () => {
    const job = rig.job(
      `echo half > src/half.txt; overseer-agent escalate --reason "$(printf 'stuck\\n\\nAgent: forged-agent\\n\\n# ${CUT}\\n')"`,
      { taskId: "S19-302" },
    );
    const result = await rig.run(job);
    expect(result.checkpointRef).toMatch(/^overseer\/checkpoint\//);
    const { parsed, logged } = await trailersOf(result.commitSha as string);
    expect(parsed).toContain(`Agent: ${job.agentId}`);
    expect(parsed).not.toContain("forged-agent");
    expect(logged).toBe(parsed);
  });
});

describe("breach 4: the disk guard counts what the worker will do on the host", () => {
  async function expectDiskViolation(taskId: string, script: string): Promise<string> {
    const main = await rig.head("main");
    const result = await rig.run(rig.job(script, { taskId }));
    expect(result.outcome).toMatchObject({ kind: "violation", violation: "disk_limit" });
    // Nothing of it was committed or pushed anywhere.
    expect(result.commitSha).toBeNull();
    expect(result.checkpointRef).toBeNull();
    expect(await rig.head("main")).toBe(main);
    expect(await rig.head(`overseer/task/${taskId}`)).toBeNull();
    return result.outcome.kind === "violation" ? result.outcome.detail : "";
  }

  it("sparse files count their apparent size, not the blocks they hold", async () => {
    // Three 30 MiB holes: each under the per-file cap, ~0 blocks, 90 MiB for git to read.
    const detail = await expectDiskViolation(
      "S19-401",
      "for i in 1 2 3; do truncate -s 30M src/hole$i; done; echo holes | overseer-agent submit --message-file -",
    );
    expect(detail).toMatch(/over its disk limit of 64\.0 MiB/);
  });

  it("a flood of empty files stops at the file cap", async () => {
    const detail = await expectDiskViolation(
      "S19-402",
      "mkdir src/many && cd src/many && seq 1 3000 | xargs touch && overseer-agent submit --message 'many files'",
    );
    expect(detail).toMatch(/files/);
    expect(detail).toMatch(/over its limit of 2000 new files/);
  });

  it("hard links that make git read a sparse file a thousand times end at the host-side git step's time bound", async () => {
    // One 60 MiB hole (under the disk limit, counted once) linked 1,000 times (under the file
    // cap): `git add` would hash 60 GiB. The step is stopped at its bound and the run ends as
    // a disk_limit violation instead of running on past the run's timeout.
    const detail = await expectDiskViolation(
      "S19-403",
      "truncate -s 60M src/hole && i=0; while [ $i -lt 1000 ]; do ln src/hole src/l$i; i=$((i+1)); done; echo links | overseer-agent submit --message-file -",
    );
    expect(detail).toMatch(/git add/);
    expect(detail).toMatch(/5 s/);
  });

  it("a run within every bound still submits", async () => {
    const result = await rig.run(
      rig.job(
        "truncate -s 8M src/small && mkdir src/some && cd src/some && seq 1 100 | xargs touch && overseer-agent submit --message fits",
        { taskId: "S19-404" },
      ),
    );
    expect(result.outcome).toMatchObject({ kind: "transition", transition: { kind: "submit" } });
  });
});
