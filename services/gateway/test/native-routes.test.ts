import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { applyTransition, getProject, getTask } from "@overseer/db";
import { initBareRepo, runGit } from "@overseer/git";
import { runJobId } from "@overseer/queue";
import { describe, expect, it } from "vitest";
import { card, raiseQuestion, seedProject, useGatewayFixture } from "./support/gateway-fixture.ts";
import { stateSignature } from "./support/state-signature.ts";

const fx = useGatewayFixture();

describe("projects", () => {
  it("creates with a validated runner config, answers it redacted, lists and gets it", async () => {
    const created = await fx.request("POST", "/api/v1/projects", {
      token: fx.tokens.admin,
      body: {
        id: "alpha",
        repo: "/srv/git/alpha.git",
        objective: "Ship alpha",
        runner_config: {
          argv: ["fake-agent", "{prompt_file}"],
          secrets: { API_KEY: "super-secret-value-123" },
          max_sessions: 5,
        },
      },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      id: "alpha",
      name: "alpha",
      repo: "/srv/git/alpha.git",
      status: "paused",
      branch: "main",
    });
    expect(created.body.runner_config.secrets).toEqual({ API_KEY: "[REDACTED]" });
    expect(created.body.runner_config.max_sessions).toBe(5);
    expect(created.text).not.toContain("super-secret-value-123");

    const got = await fx.request("GET", "/api/v1/projects/alpha", { token: fx.tokens.read });
    expect(got.status).toBe(200);
    expect(got.text).not.toContain("super-secret-value-123");
    expect(got.body.runner_config.argv).toEqual(["fake-agent", "{prompt_file}"]);

    const list = await fx.request("GET", "/api/v1/projects", { token: fx.tokens.read });
    expect(list.body.projects.map((p: { id: string }) => p.id)).toContain("alpha");
    expect(list.body.projects[0].runner_config).toBeUndefined();
    const paused = await fx.request("GET", "/api/v1/projects?status=paused", { token: fx.tokens.read });
    expect(paused.body.projects.map((p: { id: string }) => p.id)).toEqual(["alpha"]);

    const duplicate = await fx.request("POST", "/api/v1/projects", { body: { id: "alpha", repo: "/x" } });
    expect(duplicate.status).toBe(409);
    expect(duplicate.body.error.code).toBe("already_exists");
  });

  it("records a working copy, names overseer/<branch> and how to merge it in the project and its status", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "overseer-gw-wc-"));
    try {
      const bare = path.join(dir, "origin.git");
      await initBareRepo(bare, { initialFiles: { "a.txt": "a\n" }, branch: "main" });
      await runGit(["clone", "--quiet", "--", bare, path.join(dir, "copy")], { cwd: dir });
      const mine = await fx.request("POST", "/api/v1/projects", {
        token: fx.tokens.admin,
        body: { id: "mine", repo: path.join(dir, "copy") },
      });
      expect(mine.status).toBe(201);
      expect(mine.body).toMatchObject({
        branch: "main",
        repo_kind: "working_copy",
        landing_branch: "overseer/main",
        landing_hint:
          "approved work lands on overseer/main; bring it into your branch with `git merge overseer/main`",
      });
      const status = await fx.request("GET", "/api/projects/mine/status", { token: fx.tokens.read });
      expect(status.body).toMatchObject({ landing_branch: "overseer/main", repo_kind: "working_copy" });
      expect(status.body.text).toContain(
        "landing: approved work lands on overseer/main; bring it into your branch with `git merge overseer/main`",
      );
      // Registering reads the repository and writes nothing to it.
      expect((await runGit(["branch", "--list"], { cwd: path.join(dir, "copy") })).stdout.trim()).toBe(
        "* main",
      );

      const bareProject = await fx.request("POST", "/api/v1/projects", {
        token: fx.tokens.admin,
        body: { id: "shared", repo: bare },
      });
      expect(bareProject.body).toMatchObject({
        repo_kind: "bare",
        landing_branch: "main",
        landing_hint: null,
      });
      const url = await fx.request("POST", "/api/v1/projects", {
        token: fx.tokens.admin,
        body: { id: "hosted", repo: "https://git.example.invalid/x.git" },
      });
      expect(url.body).toMatchObject({ repo_kind: "remote", landing_branch: "main" });
      const status2 = await fx.request("GET", "/api/projects/shared/status", { token: fx.tokens.read });
      expect(status2.body.text).toContain("landing: approved work lands on main\n");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("refuses an invalid runner config with 422 listing every problem, without echoing secrets, creating nothing", async () => {
    const before = await stateSignature(fx);
    const res = await fx.request("POST", "/api/v1/projects", {
      body: {
        id: "beta",
        repo: "/x",
        runner_config: { argv: "not-an-array", timeout_second: 5, secrets: { TOKEN: 42 } },
      },
    });
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe("invalid_config");
    const paths = res.body.error.details.issues.map((i: { path: string }) => i.path);
    expect(paths).toEqual(expect.arrayContaining(["argv", "timeout_second", "secrets.TOKEN"]));
    expect(await stateSignature(fx)).toEqual(before);
  });

  it("pause, resume (operate) and stop (admin) are recorded transitions", async () => {
    await seedProject(fx, "life", [card("S00-001")]);
    const paused = await fx.request("POST", "/api/v1/projects/life/pause", {
      token: fx.tokens.operate,
      body: { reason: "lunch" },
    });
    expect(paused.status).toBe(200);
    expect(paused.body).toMatchObject({
      project: { status: "paused", status_reason: "lunch" },
      application_status: "applied",
    });
    const resumed = await fx.request("POST", "/api/v1/projects/life/resume", { token: fx.tokens.operate });
    expect(resumed.body.project.status).toBe("active");
    const claimed = await applyTransition(fx.scratch.db, "life", { kind: "claim" });
    const runId = claimed.changes.runs[0]?.id;
    const forbidden = await fx.request("POST", "/api/v1/projects/life/stop", {
      token: fx.tokens.operate,
      body: {},
    });
    expect(forbidden.status).toBe(403);
    const stopped = await fx.request("POST", "/api/v1/projects/life/stop", {
      token: fx.tokens.admin,
      body: {},
    });
    expect(stopped.body.project.status).toBe("stopped");
    expect((await getProject(fx.scratch.db, "life"))?.status).toBe("stopped");
    const run = await fx.request("GET", `/api/v1/runs/${runId}`);
    expect(run.body.status).toBe("cancelled");
    const events = await fx.request("GET", "/api/v1/projects/life/events?type=project.status_changed");
    expect(events.body.events.map((e: { data: { status: string } }) => e.data.status)).toEqual([
      "paused",
      "active",
      "stopped",
    ]);
  });
});

