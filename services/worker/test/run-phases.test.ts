/**
 * The named phases of a run (run-executor.ts), each against real git, Redis and bwrap: the
 * branches the end-to-end loop rarely reaches — a hook failing, a landing conflict, a lost
 * compare-and-swap push — and the scope check itself.
 */
import { readFileSync } from "node:fs";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { RepoMirror } from "@overseer/git";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { promptWithConflicts } from "../src/checkout-phase.ts";
import { recordWork } from "../src/git-phase.ts";
import { resultOfWork } from "../src/run-executor.ts";
import { scopeViolations } from "../src/scope-checker.ts";
import { WorkerRig } from "./support/worker-rig.ts";

const rig = new WorkerRig();
beforeAll(() => rig.setup());
afterAll(() => rig.teardown());

describe("agent phase: hooks", () => {
  it("a failing setup hook ends the run without a transition, with the hook's output, and the agent never runs", async () => {
    const result = await rig.run(
      rig.job("echo agent-ran > src/agent.txt; echo m | overseer-agent submit --message-file -", {
        taskId: "S08-001",
        hooks: {
          setup: { argv: ["sh", "-c", "echo setting up; echo no npm >&2; exit 3"], timeoutMs: 30_000 },
        },
      }),
    );
    expect(result.outcome).toMatchObject({ kind: "no-transition", crashed: false });
    expect(result.outcome.kind === "no-transition" && result.outcome.detail).toMatch(
      /^setup hook failed \(exit 3\):\n[\s\S]*no npm/,
    );
    expect(result.timing.spawnedAt).toBeNull();
    expect(await rig.head("overseer/task/S08-001")).toBeNull();
  });

  it("a failing after_run hook ends the run without a transition, keeping the agent's output", async () => {
    const result = await rig.run(
      rig.job("echo agent says hi; echo m | overseer-agent submit --message-file -", {
        taskId: "S08-002",
        hooks: { afterRun: { argv: ["sh", "-c", "echo lint failed; exit 4"], timeoutMs: 30_000 } },
      }),
    );
    expect(result.outcome.kind === "no-transition" && result.outcome.detail).toMatch(
      /^after_run hook failed \(exit 4\):\n[\s\S]*lint failed/,
    );
    expect(result.output).toContain("agent says hi");
    expect(await rig.head("overseer/task/S08-002")).toBeNull();
  });
});

