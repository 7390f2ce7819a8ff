import { chmodSync, existsSync, mkdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  agentBinDir,
  buildHarnessEnv,
  DEFAULT_SYSTEM_PATH,
  expandArgv,
  fakeHarnessPath,
  overseerAgentPath,
  resolveExecutable,
} from "../src/index.ts";
import { cleanupAll, makeTempDir } from "./support/harness-fixtures.ts";

afterEach(cleanupAll);

const placeholders = {
  root: "/work/run 1",
  task: "S00-028",
  role: "ci-cd",
  agent: "execute-ci-cd-0123456789ab",
  action: "execute",
  prompt_file: "/tmp/p $(x).md",
};

describe("expandArgv", () => {
  it("replaces placeholders inside elements without splitting or re-expanding", () => {
    expect(
      expandArgv(
        [
          "codex",
          "exec",
          "--cd={root}",
          "{prompt_file}",
          "{task}/{role}/{agent}/{action}",
          '{"json": {task}}',
          "{unknown}",
          "{{root}}",
        ],
        placeholders,
      ),
    ).toEqual([
      "codex",
      "exec",
      "--cd=/work/run 1",
      "/tmp/p $(x).md",
      "S00-028/ci-cd/execute-ci-cd-0123456789ab/execute",
      '{"json": S00-028}',
      "{unknown}",
      "{/work/run 1}",
    ]);
    expect(expandArgv(["{root}"], { ...placeholders, root: "{task}" })).toEqual(["{task}"]);
  });
});

describe("buildHarnessEnv", () => {
  it("sets OVERSEER_* and LUMA_*, keeps the allow-listed base, and puts overseer-agent first on PATH", () => {
    const env = buildHarnessEnv({
      base: { PATH: "/usr/bin:/bin", LANG: "C.UTF-8", OVERSEER_TASK_ID: "smuggled", DROPPED: undefined },
      projectRoot: "/co",
      taskId: "S00-001",
      role: "dev",
      agentId: "a",
      action: "review",
      promptFile: "/p.md",
      controlDir: "/ctl",
      pathPrepend: ["/opt/node/bin"],
    });
    expect(env).toEqual({
      PATH: `${agentBinDir()}:/opt/node/bin:/usr/bin:/bin`,
      LANG: "C.UTF-8",
      OVERSEER_PROJECT_ROOT: "/co",
      OVERSEER_TASK_ID: "S00-001",
      OVERSEER_ROLE: "dev",
      OVERSEER_AGENT_ID: "a",
      OVERSEER_ACTION: "review",
      OVERSEER_PROMPT_FILE: "/p.md",
      OVERSEER_CONTROL_DIR: "/ctl",
      LUMA_PROJECT_ROOT: "/co",
      LUMA_TASK_ID: "S00-001",
      LUMA_ROLE: "dev",
      LUMA_AGENT_ID: "a",
      LUMA_ACTION: "review",
      LUMA_PROMPT_FILE: "/p.md",
      LUMA_CONTROL_DIR: "/ctl",
      OVERSEER_AGENT_BIN: `${agentBinDir()}/overseer-agent`,
    });
  });

  it("uses a default PATH and an overridden agent bin dir (a sandbox mount point)", () => {
    const env = buildHarnessEnv({
      base: {},
      projectRoot: "/co",
      taskId: "t",
      role: "r",
      agentId: "a",
      action: "execute",
      promptFile: "/p",
      controlDir: "/c",
      agentBinDir: "/overseer/bin",
    });
    expect(env.PATH).toBe(`/overseer/bin:${DEFAULT_SYSTEM_PATH}`);
  });
});

describe("bundled paths", () => {
  it("point at the executable bin files", () => {
    expect(overseerAgentPath()).toBe(join(agentBinDir(), "overseer-agent"));
    for (const path of [overseerAgentPath(), fakeHarnessPath()]) {
      expect(existsSync(path)).toBe(true);
      expect(statSync(path).mode & 0o111).not.toBe(0);
    }
  });
});

describe("resolveExecutable", () => {
  it("searches PATH like execvp and returns absolute paths", () => {
    const dir = makeTempDir();
    const bin = join(dir, "bin");
    mkdirSync(bin);
    const tool = join(bin, "my-harness");
    writeFileSync(tool, "#!/bin/sh\n");
    chmodSync(tool, 0o755);
    const plain = join(bin, "plain-file");
    writeFileSync(plain, "");
    mkdirSync(join(bin, "a-dir"));

    expect(resolveExecutable("my-harness", `/nonexistent:${bin}`)).toBe(tool);
    expect(resolveExecutable("plain-file", bin)).toBeNull();
    expect(resolveExecutable("a-dir", bin)).toBeNull();
    expect(resolveExecutable("missing", bin)).toBeNull();
    expect(resolveExecutable("my-harness", undefined)).toBeNull();
    expect(resolveExecutable("", bin)).toBeNull();
    expect(resolveExecutable(tool, "")).toBe(tool);
    expect(resolveExecutable("./bin/my-harness", "", dir)).toBe(tool);
    expect(resolveExecutable("sh", "/usr/bin:/bin")).toMatch(/^\/(usr\/)?bin\/sh$/);
  });
});
