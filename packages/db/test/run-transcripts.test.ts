import { taskCard } from "@overseer/test-support";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  applyTransition,
  createProject,
  createScratchDatabase,
  getRunTranscript,
  listTaskTranscripts,
  type ScratchDatabase,
} from "../src/index.ts";

let scratch: ScratchDatabase;

beforeAll(async () => {
  scratch = await createScratchDatabase();
});
afterAll(async () => {
  await scratch?.drop();
});

const entries = [
  { seq: 0, at: "2026-01-01T00:00:00.000Z", kind: "message", role: "assistant", text: "Creating it." },
  {
    seq: 1,
    at: null,
    kind: "tool_call",
    callId: "c1",
    tool: "shell",
    command: "printf hi > a.txt",
    args: null,
  },
  { seq: 2, at: null, kind: "tool_result", callId: "c1", exitCode: 0, output: "", truncated: false },
];

describe("run transcripts (migration 0011)", () => {
  it("are stored with the run's result, read per run and per task, and a redelivery changes nothing", async () => {
    await createProject(scratch.db, { id: "tr", repo: "/tmp/none", runnerConfig: {} });
    await applyTransition(scratch.db, "tr", {
      kind: "import-tasks",
      tasks: [taskCard("S00-001")],
      by: "test",
    });
    await applyTransition(scratch.db, "tr", {
      kind: "start-project",
      by: "test",
      stage: null,
      sessionsLimit: null,
    });
    const run = (await applyTransition(scratch.db, "tr", { kind: "claim" })).changes.runs[0]!;
    expect(await getRunTranscript(scratch.db, "tr", run.id)).toBeNull();
    const submit = {
      kind: "submit",
      runId: run.id,
      message: "done",
      commitSha: "abc",
      branchHead: "abc",
    } as const;
    const report = { exitCode: 0, output: "raw", transcript: { agent: "codex", entries, truncated: true } };
    expect((await applyTransition(scratch.db, "tr", submit, { runReport: report })).outcome).toBe("applied");
    const stored = await getRunTranscript(scratch.db, "tr", run.id);
    expect(stored).toEqual({ runId: run.id, taskId: "S00-001", agent: "codex", entries, truncated: true });
    // Another project's id never reads it.
    expect(await getRunTranscript(scratch.db, "other", run.id)).toBeNull();
    const again = await applyTransition(scratch.db, "tr", submit, { runReport: report });
    expect(again.outcome).toBe("already_applied");
    const byTask = await listTaskTranscripts(scratch.db, "tr", "S00-001");
    expect([...byTask.keys()]).toEqual([run.id]);
    expect(byTask.get(run.id)?.entries).toEqual(entries);
    const bytes = await scratch.db.selectFrom("run_transcripts").select("bytes").executeTakeFirstOrThrow();
    expect(bytes.bytes).toBe(Buffer.byteLength(JSON.stringify(entries)));
  });
});