describe("agent phase: a sandbox policy that cannot be built", () => {
  it("is a configuration error naming the field and the fix, not a failure to retry", async () => {
    const result = await rig.run(
      rig.job("echo never runs", { taskId: "S08-020", readOnlyPaths: ["/proc/self"] }),
    );
    expect(result.outcome).toMatchObject({ kind: "misconfigured", reason: "configuration_error" });
    const message = result.outcome.kind === "misconfigured" ? result.outcome.message : "";
    expect(message).toMatch(/^The project's sandbox cannot be built: invalid sandbox spec: readOnlyBinds/);
    expect(message).toMatch(/Fix: correct sandbox\.\* .*overseer init --project p-/);
    expect(result.output).toBe("");
  });
});

describe("agent phase: overseer-agent without PATH or environment", () => {
  it("a wrapper that resets PATH still reaches overseer-agent through OVERSEER_AGENT_BIN inside the sandbox", async () => {
    const result = await rig.run(
      rig.job(
        'export PATH=/usr/bin; command -v overseer-agent && exit 9; echo "Reset PATH" > /tmp/m; "$OVERSEER_AGENT_BIN" submit --message-file /tmp/m',
        { taskId: "S08-030" },
      ),
    );
    expect(result.outcome).toMatchObject({
      kind: "transition",
      transition: { kind: "submit", message: "Reset PATH\n" },
    });
  });

  it("env -i overseer-agent submit ends the run with the submit: found on the PATH-less search, the control dir at its fixed place", async () => {
    const result = await rig.run(
      rig.job(
        'echo no-env > src/no-env.txt; echo "From env -i" > /tmp/m; env -i overseer-agent submit --message-file /tmp/m',
        {
          taskId: "S08-031",
        },
      ),
    );
    expect(result.outcome).toMatchObject({
      kind: "transition",
      transition: { kind: "submit", message: "From env -i\n" },
    });
    expect(await rig.head("overseer/task/S08-031")).not.toBeNull();
  });

  it("env -i with the absolute path (OVERSEER_AGENT_BIN or /bin/overseer-agent) ends the run too", async () => {
    for (const [taskId, command] of [
      ["S08-032", '"$OVERSEER_AGENT_BIN"'],
      ["S08-033", "/bin/overseer-agent"],
    ] as const) {
      const result = await rig.run(
        rig.job(`echo "Absolute" > /tmp/m; env -i ${command} submit --message-file /tmp/m`, { taskId }),
      );
      expect(result.outcome, command).toMatchObject({
        kind: "transition",
        transition: { kind: "submit", message: "Absolute\n" },
      });
    }
  });
});

describe("usage of runs that end without a transition", () => {
  it("a CLI that fails or times out still reports what it spent, read from its stream", async () => {
    const turn =
      '{"type":"turn.completed","usage":{"input_tokens":5000,"cached_input_tokens":4000,"output_tokens":60}}';
    const failed = await rig.run(
      rig.job(`echo '${turn}'; echo 'ERROR: stream disconnected' >&2; exit 1`, {
        taskId: "S08-010",
        agent: "codex",
        price: { input_usd_per_mtok: 10, output_usd_per_mtok: 30, cached_input_usd_per_mtok: 1 },
      }),
    );
    expect(failed.outcome.kind).toBe("no-transition");
    expect(failed.usage).toMatchObject({
      tokensIn: 5000,
      tokensCached: 4000,
      tokensOut: 60,
      source: "codex --json turn.completed",
    });
    expect(failed.usage?.costUsd).toBeCloseTo((1000 * 10 + 4000 * 1 + 60 * 30) / 1_000_000, 12);

    const timedOut = await rig.run(
      rig.job(`echo '${turn}'; sleep 30`, { taskId: "S08-011", agent: "codex", timeoutMs: 1500 }),
    );
    expect(timedOut.outcome.kind).toBe("timeout");
    expect(timedOut.usage).toMatchObject({ tokensIn: 5000, source: "codex --json turn.completed" });
  });

  it("Copilot's session file in the control dir is read after the run (its stdout has no usage)", async () => {
    const shutdown =
      '{"type":"session.shutdown","data":{"modelMetrics":{"gpt-5":{"usage":{"inputTokens":900,"outputTokens":30,"cacheReadTokens":500,"cacheWriteTokens":0}}}}}';
    const result = await rig.run(
      rig.job(
        `dir="$OVERSEER_CONTROL_DIR/.copilot-home/session-state/s1"; mkdir -p "$dir"; echo '${shutdown}' > "$dir/events.jsonl"; echo 'Total usage est: 1 Premium request'; echo m | overseer-agent submit --message-file -`,
        { taskId: "S08-012", agent: "copilot", scope: ["**"] },
      ),
    );
    expect(result.outcome.kind).toBe("transition");
    expect(result.usage).toEqual({
      tokensIn: 900,
      tokensOut: 30,
      tokensCached: 500,
      source: "copilot session-state events.jsonl",
    });
  });
});

describe("git phase", () => {
  it("a landing conflict keeps the approve but lands nothing, naming the files", async () => {
    const submit = await rig.run(
      rig.job("echo mine > src/app.txt; echo 'Change app' | overseer-agent submit --message-file -", {
        taskId: "S08-003",
      }),
    );
    const head = submit.branchHead;
    await rig.commitOnRemote("main", { "src/app.txt": "theirs\n" }, "Concurrent change on main");
    const main = await rig.head("main");
    const review = await rig.run(rig.approveJob("S08-003", head, { executorAgentId: "someone-else" }));
    // The approve stands; the result says it did not land and why (the coordinator records
    // land-failed, and the next executor starts with main merged in).
    expect(review.outcome).toMatchObject({ kind: "transition", transition: { kind: "approve" } });
    expect(review.landingFailure).toMatchObject({ reason: "conflict", files: ["src/app.txt"] });
    expect(review.landingFailure?.details).toContain("CONFLICT (content): Merge conflict in src/app.txt");
    expect(review.landedSha).toBeNull();
    expect(await rig.head("main")).toBe(main);
  });

  it("pull_request mode: an approve lands nothing on main and fast-forwards the pull request branch", async () => {
    const pr = "overseer/pr/S08-020";
    const landing = { strategy: "squash" as const, pullRequestBranch: pr };
    const first = await rig.run(
      rig.job("echo one > src/pr.txt; echo 'First' | overseer-agent submit --message-file -", {
        taskId: "S08-020",
      }),
    );
    const main = await rig.head("main");
    const approved = await rig.run(
      rig.approveJob("S08-020", first.branchHead, { executorAgentId: "someone-else", landing }),
    );
    expect(approved.outcome).toMatchObject({ kind: "transition", transition: { kind: "approve" } });
    expect(approved.landedSha).toBeNull();
    expect(approved.landingFailure).toBeNull();
    expect(approved.pullRequestHead).toEqual({ branch: pr, sha: first.branchHead });
    expect(await rig.head(pr)).toBe(first.branchHead);
    expect(await rig.head("main")).toBe(main);
    // A redelivered approve publishes the same head again: nothing moves.
    const again = await rig.run(
      rig.approveJob("S08-020", first.branchHead, { executorAgentId: "someone-else", landing }),
    );
    expect(again.pullRequestHead).toEqual({ branch: pr, sha: first.branchHead });

    // The fix after review feedback: a later approved head descends from the first.
    const second = await rig.run(
      rig.job("echo two > src/pr.txt; echo 'Second' | overseer-agent submit --message-file -", {
        taskId: "S08-020",
        expectedTaskHead: first.branchHead,
      }),
    );
    const approvedAgain = await rig.run(
      rig.approveJob("S08-020", second.branchHead, { executorAgentId: "someone-else", landing }),
    );
    expect(approvedAgain.pullRequestHead).toEqual({ branch: pr, sha: second.branchHead });
    expect(await rig.head(pr)).toBe(second.branchHead);
    expect(await rig.head("main")).toBe(main);
  });

  it("pull_request mode: a pull request branch someone else moved is never overwritten", async () => {
    const pr = "overseer/pr/S08-021";
    const landing = { strategy: "squash" as const, pullRequestBranch: pr };
    const first = await rig.run(
      rig.job("echo one > src/pr2.txt; echo 'First' | overseer-agent submit --message-file -", {
        taskId: "S08-021",
      }),
    );
    await rig.run(rig.approveJob("S08-021", first.branchHead, { executorAgentId: "someone-else", landing }));
    const theirs = await rig.commitOnRemote(pr, { "src/by-hand.txt": "x\n" }, "Pushed by hand");
    const second = await rig.run(
      rig.job("echo two > src/pr2.txt; echo 'Second' | overseer-agent submit --message-file -", {
        taskId: "S08-021",
        expectedTaskHead: first.branchHead,
      }),
    );
    const refused = await rig.run(
      rig.approveJob("S08-021", second.branchHead, { executorAgentId: "someone-else", landing }),
    );
    expect(refused.pullRequestHead).toBeUndefined();
    expect(refused.landingFailure).toMatchObject({ reason: "conflict", files: [] });
    expect(refused.landingFailure?.details).toContain(`${pr} is at ${theirs}`);
    expect(await rig.head(pr)).toBe(theirs);
  });

  it("the next executor starts on main merged in, markers committed, and its submit amends that merge", async () => {
    const submit = await rig.run(
      rig.job(
        "printf 'a\\nTASK\\nc\\n' > src/m.txt; echo 'Task side' | overseer-agent submit --message-file -",
        {
          taskId: "S08-010",
        },
      ),
    );
    const taskHead = submit.branchHead as string;
    const main = await rig.commitOnRemote("main", { "src/m.txt": "a\nMAIN\nc\n" }, "Main side");
    // The agent proves what it sees: the markers in the file and a clean status; then resolves.
    const script = [
      "grep -c '^<<<<<<< ' src/m.txt > .overseer-seen || true",
      "git status --porcelain >> .overseer-seen",
      "cat .overseer-seen; rm .overseer-seen",
      "printf 'a\\nTASK+MAIN\\nc\\n' > src/m.txt",
      "echo 'Resolve the conflict with main' | overseer-agent submit --message-file -",
    ].join("; ");
    const resolved = await rig.run(
      rig.job(script, {
        taskId: "S08-010",
        expectedTaskHead: taskHead,
        mergeMain: { reason: "conflict", files: ["src/m.txt"] },
        prompt: "resolve",
      }),
    );
    expect(resolved.outcome).toMatchObject({ kind: "transition", transition: { kind: "submit" } });
    expect(resolved.output.trim().split("\n")[0]).toBe("1");
    expect(resolved.output).not.toMatch(/^(UU|AA| M|M ) /m);
    const head = await rig.head("overseer/task/S08-010");
    expect(head).toBe(resolved.branchHead);
    // One merge commit (task head, main) holding the resolution: no commit with markers was pushed.
    expect((await rig.git("rev-list", "--parents", "-n", "1", head as string)).split(" ").slice(1)).toEqual([
      taskHead,
      main,
    ]);
    expect(await rig.git("show", `${head}:src/m.txt`)).toBe("a\nTASK+MAIN\nc");
    expect(await rig.git("log", "--format=%s", "-n", "1", head as string)).toBe(
      "Resolve the conflict with main",
    );
    expect(resolved.scopeViolations).toEqual([]);
  });

  it("names files that conflict now but were not recorded (main moved since the landing failed)", async () => {
    const submit = await rig.run(
      rig.job(
        "echo T1 > src/p1.txt; echo T2 > src/p2.txt; echo 'Both' | overseer-agent submit --message-file -",
        {
          taskId: "S08-012",
        },
      ),
    );
    await rig.commitOnRemote("main", { "src/p1.txt": "M1\n", "src/p2.txt": "M2\n" }, "Main touches both");
    const script = [
      'grep -c "^- src/p2.txt$" "$OVERSEER_PROMPT_FILE"',
      "grep -c '^<<<<<<< ' src/p1.txt src/p2.txt",
      "echo both > src/p1.txt; echo both > src/p2.txt",
      "echo 'Resolve' | overseer-agent submit --message-file -",
    ].join("; ");
    const resolved = await rig.run(
      rig.job(script, {
        taskId: "S08-012",
        expectedTaskHead: submit.branchHead,
        mergeMain: { reason: "conflict", files: ["src/p1.txt"] },
        prompt: "Resolve the conflict in src/p1.txt",
      }),
    );
    expect(resolved.outcome).toMatchObject({ kind: "transition", transition: { kind: "submit" } });
    expect(resolved.output).toMatch(/^1\nsrc\/p1\.txt:1\nsrc\/p2\.txt:1\n/);
  });

  it("promptWithConflicts leaves the prompt alone when the recorded files cover the conflicts", () => {
    const job = {
      prompt: "P\n",
      mergeMain: { reason: "conflict" as const, files: ["a"] },
      mainBranch: "main",
    };
    expect(promptWithConflicts(job, { conflicts: ["a"] })).toBe("P\n");
    expect(promptWithConflicts(job, null)).toBe("P\n");
    expect(promptWithConflicts(job, { conflicts: ["a", "b"] })).toMatch(
      /^P\n\n# Conflicts with the current `main`\n\n`main` moved since[^\n]*\n- b\n$/,
    );
    // A pull request whose base moved (rule 18) names no files: the merge names them all.
    const pullRequest = {
      ...job,
      landingBranch: "overseer/pr/A",
      mergeMain: { reason: "conflict" as const, files: [] },
    };
    expect(promptWithConflicts(pullRequest, { conflicts: ["a", "b"] })).toMatch(
      /^P\n\n# Conflicts with the current `overseer\/pr\/A`\n\nMerging `overseer\/pr\/A` left conflict markers in these files\. Resolve them:\n- a\n- b\n$/,
    );
  });

  it("a failing check command on the merged tree lands nothing and reports the output's tail", async () => {
    const submit = await rig.run(
      rig.job("echo task > src/check-a.txt; echo 'A' | overseer-agent submit --message-file -", {
        taskId: "S08-011",
      }),
    );
    await rig.commitOnRemote("main", { "src/check-b.txt": "main\n" }, "Unrelated main change");
    const main = await rig.head("main");
    const check = {
      argv: [
        "sh",
        "-c",
        "ls src; test -f src/check-a.txt && test -f src/check-b.txt && echo both-present; exit 7",
      ],
      timeoutMs: 30_000,
    };
    const review = await rig.run(
      rig.approveJob("S08-011", submit.branchHead, {
        executorAgentId: "someone-else",
        landing: { strategy: "merge", check },
      }),
    );
    expect(review.landingFailure).toMatchObject({ reason: "check_failed", files: [] });
    expect(review.landingFailure?.details).toMatch(/^check command failed \(exit 7\):\n[\s\S]*both-present/);
    expect(review.landedSha).toBeNull();
    expect(await rig.head("main")).toBe(main);

    // The same check passing lands the merge.
    const passing = await rig.run(
      rig.approveJob("S08-011", submit.branchHead, {
        executorAgentId: "someone-else",
        landing: {
          strategy: "merge",
          check: { argv: ["sh", "-c", "test -f src/check-b.txt"], timeoutMs: 30_000 },
        },
      }),
    );
    expect(passing.landingFailure).toBeNull();
    expect(passing.landedSha).toBe(await rig.head("main"));
  });

  it("an approve lands from a mirror however old (never fresh here) without a fetch, by the compare-and-swap push", async () => {
    const [main, dir] = [(await rig.head("main")) as string, path.join(rig.dir, "aged")];
    await rig.git("update-ref", "refs/heads/overseer/task/S08-005", main);
    const head = await rig.commitOnRemote("overseer/task/S08-005", { "src/aged.txt": "a\n" }, "Aged");
    const mirror = new RepoMirror({ dataDir: dir, projectId: "aged", remote: rig.remote });
    await mirror.ensure();
    const worktree = await mirror.addWorktree({ base: head, path: path.join(dir, "checkout") });
    process.env.GIT_TRACE2_EVENT = path.join(dir, "trace.json");
    const approve = { kind: "transition", transition: { version: 1, kind: "approve" } } as const;
    const scope = { staged: worktree.stage(), checked: Promise.resolve([]) };
    const ctx = { taskHead: head, base: head, runDir: dir, scope };
    const neverFresh = { logger: rig.logger, mirrorFreshness: { lastSync: new Map(), freshMs: 0 } };
    const work = await recordWork(
      rig.approveJob("S08-005", head),
      neverFresh,
      mirror,
      worktree,
      approve,
      ctx,
    ).finally(() => delete process.env.GIT_TRACE2_EVENT);
    const landed = await rig.head("main");
    expect(work).toMatchObject({ kind: "ok", commits: { landedSha: landed, landedBranch: "main" } });
    expect(await rig.git("rev-parse", `${landed}^`)).toBe(main);
    const trace = readFileSync(path.join(dir, "trace.json"), "utf8").split("\n");
    expect(trace.filter((l) => l.includes('"event":"start"') && l.includes('"fetch"'))).toEqual([]);
    await worktree.remove();
  });

  it("losing the compare-and-swap push leaves the branch as the winner pushed it and retries the run", async () => {
    const mirror = new RepoMirror({
      dataDir: path.join(rig.dir, "cas"),
      projectId: "cas",
      remote: rig.remote,
    });
    await mirror.ensure();
    const base = (await mirror.resolveRef("main")) as string;
    // The run started when the task had no branch; meanwhile another run pushed one.
    const winner = await rig.commitOnRemote("main", { "src/other.txt": "x\n" }, "unrelated");
    await rig.git("update-ref", "refs/heads/overseer/task/S08-004", winner);
    const worktree = await mirror.addWorktree({
      base,
      path: path.join(rig.dir, "cas", "checkout"),
      branch: "overseer/task/S08-004",
    });
    await writeFile(path.join(worktree.path, "src", "mine.txt"), "mine\n");
    const job = rig.job("unused", { taskId: "S08-004" });
    const outcome = {
      kind: "transition" as const,
      transition: { version: 1 as const, kind: "submit" as const, message: "Mine" },
    };
    const work = await recordWork(
      job,
      { logger: rig.logger, mirrorFreshness: { lastSync: new Map(), freshMs: 0 } },
      mirror,
      worktree,
      outcome,
      {
        taskHead: null,
        base,
        runDir: path.join(rig.dir, "cas"),
        scope: { staged: worktree.stage(), checked: Promise.resolve([]) },
      },
    );
    expect(work.kind).toBe("lost-race");
    expect(await rig.head("overseer/task/S08-004")).toBe(winner);
    const [asOutcome] = resultOfWork(work, outcome, {}, []);
    expect(asOutcome).toMatchObject({ kind: "no-transition", crashed: false });
    expect(asOutcome.kind === "no-transition" && asOutcome.detail).toMatch(/moved concurrently.*retried/);
    await worktree.remove();
  });
});

describe("outcome phase: scopeViolations", () => {
  const change = (p: string, extra = {}) => ({
    path: p,
    status: "modified" as const,
    isSymlink: false,
    isSubmodule: false,
    ...extra,
  });

  it("lists paths outside the scope, both sides of a rename, and exempts metadata globs", () => {
    expect(
      scopeViolations(
        [
          change("src/a.ts"),
          change("README.md"),
          change("src/b.ts", { oldPath: "lib/b.ts" }),
          change(".overseer/notes.md"),
          change("gen/schema.json"),
        ],
        ["src/**"],
        ["gen/*.json", ".overseer/**"],
      ),
    ).toEqual(["README.md", "lib/b.ts"]);
  });

  it("flags a symlink that leaves the checkout even inside the scope, and embedded repositories", () => {
    expect(
      scopeViolations(
        [
          change("src/link", { isSymlink: true, symlinkTarget: "../../etc/passwd" }),
          change("src/ok-link", { isSymlink: true, symlinkTarget: "a.ts" }),
          change("src/vendor", { isSubmodule: true }),
        ],
        ["src/**"],
        [],
      ),
    ).toEqual([
      "src/link -> ../../etc/passwd (symlink out of the checkout)",
      "src/vendor (embedded repository)",
    ]);
  });

  it("is empty when every change is in scope", () => {
    expect(scopeViolations([change("src/x/y.ts")], ["src/**"], [])).toEqual([]);
  });
});

describe("outcome phase: causes no retry can fix, read from the CLI's real output", () => {
  const recorded = (name: string) =>
    readFileSync(
      new URL(`../../../packages/harness/test/fixtures/cli-failures/${name}`, import.meta.url),
      "utf8",
    );

  it("Claude Code's first refused retry ends the run at once as a configuration error", async () => {
    // What claude 2.1.332 printed before its second retry; then it would retry for minutes.
    const lines = recorded("claude-2.1.332-auth.txt").split("\n");
    const firstRetry = lines.findIndex((line) => line.includes('"subtype":"api_retry"'));
    const fake = await mkdtemp(path.join(tmpdir(), "fake-claude-"));
    await writeFile(path.join(fake, "start.jsonl"), `${lines.slice(0, firstRetry + 1).join("\n")}\n`);
    const result = await rig.run(
      rig.job(`cat ${fake}/start.jsonl; sleep 600; echo still-retrying`, {
        taskId: "S08-040",
        agent: "claude",
        timeoutMs: 900_000,
        readOnlyPaths: [fake],
      }),
    );
    expect(result.outcome).toMatchObject({ kind: "misconfigured", reason: "configuration_error" });
    const message = result.outcome.kind === "misconfigured" ? result.outcome.message : "";
    expect(message).toMatch(
      /^the model API refused the credentials: API call failed \(HTTP 401, authentication_failed\); retry 1 of 10\. Fix: set a valid key/,
    );
    expect(message).toContain(`overseer start --project ${result.projectId}`);
    expect(result.output).not.toContain("still-retrying");
    expect(message).not.toContain('"session_id"');
  });

  it("a CLI the sandbox cannot see is a configuration error (cli_missing), not a failure to retry", async () => {
    // On the worker's host, outside every path bound into the sandbox.
    const outside = await mkdtemp(path.join(tmpdir(), "invisible-cli-"));
    const cli = path.join(outside, "agent-cli");
    await writeFile(cli, "#!/bin/sh\necho hello\n", { mode: 0o755 });
    const result = await rig.run({ ...rig.job("unused", { taskId: "S08-041" }), argv: [cli, "exec"] });
    expect(result.outcome).toMatchObject({ kind: "misconfigured", reason: "configuration_error" });
    const message = result.outcome.kind === "misconfigured" ? result.outcome.message : "";
    expect(message).toContain(`the agent CLI cannot be started inside the sandbox: bwrap: execvp ${cli}`);
    expect(message).toContain("sandbox.read_only_paths");
  });

  it("a model that ends without calling overseer-agent is marked as not following the protocol, with its last words", async () => {
    const said =
      '{"type":"item.completed","item":{"id":"item_3","type":"agent_message","text":"I created hello.txt."}}';
    const ran =
      '{"type":"item.completed","item":{"id":"item_2","type":"command_execution","command":"bash -lc \\"echo hello > hello.txt\\"","aggregated_output":"","exit_code":0,"status":"completed"}}';
    const result = await rig.run(
      rig.job(`echo '{"type":"thread.started","thread_id":"t1"}'; echo '${ran}'; echo '${said}'; exit 0`, {
        taskId: "S08-042",
        agent: "codex",
      }),
    );
    expect(result.outcome).toMatchObject({
      kind: "no-transition",
      crashed: false,
      protocolNotFollowed: true,
    });
    const detail = result.outcome.kind === "no-transition" ? result.outcome.detail : "";
    expect(detail).toBe(
      'the harness ended without a transition: exit 0 without calling overseer-agent.\nThe model\'s last message: I created hello.txt.\nIts last command (exit 0): bash -lc "echo hello > hello.txt"',
    );
  });

  it("a run that ends without a transition names its failing command and the tail of its output, not its JSON", async () => {
    const failed =
      '{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"npm test","aggregated_output":"FAIL src/app.test.ts\\nExpected 2, received 3\\n","exit_code":1,"status":"completed"}}';
    const passed =
      '{"type":"item.completed","item":{"id":"item_2","type":"command_execution","command":"ls","aggregated_output":"src\\n","exit_code":0,"status":"completed"}}';
    const said =
      '{"type":"item.completed","item":{"id":"item_3","type":"agent_message","text":"The tests fail."}}';
    const result = await rig.run(
      rig.job(`printf '%s\\n' '${failed}' '${passed}' '${said}'; exit 3`, {
        taskId: "S08-043",
        agent: "codex",
      }),
    );
    const detail = result.outcome.kind === "no-transition" ? result.outcome.detail : "";
    expect(detail).toBe(
      [
        "the harness ended without a transition: exit 3 without calling overseer-agent.",
        "The model's last message: The tests fail.",
        "The failing command (exit 1): npm test",
        "Its output, last lines:",
        "  FAIL src/app.test.ts",
        "  Expected 2, received 3",
      ].join("\n"),
    );
  });
});
