import { randomBytes } from "node:crypto";
import { appendFile, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { COPILOT_HOME_DIR } from "@overseer/project-config";
import {
  createRedis,
  LiveChannel,
  type Redis,
  resolveLiveOptions,
  subscribeWhenReady,
} from "@overseer/queue";
import { createLogger } from "@overseer/runtime";
import { runJobFixture } from "@overseer/test-support";
import { TranscriptEntrySchema } from "@overseer/transcript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RunTranscriptRecorder } from "../src/transcript-recorder.ts";

/**
 * The worker's transcript of a run: the agent's output parsed as it streams, published live on
 * the project's transcript channel (real Redis), kept within its byte bound.
 */
const FIXTURES = path.join(import.meta.dirname, "../../../packages/transcript/test/fixtures");
const prefix = `transcripttest-${randomBytes(4).toString("hex")}`;
const log = createLogger({ name: "transcript-test", level: "silent" });
let redis: Redis;
let subscriber: Redis;
let live: LiveChannel;
let dir: string;

beforeAll(async () => {
  redis = createRedis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379");
  subscriber = redis.duplicate();
  live = new LiveChannel(redis, resolveLiveOptions({ prefix }));
  dir = await mkdtemp(path.join(tmpdir(), "transcript-recorder-"));
});
afterAll(async () => {
  subscriber.disconnect();
  redis.disconnect();
  await rm(dir, { recursive: true, force: true });
});

async function listen(projectId: string): Promise<{ runId: string; entries: unknown[] }[]> {
  const got: { runId: string; entries: unknown[] }[] = [];
  subscriber.on("message", (channel: string, message: string) => {
    if (channel === live.transcriptChannel(projectId)) got.push(JSON.parse(message));
  });
  await subscribeWhenReady(subscriber, live.transcriptChannel(projectId));
  return got;
}

describe("RunTranscriptRecorder", () => {
  it("parses codex output as it streams, publishes it live and keeps it for the result", async () => {
    const job = runJobFixture({ runId: "r-codex", projectId: "p-live", agent: "codex" });
    const published = await listen("p-live");
    const recorder = new RunTranscriptRecorder(
      job,
      "/tmp/ovt-r2c88d31e/cli-transcript-77mxrG/checkout",
      {
        maxBytes: 1024 * 1024,
        publish: (entries, kept) => live.publishTranscript("p-live", job.runId, entries, kept),
        intervalMs: 20,
      },
      log,
    );
    recorder.start(dir);
    const output = await readFile(path.join(FIXTURES, "codex-0.171.0.jsonl"), "utf8");
    for (let i = 0; i < output.length; i += 101) recorder.write(output.slice(i, i + 101));
    const transcript = await recorder.finish();
    expect(transcript.agent).toBe("codex");
    expect(transcript.truncated).toBe(false);
    expect(transcript.entries.map((e) => e.kind)).toEqual([
      "raw",
      "message",
      "file_edit",
      "tool_call",
      "tool_result",
      "message",
      "usage",
    ]);
    expect(transcript.entries[2]).toMatchObject({ path: "hello.txt", change: "add" });
    // Entries without a time of their own carry the worker's.
    for (const entry of transcript.entries) expect(entry.at).not.toBeNull();
    await expect.poll(() => published.flatMap((m) => m.entries).length, { timeout: 10_000 }).toBe(7);
    expect(published.every((m) => m.runId === "r-codex")).toBe(true);
    const streamed = published.flatMap((m) => m.entries).map((e) => TranscriptEntrySchema.parse(e));
    expect(streamed).toEqual(transcript.entries);
    // Kept where the transcript route reads a running run's, numbered as the stored transcript.
    expect(await live.readTranscript(job.runId)).toEqual(transcript.entries);
  });

  it("drops the oldest entries beyond its byte bound and says so", async () => {
    const job = runJobFixture({ runId: "r-bound", projectId: "p-bound", agent: "my-cli" });
    const recorder = new RunTranscriptRecorder(
      job,
      null,
      {
        maxBytes: 2048,
        publish: (entries, kept) => live.publishTranscript("p-bound", job.runId, entries, kept),
        intervalMs: 5,
      },
      log,
    );
    recorder.start(dir);
    for (let i = 0; i < 200; i++) {
      recorder.write(`line ${i} ${"x".repeat(40)}\n`);
      if (i % 50 === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const transcript = await recorder.finish();
    // The live copy in Redis is trimmed to the same entries.
    expect(await live.readTranscript(job.runId)).toEqual(transcript.entries);
    expect(transcript.truncated).toBe(true);
    const bytes = transcript.entries.reduce((sum, e) => sum + Buffer.byteLength(JSON.stringify(e)) + 1, 0);
    expect(bytes).toBeLessThanOrEqual(2048);
    expect(transcript.entries.at(-1)).toMatchObject({ kind: "raw", seq: 199 });
    expect(transcript.entries[0]?.seq).toBeGreaterThan(0);
  });

  it("reads each byte of Copilot's session file once when the run ends during a live pass", async () => {
    const events = await readFile(path.join(FIXTURES, "copilot-1.0.102.jsonl"), "utf8");
    for (let round = 0; round < 20; round++) {
      const control = path.join(dir, `copilot-race-${round}`);
      const session = path.join(control, COPILOT_HOME_DIR, "session-state", "s1");
      await mkdir(session, { recursive: true });
      await writeFile(path.join(session, "events.jsonl"), events);
      const job = runJobFixture({ runId: `r-race-${round}`, projectId: "p-copilot", agent: "copilot" });
      const recorder = new RunTranscriptRecorder(job, null, { maxBytes: 1024 * 1024, intervalMs: 1 }, log);
      recorder.start(control);
      await new Promise((resolve) => setTimeout(resolve, round % 5));
      const transcript = await recorder.finish();
      const exits = transcript.entries.filter((e) => e.kind === "tool_result").map((e) => e.exitCode);
      expect(exits, `round ${round}`).toEqual([null, 127]);
    }
  });

  it("follows Copilot's session file (not its human output) while the run goes", async () => {
    const control = path.join(dir, "copilot-control");
    const session = path.join(control, COPILOT_HOME_DIR, "session-state", "s1");
    await mkdir(session, { recursive: true });
    const events = (await readFile(path.join(FIXTURES, "copilot-1.0.102.jsonl"), "utf8")).split("\n");
    const half = Math.floor(events.length / 2);
    await writeFile(
      path.join(session, "events.jsonl"),
      `${events.slice(0, half).join("\n")}\n${events[half]?.slice(0, 20)}`,
    );
    const job = runJobFixture({ runId: "r-copilot", projectId: "p-copilot", agent: "copilot" });
    const seen: unknown[] = [];
    const recorder = new RunTranscriptRecorder(
      job,
      null,
      { maxBytes: 1024 * 1024, publish: async (entries) => void seen.push(...entries), intervalMs: 20 },
      log,
    );
    recorder.start(control);
    recorder.write("● Do the task (shell)\n"); // its stdout: human text, not the transcript
    await expect.poll(() => seen.length, { timeout: 10_000 }).toBeGreaterThan(0);
    const early = seen.length;
    await appendFile(
      path.join(session, "events.jsonl"),
      `${events[half]?.slice(20)}\n${events.slice(half + 1).join("\n")}`,
    );
    const transcript = await recorder.finish();
    expect(early).toBeLessThan(transcript.entries.length);
    expect(transcript.entries.some((e) => e.kind === "raw")).toBe(false);
    expect(transcript.entries.filter((e) => e.kind === "tool_result").map((e) => e.exitCode)).toEqual([
      null,
      127,
    ]);
    expect(transcript.entries.at(-1)).toMatchObject({ kind: "message", role: "assistant", text: "Done." });
    expect(seen).toHaveLength(transcript.entries.length);
  });
});
