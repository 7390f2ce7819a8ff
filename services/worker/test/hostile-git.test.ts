/**
 * Hostile agents against the worker's git side (issue 19, breaches 3, 4 and 7), through the real
 * worker, the real bwrap sandbox and a real bare repository: forged trailers behind git's
 * scissors line, trees that are cheap to make and dear to commit, and rejected attempts.
 */
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WorkerRig } from "./support/worker-rig.ts";

const rig = new WorkerRig();
beforeAll(() => rig.setup());
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
