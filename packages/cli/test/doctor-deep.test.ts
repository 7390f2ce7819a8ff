import { readFileSync } from "node:fs";
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createProject, createScratchDatabase, type ScratchDatabase } from "@overseer/db";
import { parseRunnerConfig } from "@overseer/project-config";
import { BWRAP_DEFAULT_UID, createSandboxDriver, SANDBOX_HOME, type SandboxDriver } from "@overseer/sandbox";
import { loadSettings } from "@overseer/settings";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deepProbeProject, sandboxVisibilityChecks } from "../src/commands/doctor-deep-probe.ts";
import { type CliIo, runCli } from "../src/index.ts";

/**
 * `overseer doctor --deep` against real bwrap: a stand-in agent CLI (a shell script outside
 * /usr, bound in through sandbox.read_only_paths like an npm-installed CLI) answers --version,
 * and answers the probe prompt only with the right key, the way a model API would. Each check
 * runs in the sandbox a run uses, and each failure names its fix.
 *
 * The probes share one bwrap driver, as a worker's runs do: a new driver builds its host layout
 * and snapshots first, seconds a probe, which the last test (the real command) still pays.
 */

let dir: string;
let cli: string;
let scratch: ScratchDatabase;
let driver: SandboxDriver;
const GOOD_KEY = "good-key-0123456789";

const FAKE_CLI = `#!/bin/sh
case "$1" in
  --version) echo "fake-agent 1.2.3 uid=$(id -u) home=$HOME cwd=$(pwd)"; exit 0 ;;
esac
prompt=$(cat)
if [ "$FAKE_API_KEY" = "${GOOD_KEY}" ]; then
  case "$prompt" in *"Reply with the single word OK"*) ;; *) echo "no probe prompt on stdin" >&2; exit 3 ;; esac
  echo '{"type":"result","subtype":"success","is_error":false,"result":"OK","total_cost_usd":0.0001,"usage":{"input_tokens":20,"output_tokens":2}}'
  exit 0
fi
echo 'API Error: 401 {"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}' >&2
exit 1
`;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "overseer-doctor-deep-"));
  cli = path.join(dir, "bin", "fake-agent");
  await mkdir(path.dirname(cli));
  await writeFile(cli, FAKE_CLI);
  await chmod(cli, 0o755);
  scratch = await createScratchDatabase();
  driver = createSandboxDriver("bwrap");
});

afterAll(async () => {
  await driver?.dispose();
  await scratch?.drop();
  await rm(dir, { recursive: true, force: true });
});

function config(overrides: Record<string, unknown> = {}) {
  return parseRunnerConfig(
    {
      argv: [cli, "-p"],
      probe_argv: [cli, "-p"],
      secrets: { FAKE_API_KEY: GOOD_KEY },
      sandbox: { read_only_paths: [path.dirname(cli)] },
      ...overrides,
    },
    "doctor deep test",
  );
}

const probeOptions = (overrides: Record<string, unknown>, timeoutMs = 30_000) => ({
  projectId: "deep",
  config: config(overrides),
  roles: ["general"],
  settings: { ...loadSettings({}), sandbox: "bwrap" as const, dataDir: path.join(dir, "data") },
  env: {},
  timeoutMs,
  driver,
});

async function probe(overrides: Record<string, unknown> = {}, timeoutMs = 30_000) {
  const checks = await deepProbeProject(probeOptions(overrides, timeoutMs));
  return new Map(checks.map((c) => [c.name.replace(/^deep: general\/execute /, ""), c]));
}

