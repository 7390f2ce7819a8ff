/**
 * Causes no retry can fix, end to end through a real coordinator, worker, bwrap sandbox, git,
 * Postgres and Redis: each pauses the project with ONE configuration incident naming cause and
 * fix, creates no resolver, and `start` after the fix resumes in one step. The agent CLIs are
 * shell scripts replaying what the pinned real CLIs printed (packages/harness/test/fixtures).
 */
import { readFileSync } from "node:fs";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseRunnerConfig } from "@overseer/project-config";
import { startProject, TransitionApplier } from "@overseer/transitions";
import { describe, expect, it } from "vitest";
import { type ClusterFixture, useTestResources } from "../support/cluster-fixture.ts";

const resources = useTestResources();

const TASK = { id: "S00-001", title: "Add hello.txt", scope: ["hello.txt"], body: "Create hello.txt." };

const recorded = (name: string) =>
  readFileSync(new URL(`../../packages/harness/test/fixtures/cli-failures/${name}`, import.meta.url), "utf8");

function runnerConfig(extra: Record<string, unknown>): Record<string, unknown> {
  return parseRunnerConfig(
    { timeout_seconds: 600, retry_backoff_seconds: 0.2, attempts: 3, ...extra },
    "test",
  ) as unknown as Record<string, unknown>;
}

async function pausedProject(cluster: ClusterFixture, projectId: string) {
  await cluster.waitForProject(projectId, (s) => s.project.status === "paused", 120_000);
  const db = cluster.scratch.db;
  const [project, incidents, tasks, runs, decisions] = await Promise.all([
    db.selectFrom("projects").selectAll().where("id", "=", projectId).executeTakeFirstOrThrow(),
    db.selectFrom("incidents").selectAll().where("project_id", "=", projectId).execute(),
    db
      .selectFrom("tasks")
      .select(["id", "kind", "status", "awaiting_reason"])
      .where("project_id", "=", projectId)
      .execute(),
    db.selectFrom("runs").select(["id", "status", "failure"]).where("project_id", "=", projectId).execute(),
    db.selectFrom("decisions").selectAll().where("project_id", "=", projectId).execute(),
  ]);
  return { project, incidents, tasks, runs, decisions };
}

async function cluster(): Promise<ClusterFixture> {
  const c = await resources.cluster();
  await c.startCoordinator();
  await c.startWorker(1);
  return c;
}