describe("tasks", () => {
  it("lists with status/stage/kind filters and cursor pagination, and gets one", async () => {
    await seedProject(fx, "tl", [
      card("S00-001"),
      card("S00-002"),
      { ...card("S01-001"), stage: "S01" },
      card("S00-003"),
    ]);
    await raiseQuestion(fx, "tl");
    const page1 = await fx.request("GET", "/api/v1/projects/tl/tasks?limit=2", { token: fx.tokens.read });
    expect(page1.status).toBe(200);
    expect(page1.body.tasks.map((t: { id: string }) => t.id)).toEqual(["S00-001", "S00-002"]);
    expect(page1.body.next_cursor).toMatch(/^\d+$/);
    const page2 = await fx.request(
      "GET",
      `/api/v1/projects/tl/tasks?limit=2&cursor=${page1.body.next_cursor}`,
    );
    expect(page2.body.tasks.map((t: { id: string }) => t.id)).toEqual(["S01-001", "S00-003"]);
    const page3 = await fx.request(
      "GET",
      `/api/v1/projects/tl/tasks?limit=2&cursor=${page2.body.next_cursor}`,
    );
    expect(page3.body.tasks.map((t: { id: string }) => t.id)).toEqual(["S00-001.R1"]);
    expect(page3.body.next_cursor).toBeNull();
    const s01 = await fx.request("GET", "/api/v1/projects/tl/tasks?stage=S01");
    expect(s01.body.tasks.map((t: { id: string }) => t.id)).toEqual(["S01-001"]);
    const resolvers = await fx.request("GET", "/api/v1/projects/tl/tasks?kind=resolver");
    expect(resolvers.body.tasks.map((t: { id: string }) => t.id)).toEqual(["S00-001.R1"]);
    const waiting = await fx.request("GET", "/api/v1/projects/tl/tasks?status=awaiting_input,blocked");
    expect(waiting.body.tasks.map((t: { id: string }) => t.id).sort()).toEqual(["S00-001", "S00-001.R1"]);
    const one = await fx.request("GET", "/api/v1/projects/tl/tasks/S00-001.R1", { token: fx.tokens.read });
    expect(one.body).toMatchObject({
      id: "S00-001.R1",
      kind: "resolver",
      parent_id: "S00-001",
      status: "awaiting_input",
      landing: null,
    });
    const none = await fx.request("GET", "/api/v1/projects/tl/tasks/S09-999");
    expect(none.status).toBe(404);
  });

  it("creates one task, refusing an existing id (409) and an unknown prerequisite (422)", async () => {
    await seedProject(fx, "tc", [card("S00-001")]);
    const created = await fx.request("POST", "/api/v1/projects/tc/tasks", {
      token: fx.tokens.operate,
      body: {
        id: "S00-002",
        title: "Second",
        prerequisites: ["S00-001"],
        scope: ["docs/**"],
        acceptance: "Docs exist",
      },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      id: "S00-002",
      stage: "S00",
      prerequisites: ["S00-001"],
      scope: ["docs/**"],
      acceptance: ["Docs exist"],
      status: "todo",
    });
    const again = await fx.request("POST", "/api/v1/projects/tc/tasks", {
      body: { id: "S00-002", title: "Again" },
    });
    expect(again.status).toBe(409);
    const before = await stateSignature(fx);
    const badPrereq = await fx.request("POST", "/api/v1/projects/tc/tasks", {
      body: { id: "S00-003", title: "x", prerequisites: ["S00-404"] },
    });
    expect(badPrereq.status).toBe(422);
    expect(badPrereq.body.error.details.problems[0].kind).toBe("unknown-prerequisite");
    expect(await stateSignature(fx)).toEqual(before);
  });

  it("imports a JSON or YAML task file all-or-nothing, reporting every problem with 422", async () => {
    await seedProject(fx, "ti", [card("S00-001")]);
    const json = await fx.request("POST", "/api/v1/projects/ti/tasks/import", {
      token: fx.tokens.operate,
      body: {
        tasks: [
          { id: "S01-001", title: "One", prerequisites: ["S00-001"] },
          { id: "S01-002", title: "Two", prereqs: ["S01-001"] },
        ],
      },
    });
    expect(json.status).toBe(201);
    expect(json.body).toEqual({ imported: 2, task_ids: ["S01-001", "S01-002"] });
    expect((await getTask(fx.scratch.db, "ti", "S01-001"))?.stage).toBe("S01");

    const yaml = await fx.request("POST", "/api/v1/projects/ti/tasks/import", {
      rawBody: "- id: S02-001\n  title: From YAML\n  scope: [src/**]\n",
      headers: { "Content-Type": "application/yaml" },
    });
    expect(yaml.status).toBe(201);
    expect(yaml.body.task_ids).toEqual(["S02-001"]);

    const before = await stateSignature(fx);
    const bad = await fx.request("POST", "/api/v1/projects/ti/tasks/import", {
      rawBody: [
        "- id: S03-001",
        "  title: Fine",
        "- id: S03-002",
        "  title: 42",
        "  priority: high",
        "- id: S03-003",
        "  title: Cycle a",
        "  prerequisites: [S03-004]",
        "- id: S03-004",
        "  title: Cycle b",
        "  prerequisites: [S03-003]",
        "- id: S00-001",
        "  title: Exists already",
        "- id: S03-005",
        "  title: Unknown prerequisite",
        "  prerequisites: [S09-404]",
      ].join("\n"),
      headers: { "Content-Type": "text/yaml" },
    });
    expect(bad.status).toBe(422);
    expect(bad.body.error.code).toBe("invalid_task_file");
    const kinds = bad.body.error.details.problems.map((p: { kind: string }) => p.kind);
    expect(kinds).toEqual(
      expect.arrayContaining(["schema", "cycle", "duplicate-id", "unknown-prerequisite"]),
    );
    expect(bad.body.error.message).toContain("nothing was imported");
    const syntax = await fx.request("POST", "/api/v1/projects/ti/tasks/import", {
      rawBody: "[{",
      headers: { "Content-Type": "application/json" },
    });
    expect(syntax.status).toBe(422);
    expect(syntax.body.error.details.problems[0].kind).toBe("syntax");
    expect(await stateSignature(fx)).toEqual(before);
  });

  it("cancels a task (its queued run is cancelled) and releases an awaiting resolver", async () => {
    await seedProject(fx, "tx", [card("S00-001"), card("S00-002")]);
    const q = await raiseQuestion(fx, "tx");
    const claimed = await applyTransition(fx.scratch.db, "tx", { kind: "claim" });
    const run = claimed.changes.runs[0];
    expect(run?.taskId).toBe("S00-002");
    // The coordinator would have enqueued the run; cancelling removes the queued job.
    await fx.deps.queues.runs.add("run", { runId: run?.id }, { jobId: runJobId(run?.id ?? "") });
    expect(await fx.deps.queues.runs.getJob(runJobId(run?.id ?? ""))).toBeDefined();
    const cancelled = await fx.request("POST", "/api/v1/projects/tx/tasks/S00-002/cancel", {
      token: fx.tokens.operate,
      body: { reason: "not needed" },
    });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({
      task: { id: "S00-002", status: "cancelled" },
      cancelled_runs: [run?.id],
      application_status: "applied",
    });
    expect(await fx.deps.queues.runs.getJob(runJobId(run?.id ?? ""))).toBeUndefined();
    const twice = await fx.request("POST", "/api/v1/projects/tx/tasks/S00-002/cancel", {
      token: fx.tokens.operate,
    });
    expect(twice.status).toBe(409);
    expect(twice.body.error.code).toBe("invalid_transition");

    const released = await fx.request("POST", `/api/v1/projects/tx/tasks/${q.resolverId}/release-external`, {
      token: fx.tokens.operate,
      body: { reason: "The DNS record was created by the admin." },
    });
    expect(released.status).toBe(200);
    expect(released.body.task).toMatchObject({ id: q.resolverId, status: "todo" });
    expect(released.body.decision).toMatchObject({ status: "resolved" });
    const notAwaiting = await fx.request("POST", "/api/v1/projects/tx/tasks/S00-001/release-external", {
      body: { reason: "x" },
    });
    expect(notAwaiting.status).toBe(409);
  });
});