describe("doctor --deep probes each role's CLI through the run's sandbox", () => {
  it("reports the version from inside the sandbox, the key variable names, and a model call that answered", async () => {
    const checks = await probe();
    expect([...checks.keys()]).toEqual(["version", "auth variables", "model call"]);
    const version = checks.get("version");
    expect(version?.status).toBe("ok");
    // The CLI ran as the sandbox's unprivileged user, with its private home, in a scratch checkout.
    expect(version?.detail).toContain(`fake-agent 1.2.3 uid=${BWRAP_DEFAULT_UID} home=${SANDBOX_HOME}`);
    expect(version?.detail).toMatch(/cwd=\/\S*overseer-doctor-\S*\/checkout/);
    expect(checks.get("auth variables")).toMatchObject({
      status: "ok",
      detail: "set inside the sandbox: FAKE_API_KEY",
    });
    const call = checks.get("model call");
    expect(call?.status).toBe("ok");
    expect(call?.detail).toMatch(/answered in \d+\.\d s \(22 tokens, read from claude stream-json result\)/);
    // Names only: no check ever shows the key's value.
    expect(JSON.stringify([...checks.values()])).not.toContain(GOOD_KEY);
  });

  it("a refused key fails the model call naming the cause and the fix, never the key", async () => {
    const checks = await probe({ secrets: { FAKE_API_KEY: "wrong-key-0123456789" } });
    expect(checks.get("auth variables")?.status).toBe("ok");
    const call = checks.get("model call");
    expect(call?.status).toBe("fail");
    expect(call?.detail).toContain("the model API refused the credentials");
    expect(call?.fix).toMatch(/set a valid key in the project's secrets/);
    expect(JSON.stringify(call)).not.toContain("wrong-key-0123456789");
  });

  it("a CLI that keeps retrying a refused key (Claude 2.1) is named refused, not timed out", async () => {
    // Claude Code 2.1.332's own retry line, then it retries on past the probe's limit.
    const retrying = path.join(dir, "bin", "retrying-agent");
    const retry = readFileSync(
      new URL("../../harness/test/fixtures/cli-failures/claude-2.1.332-auth.txt", import.meta.url),
      "utf8",
    )
      .split("\n")
      .find((line) => line.includes('"subtype":"api_retry"')) as string;
    await writeFile(retrying, `#!/bin/sh\n[ "$1" = --version ] && exit 0\necho '${retry}'\nexec sleep 600\n`);
    await chmod(retrying, 0o755);
    const checks = await probe({ argv: [retrying, "-p"], probe_argv: [retrying, "-p"] }, 3_000);
    const call = checks.get("model call");
    expect(call?.status).toBe("fail");
    expect(call?.detail).toBe(
      "the model API refused the credentials: API call failed (HTTP 401, authentication_failed); retry 1 of 10 (the CLI was still retrying after 3 s)",
    );
    expect(call?.fix).toMatch(/^set a valid key in the project's secrets \(overseer init --project deep /);
    // --update writes the preset anew: the fix asks for every flag given at first.
    expect(call?.fix).toContain("the --model, --base-url, --agent-bin and --config you gave at first");
  });

  it("plain doctor finds each role's CLI inside the sandbox, and names one the sandbox cannot see", async () => {
    const [visible] = await sandboxVisibilityChecks(probeOptions({}));
    expect(visible).toMatchObject({
      name: "deep: general/execute in the sandbox",
      status: "ok",
      detail: `${cli} is visible as ${cli} inside the bwrap sandbox`,
    });
    const [hidden] = await sandboxVisibilityChecks(probeOptions({ sandbox: {} }));
    expect(hidden?.status).toBe("fail");
    expect(hidden?.detail).toContain(`${cli} is not visible inside the bwrap sandbox`);
    expect(hidden?.fix).toMatch(/sandbox\.read_only_paths/);
  });

  it("a key variable that does not arrive set is named with its fix", async () => {
    const checks = await probe({ secrets: {}, agent: "claude" });
    expect(checks.get("auth variables")).toMatchObject({
      status: "fail",
      detail: "not set inside the sandbox: ANTHROPIC_API_KEY",
    });
    expect(checks.get("auth variables")?.fix).toMatch(
      /export ANTHROPIC_API_KEY=… and run `overseer init --project deep --update --agent claude`/,
    );
  });

  it("a CLI outside the sandbox's binds fails the version check naming read_only_paths", async () => {
    const checks = await probe({ sandbox: {} });
    const version = checks.get("version");
    expect(version?.status).toBe("fail");
    expect(version?.fix).toMatch(/sandbox\.read_only_paths/);
  });

  it("a probe_argv that only asks for the version is a warning: the model API is not reached", async () => {
    const checks = await probe({ probe_argv: [cli, "--version"] });
    expect(checks.get("model call")).toMatchObject({ status: "warn" });
    expect(checks.get("model call")?.fix).toMatch(/probe_argv/);
  });

  it("`overseer doctor --deep --json` reports the probes with the other checks", async () => {
    await createProject(scratch.db, {
      id: "deep",
      repo: "/tmp/none",
      runnerConfig: {
        argv: [cli, "-p"],
        probe_argv: [cli, "-p"],
        secrets: { FAKE_API_KEY: GOOD_KEY },
        sandbox: { read_only_paths: [path.dirname(cli)] },
      },
    });
    const stdout: string[] = [];
    const io: CliIo = {
      out: (line) => stdout.push(line),
      err: () => undefined,
      env: {
        DATABASE_URL: scratch.url,
        REDIS_URL: "redis://127.0.0.1:6379",
        PATH: process.env.PATH,
        OVERSEER_DATA_DIR: path.join(dir, "data"),
      },
      cwd: dir,
    };
    const code = await runCli(["doctor", "--deep", "--json", "--project", "deep"], io);
    const report = JSON.parse(stdout.join("\n")) as {
      ok: boolean;
      checks: { name: string; status: string }[];
    };
    const statuses = Object.fromEntries(report.checks.map((c) => [c.name, c.status]));
    expect(statuses).toMatchObject({
      "deep: general/execute in the sandbox": "ok",
      "deep: general/execute version": "ok",
      "deep: general/execute auth variables": "ok",
      "deep: general/execute model call": "ok",
    });
    expect(code).toBe(0);
  });
});
