/**
 * Agents that dodge the budget, through the real worker (real BullMQ jobs, bwrap, git): each
 * harness prints what the CLI would (its usage events), then what a hostile agent can add to the
 * same output or session files. The recorded spend is never lowered, and a run stopped mid-way
 * (cancelled, timed out) keeps what it spent through the worker's usage reports.
 */
import { type RunUsageMessage, runUsageMessageSchema } from "@overseer/run-contract";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WorkerRig } from "./support/worker-rig.ts";

const rig = new WorkerRig();
beforeAll(() => rig.setup({ usageReportMs: 100 }));
afterAll(() => rig.teardown());

/** `echo` of one JSON line, quoted for sh. */
const echo = (value: unknown) => `echo '${JSON.stringify(value)}'`;

const CLAUDE_RESULT = {
  type: "result",
  subtype: "success",
  total_cost_usd: 50,
  usage: {
    input_tokens: 400_000,
    cache_read_input_tokens: 0,
    cache_creation_input_tokens: 0,
    output_tokens: 90_000,
  },
};
const CLAUDE_ZERO = {
  type: "result",
  subtype: "success",
  total_cost_usd: 0,
  usage: { input_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0, output_tokens: 0 },
};
const codexTurn = (input: number, output: number) => ({
  type: "turn.completed",
  usage: { input_tokens: input, cached_input_tokens: 0, output_tokens: output },
});
const SUBMIT = "echo work > src/x.txt && echo m | overseer-agent submit --message-file -";

/** The run-usage messages the worker sent for `runId`, in report order. */
async function usageReports(runId: string): Promise<RunUsageMessage[]> {
  const messages = await rig.queues.results.messages();
  return messages
    .filter((m) => (m as { kind?: string }).kind === "run-usage")
    .map((m) => runUsageMessageSchema.parse(m))
    .filter((m) => m.runId === runId)
    .sort((a, b) => a.seq - b.seq);
}

describe("issue 19 breach 2: no usage line the agent can print lowers the recorded spend", () => {
  it("claude: a second, zero-cost result line after a real $50 one replaces nothing", async () => {
    const job = rig.job(`${echo(CLAUDE_RESULT)}; ${SUBMIT}; ${echo(CLAUDE_ZERO)}`, { agent: "claude" });
    const result = await rig.run(job);
    expect(result.outcome).toMatchObject({ kind: "transition", transition: { kind: "submit" } });
    expect(result.usage).toMatchObject({ tokensIn: 400_000, tokensOut: 90_000, costUsd: 50 });
  });

  it("codex: three turns worth $6.75 ahead of 2 MiB of output are all counted, a zero turn lowers nothing", async () => {
    const price = { input_usd_per_mtok: 1.25, output_usd_per_mtok: 10, cached_input_usd_per_mtok: 0.125 };
    const turns = [
      codexTurn(1_000_000, 100_000),
      codexTurn(1_000_000, 200_000),
      codexTurn(1_400_000, 175_000),
    ];
    const flood = `head -c 2097152 /dev/zero | tr '\\0' 'x' | fold -w 1000`;
    const job = rig.job(`${turns.map(echo).join("; ")}; ${flood}; ${echo(codexTurn(0, 0))}; ${SUBMIT}`, {
      agent: "codex",
      price,
      timeoutMs: 60_000,
    });
    const result = await rig.run(job);
    expect(result.outputTruncated).toBe(true); // the stored output lost the turns, the count did not
    expect(result.usage).toMatchObject({ tokensIn: 3_400_000, tokensOut: 475_000 });
    expect(result.usage?.costUsd).toBeCloseTo(3.4 * 1.25 + 0.475 * 10, 9);
  });

  it("codex: a session rollout record echoed with zeros under the same response id hides nothing", async () => {
    const record = (input: number) => ({
      type: "token_usage_record",
      payload: {
        response_id: "resp_1",
        usage: { input_tokens: input, cached_input_tokens: 0, output_tokens: input / 10 },
      },
    });
    const dir = '"$OVERSEER_CONTROL_DIR/.codex-home/sessions/2026/12/01"';
    const file = `${dir}/rollout-x.jsonl`;
    const job = rig.job(
      `mkdir -p ${dir} && ${echo(record(50_000))} > ${file} && ${echo(record(0))} >> ${file} && ${SUBMIT}`,
      { agent: "codex" },
    );
    const result = await rig.run(job);
    expect(result.usage).toMatchObject({
      tokensIn: 50_000,
      source: "codex session rollout token_usage_record",
    });
    // Every report the run sent while it ran only ever grew.
    const reports = (await usageReports(job.runId)).map((r) => r.usage.tokensIn ?? 0);
    expect(reports).toEqual([...reports].sort((a, b) => a - b));
  });
});

describe("issue 18 item 5: a run stopped mid-way keeps what it spent", () => {
  it("a cancelled run reports the usage its CLI printed before the cancel", async () => {
    const message = {
      id: "msg_1",
      usage: { input_tokens: 1234, cache_read_input_tokens: 0, output_tokens: 7 },
    };
    const job = rig.job(`${echo({ type: "assistant", message })}; sleep 30`, { agent: "claude" });
    await rig.queues.enqueueRun(job);
    await waitFor(async () => (await usageReports(job.runId)).length > 0);
    await rig.cancel(job);
    await waitFor(async () => (await rig.queues.runJobState(job.runId)).state !== "active");
    const reports = await usageReports(job.runId);
    expect(reports.at(-1)?.usage).toMatchObject({
      tokensIn: 1234,
      tokensOut: 7,
      source: "claude stream-json assistant messages",
    });
    expect(reports.at(-1)?.usage).not.toHaveProperty("costUsd"); // no price: unpriced, not $0
  });

  it("a run that times out reports its usage with the timeout", async () => {
    const job = rig.job(`${echo(codexTurn(5000, 60))}; sleep 30`, { agent: "codex", timeoutMs: 1500 });
    const result = await rig.run(job);
    expect(result.outcome).toMatchObject({ kind: "timeout" });
    expect(result.usage).toMatchObject({ tokensIn: 5000, tokensOut: 60 });
  });
});

async function waitFor(check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