describe("runs, events, decisions, incidents", () => {
  it("lists runs and answers one run, its prompt and its stored log with secrets redacted", async () => {
    await seedProject(fx, "rn", [card("S00-001")], { secrets: { DB_PASSWORD: "hunter2-very-secret" } });
    const claimed = await applyTransition(fx.scratch.db, "rn", { kind: "claim" });
    const runId = claimed.changes.runs[0]?.id ?? "";
    await applyTransition(
      fx.scratch.db,
      "rn",
      { kind: "submit", runId, message: "feat: done", commitSha: "abc", branchHead: "abc" },
      {
        runReport: {
          prompt: "Connect with hunter2-very-secret please",
          promptChars: 39,
          output: "password=hunter2-very-secret token ovr_abcdefghijklmnopqrstuvwxyz012345\nok\n",
          exitCode: 0,
          durationMs: 1234,
        },
      },
    );
    const list = await fx.request("GET", "/api/v1/projects/rn/runs?task=S00-001", { token: fx.tokens.read });
    expect(list.status).toBe(200);
    expect(list.body.runs).toEqual([
      expect.objectContaining({ id: runId, status: "finished", transition: "submit", duration_ms: 1234 }),
    ]);
    expect(list.body.runs[0].output).toBeUndefined();
    const run = await fx.request("GET", `/api/v1/runs/${runId}`);
    expect(run.body.output).toContain("password=[REDACTED]");
    expect(run.text).not.toContain("hunter2-very-secret");
    expect(run.text).not.toContain("ovr_abcdefghijklmnopqrstuvwxyz012345");
    const prompt = await fx.request("GET", `/api/v1/runs/${runId}/prompt`);
    expect(prompt.body).toEqual({
      run_id: runId,
      prompt: "Connect with [REDACTED] please",
      prompt_chars: 39,
    });
    const log = await fx.request("GET", `/api/v1/runs/${runId}/log`);
    expect(log.body).toMatchObject({ run_id: runId, status: "finished", truncated: false });
    expect(log.body.output).toContain("ok");
    expect(log.text).not.toContain("hunter2-very-secret");
    const missing = await fx.request("GET", "/api/v1/runs/00000000-0000-0000-0000-000000000000");
    expect(missing.status).toBe(404);
  });

  it("numbers each run among its task's runs of the same action (not the failure-retry attempt), in the list, the run and the status", async () => {
    await seedProject(fx, "numbered", [card("S00-001")]);
    const claim = async () =>
      (await applyTransition(fx.scratch.db, "numbered", { kind: "claim" })).changes.runs[0]?.id ?? "";
    const execute1 = await claim();
    await applyTransition(fx.scratch.db, "numbered", {
      kind: "submit",
      runId: execute1,
      message: "feat: first try",
      commitSha: "abc",
      branchHead: "abc",
    });
    const review1 = await claim();
    await applyTransition(fx.scratch.db, "numbered", {
      kind: "reject",
      runId: review1,
      feedback: "add a test",
    });
    // The second executor run after the reject is attempt 1 again (a new round), and its
    // failure's retry is attempt 2: "execute run #1" twice was the attempt, not the run.
    const execute2 = await claim();
    await applyTransition(fx.scratch.db, "numbered", {
      kind: "no-transition",
      runId: execute2,
      detail: "exit 1",
      crashed: false,
      maxAttempts: 3,
      backoffMs: 0,
    });
    const execute3 = await claim();

    const list = await fx.request("GET", "/api/v1/projects/numbered/runs?task=S00-001", {
      token: fx.tokens.read,
    });
    const shown = (list.body.runs as { id: string; action: string; number: number; attempt: number }[])
      .map((r) => ({ id: r.id, action: r.action, number: r.number, attempt: r.attempt }))
      .reverse();
    expect(shown).toEqual([
      { id: execute1, action: "execute", number: 1, attempt: 1 },
      { id: review1, action: "review", number: 1, attempt: 1 },
      { id: execute2, action: "execute", number: 2, attempt: 1 },
      { id: execute3, action: "execute", number: 3, attempt: 2 },
    ]);
    // One page of one run still counts the runs before it.
    const page = await fx.request("GET", "/api/v1/projects/numbered/runs?task=S00-001&limit=1", {
      token: fx.tokens.read,
    });
    expect(page.body.runs[0]).toMatchObject({ id: execute3, number: 3 });
    expect((await fx.request("GET", `/api/v1/runs/${execute2}`)).body).toMatchObject({
      number: 2,
      attempt: 1,
    });
    const status = await fx.request("GET", "/api/projects/numbered/status", { token: fx.tokens.read });
    expect(status.body.running).toEqual([
      expect.objectContaining({ run_id: execute3, number: 3, attempt: 2 }),
    ]);
    expect(status.body.text).toContain("running: execute #3 of S00-001");
  });

  it("answers usage per run (cached tokens, source), per task and per project, failed runs included", async () => {
    await seedProject(fx, "us", [card("S00-001")]);
    await fx.scratch.db.updateTable("projects").set({ budget_usd: 5 }).where("id", "=", "us").execute();
    const first = (await applyTransition(fx.scratch.db, "us", { kind: "claim" })).changes.runs[0]?.id ?? "";
    await applyTransition(fx.scratch.db, "us", {
      kind: "no-transition",
      runId: first,
      detail: "exit 1",
      crashed: false,
      maxAttempts: 3,
      backoffMs: 0,
      usage: {
        tokensIn: 3000,
        tokensOut: 100,
        tokensCached: 2000,
        costUsd: 0.5,
        source: "codex --json turn.completed",
      },
    });
    const second = (await applyTransition(fx.scratch.db, "us", { kind: "claim" })).changes.runs[0]?.id ?? "";
    await applyTransition(fx.scratch.db, "us", {
      kind: "submit",
      runId: second,
      message: "feat: done",
      commitSha: "abc",
      branchHead: "abc",
      usage: {
        tokensIn: 1000,
        tokensOut: 50,
        tokensCached: 0,
        costUsd: 0.25,
        source: "claude stream-json result",
      },
    });
    const runs = await fx.request("GET", "/api/v1/projects/us/runs?task=S00-001", { token: fx.tokens.read });
    expect(runs.body.runs).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          id: first,
          status: "failed",
          tokens_in: 3000,
          tokens_cached: 2000,
          usage_source: "codex --json turn.completed",
        }),
        expect.objectContaining({ id: second, tokens_in: 1000, usage_source: "claude stream-json result" }),
      ]),
    );
    const task = await fx.request("GET", "/api/v1/projects/us/tasks/S00-001", { token: fx.tokens.read });
    expect(task.body.usage).toEqual({
      runs: 2,
      tokens_in: 4000,
      tokens_out: 150,
      tokens_cached: 2000,
      cost_usd: 0.75,
      tokens_unpriced: 0,
      cost: "$0.7500",
    });
    const project = await fx.request("GET", "/api/v1/projects/us", { token: fx.tokens.read });
    expect(project.body).toMatchObject({
      tokens_in: 4000,
      tokens_out: 150,
      tokens_cached: 2000,
      cost_usd: 0.75,
    });
    const status = await fx.request("GET", "/api/projects/us/status", { token: fx.tokens.read });
    expect(status.body.usage).toEqual({
      tokens_in: 4000,
      tokens_out: 150,
      tokens_cached: 2000,
      cost_usd: 0.75,
      tokens_unpriced: 0,
      cost: "$0.7500",
      budget_usd: 5,
    });
    expect(status.body.text).toContain(
      "usage: 4,000 tokens in (2,000 cached), 150 out, $0.7500 of budget $5.00",
    );
  });

  it("pages events with the after cursor and lists decisions and incidents", async () => {
    await seedProject(fx, "ev", [card("S00-001")]);
    const q = await raiseQuestion(fx, "ev");
    const all = await fx.request("GET", "/api/v1/projects/ev/events?limit=1000");
    expect(all.body.events.length).toBeGreaterThan(3);
    const first = await fx.request("GET", "/api/v1/projects/ev/events?limit=2");
    expect(first.body.events).toHaveLength(2);
    const rest = await fx.request("GET", `/api/v1/projects/ev/events?after=${first.body.next_after}`);
    expect([...first.body.events, ...rest.body.events].map((e: { id: string }) => e.id)).toEqual(
      all.body.events.map((e: { id: string }) => e.id),
    );
    const typed = await fx.request(
      "GET",
      "/api/v1/projects/ev/events?type=decision.created,resolver.created",
    );
    expect(typed.body.events.map((e: { type: string }) => e.type).sort()).toEqual([
      "decision.created",
      "resolver.created",
    ]);

    const decisions = await fx.request("GET", "/api/v1/projects/ev/decisions?status=pending");
    expect(decisions.body.decisions.map((d: { id: string }) => d.id)).toEqual([q.decisionId]);
    const one = await fx.request("GET", `/api/v1/projects/ev/decisions/${q.decisionId}`);
    expect(one.body).toMatchObject({ id: q.decisionId, status: "pending" });
    const noCard = await fx.request("GET", "/api/v1/projects/ev/decisions/decision-S00-404");
    expect(noCard.status).toBe(404);

    const claimed = await applyTransition(fx.scratch.db, "ev", { kind: "claim" });
    expect(claimed.changes.runs).toHaveLength(0);
    await applyTransition(fx.scratch.db, "ev", {
      kind: "answer",
      taskId: q.resolverId,
      text: "go",
      by: "test",
    });
    const next = await applyTransition(fx.scratch.db, "ev", { kind: "claim" });
    const runId = next.changes.runs[0]?.id ?? "";
    await applyTransition(fx.scratch.db, "ev", { kind: "timeout", runId, stalled: false, seconds: 30 });
    const incidents = await fx.request("GET", "/api/v1/projects/ev/incidents", { token: fx.tokens.read });
    expect(incidents.body.incidents).toEqual([
      expect.objectContaining({ kind: "timeout", run_id: runId, task_id: q.resolverId }),
    ]);
  });
});

