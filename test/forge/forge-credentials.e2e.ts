/**
 * The forge credentials never enter a sandbox (README "Land through pull requests"): a project in
 * pull_request mode on the GitHub double, a real coordinator whose forge runner uses the token to
 * open the pull request, and a real worker running each run in bwrap. Every run (the executor
 * and the reviewer) dumps what it can see — its environment, every process's environment in the
 * sandbox, its HOME and control dir with their files, the checkout's git config and its prompt —
 * and none of it holds the token, while the pull request the token opened is there. The same
 * with a GitHub App: neither its private key nor the installation tokens minted with it.
 *
 * The token has no well-known shape (no `ghp_` prefix), so no redactor would hide it: were it
 * visible, the stored output would carry it. A plain `env` value shows the dump is stored as seen.
 */
import { randomBytes } from "node:crypto";
import { GitHubDouble } from "@overseer/test-support";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClusterFixture } from "../support/cluster-fixture.ts";

const REPO = "acme/app";
const TOKEN = `forge-canary-${randomBytes(16).toString("hex")}`;
const PROBE = `probe-${randomBytes(8).toString("hex")}`;
const BOT = { login: "overseer-bot", token: TOKEN };
const APP = { id: 9001, slug: "overseer-app", installationId: 4242 };
const APP_REPO = "acme/app-via-app";

/** What a run shows of its world, then its transition (approve when reviewing, else submit). */
const DUMP = [
  "cat >/dev/null",
  'echo "== env"; env | sort',
  'echo "== processes"; for f in /proc/[0-9]*/environ; do tr "\\000" "\\n" <"$f" 2>/dev/null; done',
  'echo "== home $HOME"; ls -la "$HOME"; find "$HOME" -type f -size -1024k -exec cat {} + 2>/dev/null',
  'echo "== control $OVERSEER_CONTROL_DIR"; ls -la "$OVERSEER_CONTROL_DIR"',
  'find "$OVERSEER_CONTROL_DIR" -type f -size -1024k -exec cat {} + 2>/dev/null',
  'echo "== git"; git -C "$OVERSEER_PROJECT_ROOT" config --list 2>&1',
  'echo "== prompt"; cat "$OVERSEER_PROMPT_FILE"',
  'echo "== end"',
  'if [ "$OVERSEER_ACTION" = review ]; then exec overseer-agent approve --feedback "seen"; fi',
  'mkdir -p "$OVERSEER_PROJECT_ROOT/src" && echo "$OVERSEER_ACTION" >"$OVERSEER_PROJECT_ROOT/src/a.txt"',
  'exec overseer-agent submit --message "Add a.txt"',
].join("\n");

let forge: GitHubDouble;
const cluster = new ClusterFixture({ sandbox: "bwrap" });

beforeAll(async () => {
  forge = await GitHubDouble.start();
  forge.addUser(BOT);
  for (const repository of [REPO, APP_REPO]) {
    await forge.createRepository(repository, { "README.md": "# app\n" });
    await forge.protectBranch(repository, ["main"]);
  }
  await cluster.setup();
  // GitHub writes unpaced (OVERSEER_GITHUB_WRITE_INTERVAL_MS=0): the double sets no limit.
  await cluster.startCoordinator("coord-credentials", { forgeRetryBaseMs: 20, githubWriteIntervalMs: 0 });
  await cluster.startWorker(1);
}, 120_000);

afterAll(async () => {
  await cluster.teardown();
  await forge?.close();
});

/**
 * Runs T-1 of `project` (dumping every run's world) until its pull request is open on
 * `repository`, then checks that no stored output, prompt or live log holds any of `secrets`.
 */
async function dumpAndCheck(
  project: string,
  repository: string,
  forgeConfig: Record<string, unknown>,
  secrets: () => readonly string[],
): Promise<void> {
  await cluster.addProject({
    id: project,
    tasks: [{ id: "T-1", title: "Add a.txt", scope: ["src/**"] }],
    remote: () => forge.cloneUrl(repository),
    runnerConfig: ClusterFixture.fakeRunnerConfig({
      argv: ["/bin/sh", "-c", DUMP],
      env: { PROBE_VALUE: PROBE },
      landing: { mode: "pull_request", pull_request: { poll_seconds: 1 } },
      forge: { kind: "github", url: forge.url, repository, ...forgeConfig },
    }),
  });
  // The credentials are in use on the coordinator's host: its forge runner opened the pull request.
  const state = await cluster.waitForProject(
    project,
    (s) => s.tasks.get("T-1")?.pullRequest?.number != null,
    150_000,
  );
  expect(state.tasks.get("T-1")?.status).toBe("pr_open");
  expect(forge.pulls(repository).map((p) => p.head)).toEqual(["overseer/pr/T-1"]);
  const runs = await cluster.scratch.db
    .selectFrom("runs")
    .select(["id", "action", "output", "prompt"])
    .where("project_id", "=", project)
    .orderBy("created_at")
    .execute();
  expect(runs.map((r) => r.action)).toEqual(["execute", "review"]);
  const hidden = secrets();
  expect(hidden.length).toBeGreaterThan(0);
  for (const run of runs) {
    const output = run.output ?? "";
    // The dump ran to its end inside the sandbox, and what it saw was stored as it was.
    for (const part of ["== env", "== processes", "== home", "== control", "== git", "== prompt", "== end"])
      expect(output, `${run.action}: ${part}`).toContain(part);
    expect(output).toContain(`PROBE_VALUE=${PROBE}`);
    expect(output).toContain("OVERSEER_CONTROL_DIR=");
    expect(output).not.toContain("[REDACTED]");
    const log = JSON.stringify(await cluster.live.readLog(run.id));
    for (const secret of hidden) {
      expect(output, `${run.action} saw a forge credential`).not.toContain(secret);
      expect(run.prompt ?? "").not.toContain(secret);
      expect(log).not.toContain(secret);
    }
  }
  // The executor's work reached the PR branch through the worker's own git access.
  expect(await forge.git.git(repository, ["show", "refs/heads/overseer/pr/T-1:src/a.txt"])).toBe("execute");
  expect(forge.takeViolations()).toEqual([]);
}

describe("forge credentials stay on the coordinator's host", () => {
  it("no run sees the token: not in its env, any process's env, HOME, control dir, git config or prompt", async () => {
    await dumpAndCheck("pr-credentials", REPO, { token: TOKEN }, () => [TOKEN, TOKEN.slice(-16)]);
  }, 240_000);

  it("nor a GitHub App's private key or the installation tokens the coordinator minted with it", async () => {
    const key = forge.addApp(APP);
    const keyLines = key.split("\n").filter((line) => line.length >= 40 && !line.startsWith("-----"));
    await dumpAndCheck(
      "pr-credentials-app",
      APP_REPO,
      { app: { id: APP.id, installation_id: APP.installationId, private_key: key } },
      () => [...keyLines, ...forge.appTokens.map((t) => t.token)],
    );
    expect(forge.appTokens.length).toBeGreaterThan(0);
    expect(forge.pulls(APP_REPO)[0]?.author).toBe("overseer-app[bot]");
  }, 240_000);
});
