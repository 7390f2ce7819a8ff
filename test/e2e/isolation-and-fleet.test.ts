/**
 * Fleet scheduling across projects, scope enforcement (docs/state-machine.md rule 10) and secret hygiene
 * through the whole cluster: real coordinator, workers, bwrap, git, Postgres and Redis.
 */
import { listEvents } from "@overseer/db";
import { runGit } from "@overseer/git";
import { fakeHarnessPath } from "@overseer/harness";
import { describe, expect, it } from "vitest";
import { ClusterFixture, scriptedTask, useRunningCluster } from "../support/cluster-fixture.ts";
import { startService } from "../support/service-process.ts";
import { allTasks } from "../support/wait-for.ts";

describe("fleet, scope and secrets", () => {
  const cluster = useRunningCluster({ sandbox: "bwrap" }, 3);

  it("runs many projects at once, one run at a time per project by default, bounded by worker slots", async () => {
    const ids = ["fleet-a", "fleet-b", "fleet-c", "fleet-d"];
    for (const id of ids) {
      await cluster.addProject({
        id,
        tasks: [1, 2, 3].map((n) =>
          scriptedTask(`S00-00${n}`, `execute: write src/f${n}.txt "${n}"; sleep 0.2; submit "f${n}"`),
        ),
      });
    }
    for (const id of ids) await cluster.waitForProject(id, (s) => allTasks(s, ["done"]), 120_000);
    const runs = await cluster.scratch.db
      .selectFrom("runs")
      .select(["project_id", "timing"])
      .where("project_id", "in", ids)
      .execute();
    // A worker slot is busy from the moment it picks a job until it reports the result.
    const intervals = runs.map((r) => {
      const t = r.timing as { pickedAt: number; reportedAt: number };
      return { p: r.project_id, s: t.pickedAt, e: t.reportedAt };
    });
    expect(intervals).toHaveLength(ids.length * 3 * 2);
    for (const a of intervals) {
      // Per-project concurrency 1: no two runs of one project overlap.
      expect(intervals.filter((b) => b.p === a.p && b.s < a.e && a.s < b.e)).toHaveLength(1);
    }
    const edges = intervals.flatMap((i) => [
      { at: i.s, d: 1 },
      { at: i.e, d: -1 },
    ]);
    edges.sort((x, y) => x.at - y.at || x.d - y.d);
    let busy = 0;
    let maxBusy = 0;
    for (const edge of edges) {
      busy += edge.d;
      maxBusy = Math.max(maxBusy, busy);
    }
    expect(maxBusy).toBeGreaterThan(1);
    expect(maxBusy).toBeLessThanOrEqual(3);
  });

  it("a write outside the task scope records an incident, creates a remediation, pauses the project and rolls nothing back", async () => {
    await cluster.addProject({
      id: "scope",
      tasks: [
        scriptedTask(
          "S00-001",
          'execute: write src/ok.txt "in scope"; write docs/leak.md "out of scope"; submit "Mixed"',
        ),
      ],
    });
    const state = await cluster.waitForProject("scope", (s) => s.project.status === "paused");
    expect(state.project.statusReason).toMatch(/scope violation in S00-001/);
    expect(state.tasks.get("S00-001")?.status).toBe("blocked");
    const resolver = state.tasks.get("S00-001.R1");
    expect(resolver?.status).toBe("awaiting_input");
    expect(resolver?.awaitingReason).toBe("scope_violation");
    const incidents = await cluster.scratch.db
      .selectFrom("incidents")
      .selectAll()
      .where("project_id", "=", "scope")
      .execute();
    expect(incidents).toHaveLength(1);
    expect(incidents[0]?.kind).toBe("scope_violation");
    expect(incidents[0]?.details).toMatchObject({ paths: ["docs/leak.md"] });
    // Nothing rolled back: the work is kept on a checkpoint branch.
    const repo = (
      await cluster.scratch.db
        .selectFrom("projects")
        .select("repo")
        .where("id", "=", "scope")
        .executeTakeFirstOrThrow()
    ).repo;
    const branches = await runGit(
      ["for-each-ref", "--format=%(refname:short)", "refs/heads/overseer/checkpoint/"],
      { cwd: repo },
    );
    const checkpoint = branches.stdout.trim();
    expect(checkpoint).toMatch(/^overseer\/checkpoint\/S00-001\/execute-general-[0-9a-f]{12}$/);
    expect((await runGit(["show", `${checkpoint}:docs/leak.md`], { cwd: repo })).stdout).toBe("out of scope");
  });

  it("a run's agent runs below the services, at the worker's OVERSEER_RUN_NICE (default 10)", async () => {
    // The agent, in its sandbox, notes its own niceness in its checkout, then acts as usual.
    const note = `mkdir -p src; cut -d' ' -f19 /proc/self/stat > src/nice.txt; exec "$0" "$1"`;
    await cluster.addProject({
      id: "nice",
      tasks: [scriptedTask("S00-001", 'execute: submit "Niceness"')],
      runnerConfig: ClusterFixture.fakeRunnerConfig({
        argv: ["/bin/sh", "-c", note, process.execPath, fakeHarnessPath()],
      }),
    });
    await cluster.waitForProject("nice", (s) => allTasks(s, ["done"]), 120_000);
    const { repo } = await cluster.scratch.db
      .selectFrom("projects")
      .select("repo")
      .where("id", "=", "nice")
      .executeTakeFirstOrThrow();

    expect((await runGit(["show", "main:src/nice.txt"], { cwd: repo })).stdout).toBe("10\n");
  });

  it("a symlink pointing out of the checkout is a violation even inside the scope", async () => {
    await cluster.addProject({
      id: "symlink",
      tasks: [scriptedTask("S00-001", 'execute: submit "Link"')],
      runnerConfig: ClusterFixture.fakeRunnerConfig({
        hooks: { setup: { argv: ["/bin/ln", "-s", "/etc/passwd", "src-link"], timeout_seconds: 10 } },
      }),
    });
    // The setup hook runs inside the sandbox, in the checkout, like the agent.
    const state = await cluster.waitForProject("symlink", (s) => s.project.status === "paused");
    const incidents = await cluster.scratch.db
      .selectFrom("incidents")
      .selectAll()
      .where("project_id", "=", "symlink")
      .execute();
    expect(JSON.stringify(incidents[0]?.details)).toContain(
      "src-link -> /etc/passwd (symlink out of the checkout)",
    );
    expect(state.tasks.get("S00-001")?.status).toBe("blocked");
  });

  it("a secret reaches the harness only through its environment and is redacted from stored output, events and live logs", async () => {
    const canary = `canary-${Math.random().toString(36).slice(2)}-secret`;
    await cluster.addProject({
      id: "secret",
      runnerConfig: ClusterFixture.fakeRunnerConfig({
        argv: [
          "/bin/sh",
          "-c",
          'cat >/dev/null; echo "token is $API_TOKEN"; exec overseer-agent submit --message "used $API_TOKEN"',
        ],
        secrets: { API_TOKEN: canary },
      }),
      tasks: [{ id: "S00-001", title: "Use the secret", scope: ["**"] }],
    });
    await cluster.waitForProject(
      "secret",
      (s) => s.tasks.get("S00-001")?.status !== "in_progress" && s.tasks.get("S00-001")?.status !== "todo",
    );
    const runs = await cluster.scratch.db
      .selectFrom("runs")
      .selectAll()
      .where("project_id", "=", "secret")
      .execute();
    const execute = runs.find((r) => r.action === "execute");
    expect(execute?.output).toContain("token is [REDACTED]");
    expect(JSON.stringify(runs)).not.toContain(canary);
    expect(execute?.prompt ?? "").not.toContain(canary);
    const log = await cluster.live.readLog(execute?.id ?? "");
    expect(log.map((e) => e.data).join("")).toContain("[REDACTED]");
    expect(JSON.stringify(log)).not.toContain(canary);
    const events = await listEvents(cluster.scratch.db, { projectId: "secret" });
    expect(JSON.stringify(events)).not.toContain(canary);
  });

  it("a worker refuses to start without a sandbox unless the unsafe switch is set", async () => {
    const refused = startService(
      "worker",
      cluster.env({ OVERSEER_SANDBOX: "none", OVERSEER_SANDBOX_UNSAFE_NONE: "" }),
    );
    expect(await refused.exited).toBe(2);
    expect(refused.output()).toMatch(/OVERSEER_SANDBOX_UNSAFE_NONE/);
  });
});
