/**
 * OpenTelemetry traces of runs end to end (README "Watching runs", Traces): a coordinator and a
 * worker process started with OTEL_EXPORTER_OTLP_ENDPOINT pointing at an OTLP/HTTP receiver this
 * test runs, which decodes the exported spans with the official protobuf definitions. One task
 * is executed and approved (bwrap, git, Postgres, Redis) by a shell harness that streams codex
 * `--json` events (two tool calls, a message, the turn's usage) as it works. Each run is one
 * trace: a root `overseer.run`, one span per stored phase (queue wait, checkout, setup hook, agent,
 * scope check, commit, push, land, result applied), model and tool calls under `overseer.agent`,
 * every span with the run's, task's and project's ids, the phases adding up to the run's duration.
 */
import { listRuns } from "@overseer/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClusterFixture } from "../support/cluster-fixture.ts";
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from "../support/otlp-receiver.ts";
import { type ServiceProcess, startService } from "../support/service-process.ts";
import { allTasks } from "../support/wait-for.ts";

/** A codex-like agent: streams `codex exec --json` events while it works, then its transition. */
const SHELL_AGENT = String.raw`
emit() { printf '%s\n' "$1"; }
item() { emit "{\"type\":\"item.$1\",\"item\":{\"id\":\"$2\",\"type\":\"command_execution\",\"command\":\"$3\",\"aggregated_output\":\"\",\"exit_code\":$4,\"status\":\"$5\"}}"; }
emit '{"type":"thread.started","thread_id":"t-1"}'
emit '{"type":"turn.started"}'
sleep 0.3
item started item_1 "cat README.md" null in_progress
sleep 0.8
item completed item_1 "cat README.md" 0 completed
sleep 0.3
if [ "$OVERSEER_ACTION" = review ]; then
  emit '{"type":"item.completed","item":{"id":"item_2","type":"agent_message","text":"Looks right."}}'
  emit '{"type":"turn.completed","usage":{"input_tokens":900,"cached_input_tokens":100,"output_tokens":40}}'
  overseer-agent approve --feedback "fine" >/dev/null
else
  item started item_2 "write src/traced.txt" null in_progress
  mkdir -p src && echo traced > src/traced.txt
  sleep 0.8
  item completed item_2 "write src/traced.txt" 0 completed
  sleep 0.2
  emit '{"type":"item.completed","item":{"id":"item_3","type":"agent_message","text":"Done."}}'
  emit '{"type":"turn.completed","usage":{"input_tokens":1200,"cached_input_tokens":200,"output_tokens":80}}'
  printf 'Add traced\n' | overseer-agent submit --message-file - >/dev/null
fi
`;

/** The phase spans every run of the task has (the setup hook: the runner config has one). */
const REQUIRED_PHASES: Record<string, string[]> = {
  execute: [
    "queue_wait",
    "checkout",
    "setup_hook",
    "agent",
    "scope_check",
    "commit",
    "push",
    "result_applied",
  ],
  review: ["queue_wait", "checkout", "setup_hook", "agent", "land", "result_applied"],
};