describe("configuration incidents through real workers and bwrap", () => {
  it("a key Claude Code's API refuses pauses the project with one incident after one run; start resumes", async () => {
    const c = await cluster();
    // What claude 2.1.332 prints up to its first refused retry; it would retry for minutes.
    const lines = recorded("claude-2.1.332-auth.txt").split("\n");
    const firstRetry = lines.findIndex((line) => line.includes('"subtype":"api_retry"'));
    const fake = await mkdtemp(path.join(tmpdir(), "fake-claude-"));
    await writeFile(path.join(fake, "out.jsonl"), `${lines.slice(0, firstRetry + 1).join("\n")}\n`);
    await c.addProject({
      id: "refused",
      tasks: [TASK],
      runnerConfig: runnerConfig({
        agent: "claude",
        argv: ["/bin/sh", "-c", `cat ${fake}/out.jsonl; sleep 600`],
        sandbox: { read_only_paths: [fake] },
      }),
    });
    const paused = await pausedProject(c, "refused");
    expect(paused.runs).toHaveLength(1);
    expect(paused.incidents.map((i) => i.kind)).toEqual(["configuration_error"]);
    expect(paused.incidents[0]?.message).toMatch(
      /^the model API refused the credentials: API call failed \(HTTP 401, authentication_failed\); retry 1 of 10\. Fix: set a valid key/,
    );
    expect(paused.project.status_reason).toMatch(
      /^configuration_error in S00-001: the model API refused the credentials/,
    );
    expect(paused.tasks).toEqual([
      expect.objectContaining({ id: "S00-001", status: "awaiting_input", kind: "work" }),
    ]);
    expect(paused.decisions).toHaveLength(1);
    expect(paused.decisions[0]?.question).toContain("`overseer start --project refused`");
    expect(paused.decisions[0]?.reason).not.toContain('"session_id"');

    // After the fix, start alone releases the card and the task runs again.
    await startProject(new TransitionApplier({ db: c.scratch.db }), "refused");
    await c.waitForProject(
      "refused",
      (s) => [...s.runs.values()].some((r) => r.id !== paused.runs[0]?.id),
      60_000,
    );
    const card = await c.scratch.db
      .selectFrom("decisions")
      .selectAll()
      .where("project_id", "=", "refused")
      .executeTakeFirstOrThrow();
    expect(card).toMatchObject({ status: "resolved", selected_option: "continue" });
  });

  it("opencode retrying an unreachable gateway forever is ended at its 5th retry: one run, one gateway_unreachable incident", async () => {
    const c = await cluster();
    // What opencode 1.18.33 logs on stderr (the preset's --print-logs) while it retries the
    // egress proxy's 502, up to its 5th retry; the real CLI goes on retrying, printing nothing else.
    const lines = recorded("opencode-1.18.33-unreachable.txt").split("\n");
    const fifth = lines
      .map((line, i) => (line.includes('message="stream error"') ? i : -1))
      .filter((i) => i >= 0)[4];
    const fake = await mkdtemp(path.join(tmpdir(), "fake-opencode-"));
    await writeFile(path.join(fake, "err.log"), `${lines.slice(0, (fifth ?? 0) + 1).join("\n")}\n`);
    await c.addProject({
      id: "unreachable",
      tasks: [TASK],
      runnerConfig: runnerConfig({
        agent: "opencode",
        argv: ["/bin/sh", "-c", `cat ${fake}/err.log >&2; sleep 600`],
        sandbox: { read_only_paths: [fake] },
      }),
    });
    const paused = await pausedProject(c, "unreachable");
    expect(paused.runs).toHaveLength(1);
    expect(paused.runs[0]?.status).toBe("failed");
    expect(paused.incidents.map((i) => i.kind)).toEqual(["configuration_error"]);
    expect(paused.incidents[0]?.message).toMatch(
      /^the model gateway could not be reached \(the host is allowed; nothing answered\): stream error: Bad Gateway\. Fix: start the model gateway/,
    );
    expect(paused.tasks.filter((t) => t.kind !== "work")).toEqual([]);
  });

  it("a model that never calls overseer-agent pauses the project with one incident, not a resolver chain", async () => {
    const c = await cluster();
    const said = JSON.stringify({
      type: "item.completed",
      item: { id: "item_1", type: "agent_message", text: "I would create hello.txt now." },
    });
    await c.addProject({
      id: "protocol",
      tasks: [TASK],
      runnerConfig: runnerConfig({ agent: "codex", argv: ["/bin/sh", "-c", `echo '${said}'; exit 0`] }),
    });
    const paused = await pausedProject(c, "protocol");
    expect(paused.runs).toHaveLength(3);
    expect(paused.incidents.map((i) => i.kind)).toEqual(["protocol_not_followed"]);
    expect(paused.tasks).toEqual([expect.objectContaining({ kind: "work", status: "awaiting_input" })]);
    const card = paused.decisions[0];
    expect(card?.title).toBe("The agent does not follow the protocol");
    expect(card?.reason).toContain("3 runs of S00-001 in a row ended without calling overseer-agent");
    expect(card?.reason).toContain("The model's last message: I would create hello.txt now.");
    expect(card?.reason).not.toContain('"type"');
  });

  it("a harness the sandbox cannot see is a configuration incident naming the fix", async () => {
    const c = await cluster();
    // On the worker's host, outside every path bound into the sandbox.
    const outside = await mkdtemp(path.join(tmpdir(), "invisible-cli-"));
    const cli = path.join(outside, "my-agent");
    await writeFile(cli, "#!/bin/sh\necho never\n", { mode: 0o755 });
    await c.addProject({ id: "invisible", tasks: [TASK], runnerConfig: runnerConfig({ argv: [cli] }) });
    const paused = await pausedProject(c, "invisible");
    expect(paused.runs).toHaveLength(1);
    expect(paused.incidents.map((i) => i.kind)).toEqual(["configuration_error"]);
    expect(paused.incidents[0]?.message).toContain(
      `the agent CLI cannot be started inside the sandbox: bwrap: execvp ${cli}`,
    );
    expect(paused.incidents[0]?.message).toContain("sandbox.read_only_paths");
    expect(paused.tasks.filter((t) => t.kind === "resolver")).toEqual([]);
  });
});