describe("cluster", () => {
  it("lists live workers from heartbeats and queue counts by state", async () => {
    const now = Date.now();
    await fx.deps.registry.beat({
      id: "w1",
      host: "box",
      pid: 42,
      slots: 2,
      sandbox: "bwrap",
      unsafe: false,
      currentJobs: [{ runId: "r1", projectId: "p", taskId: "S00-001", action: "execute", since: now }],
      startedAt: now - 1000,
      heartbeatAt: now,
    });
    const workers = await fx.request("GET", "/api/v1/workers", { token: fx.tokens.read });
    expect(workers.status).toBe(200);
    expect(workers.body.workers).toEqual([
      expect.objectContaining({
        id: "w1",
        host: "box",
        slots: 2,
        current_jobs: [expect.objectContaining({ run_id: "r1", task_id: "S00-001" })],
      }),
    ]);
    const queues = await fx.request("GET", "/api/v1/queues", { token: fx.tokens.read });
    expect(queues.status).toBe(200);
    expect(queues.body.runs).toMatchObject({ waiting: 0, active: 0 });
    expect(queues.body.results).toMatchObject({ waiting: 0 });
  });
});

describe("tokens", () => {
  it("admin lists, creates and revokes tokens; a revoked token is refused at once on this gateway", async () => {
    const created = await fx.request("POST", "/api/v1/tokens", { body: { name: "ci bot", scope: "read" } });
    expect(created.status).toBe(201);
    expect(created.body.token).toMatch(/^ovr_/);
    const use = await fx.request("GET", "/api/v1/projects", { token: created.body.token });
    expect(use.status).toBe(200);
    const list = await fx.request("GET", "/api/v1/tokens");
    const row = list.body.tokens.find((t: { id: string }) => t.id === created.body.id);
    expect(row).toMatchObject({ name: "ci bot", scope: "read", revoked_at: null });
    expect(list.text).not.toContain(created.body.token);
    const revoked = await fx.request("DELETE", `/api/v1/tokens/${created.body.id}`);
    expect(revoked.body).toEqual({ revoked: true, id: created.body.id });
    const refused = await fx.request("GET", "/api/v1/projects", { token: created.body.token });
    expect(refused.status).toBe(401);
    const again = await fx.request("DELETE", `/api/v1/tokens/${created.body.id}`);
    expect(again.status).toBe(404);
    const forbidden = await fx.request("GET", "/api/v1/tokens", { token: fx.tokens.operate });
    expect(forbidden.status).toBe(403);
  });
});