describe("run traces over OTLP", () => {
  const cluster = new ClusterFixture({ sandbox: "bwrap" });
  let receiver: OtlpReceiver;
  const services: ServiceProcess[] = [];

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    await cluster.setup();
    const env = cluster.env({
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_BSP_SCHEDULE_DELAY: "200",
    });
    services.push(startService("coordinator", env), startService("worker", env));
  });
  afterAll(async () => {
    for (const service of services) await service.kill("SIGTERM");
    await cluster.teardown();
    await receiver?.close();
  });

  it("exports one complete trace per run: root, phases as stored, model and tool calls, ids on every span", async () => {
    await cluster.addProject({
      id: "traced",
      tasks: [{ id: "S00-001", title: "Traced task", scope: ["src/**"], body: "Write src/traced.txt." }],
      runnerConfig: ClusterFixture.fakeRunnerConfig({
        argv: ["sh", "-c", SHELL_AGENT],
        agent: "codex",
        hooks: { setup: { argv: ["sh", "-c", "sleep 0.1"] } },
      }),
    });
    await cluster.waitForProject("traced", (s) => allTasks(s, ["done"]), 120_000);
    const runs = await listRuns(cluster.scratch.db, { projectId: "traced" });
    expect(runs.map((r) => r.action).sort()).toEqual(["execute", "review"]);

    // The coordinator exports the root once the result is applied, the worker its phases.
    const deadline = Date.now() + 30_000;
    const complete = () =>
      runs.every((run) => {
        const mine = receiver.spans.filter((s) => s.attributes["overseer.run.id"] === run.id);
        return mine.some((s) => s.name === "overseer.run") && mine.some((s) => s.name === "overseer.agent");
      });
    while (!complete()) {
      if (Date.now() > deadline) {
        throw new Error(
          `spans missing: ${receiver.spans.map((s) => s.name).join(", ")} refused: ${receiver.refused}`,
        );
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(receiver.refused).toEqual([]);

    const traceIds = new Set<string>();
    for (const run of runs) {
      const row = await cluster.scratch.db
        .selectFrom("runs")
        .select(["phases", "created_at", "ended_at", "task_id", "project_id"])
        .where("id", "=", run.id)
        .executeTakeFirstOrThrow();
      const spans = receiver.spans.filter((s) => s.attributes["overseer.run.id"] === run.id);
      // One trace, every span of it carrying the three ids.
      const trace = new Set(spans.map((s) => s.traceId));
      expect(trace.size, run.action).toBe(1);
      traceIds.add([...trace][0] as string);
      for (const span of spans) {
        expect(span.attributes, span.name).toMatchObject({
          "overseer.run.id": run.id,
          "overseer.task.id": "S00-001",
          "overseer.project.id": "traced",
        });
      }
      const roots = spans.filter((s) => s.parentSpanId === "");
      expect(roots.map((s) => s.name)).toEqual(["overseer.run"]);
      const root = roots[0] as ReceivedSpan;
      expect(root.service).toBe("overseer-coordinator");
      expect(root.attributes).toMatchObject({
        "overseer.run.action": run.action,
        "overseer.run.outcome": run.action === "execute" ? "submit" : "approve",
      });
      expect(root.status).not.toBe(2);

      // The phase spans are the stored phases, children of the root, with the same times.
      const phases = spans.filter((s) => s.parentSpanId === root.spanId).sort((a, b) => a.start - b.start);
      expect(phases.map((s) => s.name)).toEqual(row.phases.map((p) => `overseer.${p.name}`));
      row.phases.forEach((phase, i) => {
        const span = phases[i] as ReceivedSpan;
        expect(Math.abs(span.start - phase.startedAt), phase.name).toBeLessThan(1);
        expect(Math.abs(span.end - span.start - phase.durationMs), phase.name).toBeLessThan(1);
        expect(span.service).toBe(
          phase.name === "result_applied" ? "overseer-coordinator" : "overseer-worker",
        );
      });
      expect(phases.map((s) => s.attributes["overseer.phase"])).toEqual(row.phases.map((p) => p.name));
      // The spans the issue names, each present: an executor's hand-in, a reviewer's landing.
      expect(
        phases.map((s) => s.attributes["overseer.phase"]),
        run.action,
      ).toEqual(expect.arrayContaining(REQUIRED_PHASES[run.action] ?? ["unknown action"]));

      // The phases add up to the root, and the root to the run's duration in Postgres.
      const duration = (row.ended_at as Date).getTime() - row.created_at.getTime();
      const rootMs = root.end - root.start;
      const summed = phases.reduce((sum, s) => sum + (s.end - s.start), 0);
      process.stdout.write(
        `trace ${run.action}: phases ${summed.toFixed(1)} ms, root ${rootMs.toFixed(1)} ms, run ${duration} ms\n`,
      );
      expect(Math.abs(summed - rootMs), `phases ${summed} ms, root ${rootMs} ms`).toBeLessThanOrEqual(
        0.02 * rootMs,
      );
      expect(Math.abs(rootMs - duration), `root ${rootMs} ms, run ${duration} ms`).toBeLessThanOrEqual(
        Math.max(0.02 * duration, 5),
      );

      // Under the agent: its model calls and tool calls, inside its time.
      const agent = phases.find((s) => s.name === "overseer.agent") as ReceivedSpan;
      const calls = spans.filter((s) => s.parentSpanId === agent.spanId);
      for (const call of calls) {
        expect(call.start).toBeGreaterThanOrEqual(agent.start - 1);
        expect(call.end).toBeLessThanOrEqual(agent.end + 1);
      }
      const tools = calls.filter((s) => s.attributes["gen_ai.operation.name"] === "execute_tool");
      const models = calls.filter((s) => s.attributes["gen_ai.operation.name"] === "chat");
      expect(tools.map((s) => s.attributes["overseer.tool.command"])).toEqual(
        run.action === "execute" ? ["cat README.md", "write src/traced.txt"] : ["cat README.md"],
      );
      for (const tool of tools) {
        expect(tool).toMatchObject({
          name: "execute_tool shell",
          attributes: { "gen_ai.tool.name": "shell", "overseer.tool.exit_code": 0 },
        });
        // The tool sleeps 0.8 s between its started and completed lines; the span is timed from
        // when the worker reads them, so the bound leaves room for a loaded machine's stalls.
        expect(tool.end - tool.start).toBeGreaterThanOrEqual(150);
      }
      expect(models.length).toBe(tools.length + 1);
      expect(models.map((s) => s.attributes["gen_ai.usage.input_tokens"]).filter(Boolean)).toEqual([
        run.action === "execute" ? 1200 : 900,
      ]);
      expect(calls.length).toBe(tools.length + models.length);
    }
    expect(traceIds.size).toBe(2);
  });
});
