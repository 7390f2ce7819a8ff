import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  type GroupChild,
  type LaunchPrelude,
  launchPreludeAvailable,
  type PreludeLaunch,
  spawnGroup,
  useProcessSpawner,
  useRunNice,
} from "../src/index.ts";
import { SpawnerConnection, type SpawnRequest } from "../src/process-spawner.ts";
import { spawnerCommand } from "../src/spawner-program.ts";

/**
 * Launch preludes (src/launch-prelude.ts) applied by the Perl spawner's child between fork and
 * exec, for real: the command reports what it got (descriptors, environment, limits, session,
 * niceness). The sandbox's own tests (packages/sandbox) run bwrap through them.
 */

const dir = mkdtempSync(path.join(tmpdir(), "overseer-prelude-"));
const optionsFile = path.join(dir, "options");
const seccompFile = path.join(dir, "program");
const procsFile = path.join(dir, "cgroup.procs");
writeFileSync(optionsFile, "options\n");
writeFileSync(seccompFile, "program\n");
writeFileSync(procsFile, ""); // stands for a cgroup's cgroup.procs: a join writes into it, never creates it

const REPORT = [
  // No pipeline: while one runs, the shell itself holds its pipes, and `ls` could list them.
  "ls -m /proc/$$/fd",
  "cat <&3; cat <&4",
  "env | wc -l",
  "grep -E '^Max (cpu time|file size|core file size|address space)' /proc/$$/limits | tr -s ' '",
  "ps -o pid=,pgid=,sid=,ni= -p $$ | tr -s ' '",
].join("\n");

function prelude(steps: LaunchPrelude["steps"] = []): LaunchPrelude {
  return {
    failureExit: 125,
    steps: [
      {
        op: "open",
        fd: 3,
        path: optionsFile,
        failure: "overseer-sandbox: cannot open the bwrap options file",
      },
      { op: "join", path: procsFile, failure: `overseer-sandbox: cannot join cgroup ${procsFile}` },
      { op: "rlimit", resource: "core", value: 0, failure: null },
      { op: "rlimit", resource: "cpu", value: 77, failure: "overseer-sandbox: cannot set RLIMIT_CPU" },
      {
        op: "rlimit",
        resource: "as",
        value: 4 * 1024 ** 3,
        failure: "overseer-sandbox: cannot set RLIMIT_AS",
      },
      {
        op: "rlimit",
        resource: "fsize",
        value: 1024 ** 2,
        failure: "overseer-sandbox: cannot set RLIMIT_FSIZE",
      },
      { op: "open", fd: 4, path: seccompFile, failure: "overseer-sandbox: cannot open the seccomp program" },
      ...steps,
    ],
  };
}

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
  pid: number | undefined;
  error?: Error;
}

function collect(child: GroupChild): Promise<Outcome> {
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  return new Promise((resolve) => {
    child.once("error", (error: Error) => {
      if (child.pid === undefined) resolve({ code: null, stdout, stderr, pid: undefined, error });
    });
    child.once("close", (code: number | null) => resolve({ code, stdout, stderr, pid: child.pid }));
  });
}

/** A request straight to a Perl spawner started by `file args` (a wrapper may leak it descriptors). */
async function throughPerl(request: Partial<SpawnRequest>, wrapper?: string): Promise<Outcome> {
  const command = spawnerCommand("perl");
  if (command?.kind !== "perl") throw new Error("no perl spawner here");
  const connection = new SpawnerConnection(
    wrapper
      ? {
          kind: "perl",
          file: "/bin/bash",
          args: ["--norc", "-c", wrapper, "leaky", command.file, ...command.args],
        }
      : command,
  );
  try {
    expect(await connection.hello).toBe(true);
    const child = connection.spawn({
      file: "/bin/sh",
      args: ["-c", REPORT],
      cwd: dir,
      env: {},
      stdin: false,
      detached: true,
      ...request,
    });
    return await collect(child);
  } finally {
    connection.retire();
  }
}

afterAll(() => {
  useProcessSpawner(true);
  useRunNice(0);
  rmSync(dir, { recursive: true, force: true });
});

describe("the Perl spawner applies a launch prelude in the child", () => {
  it("closes what it inherited, opens the files on 3 and 4, joins, sets the limits, empties the environment, keeps session and niceness", async () => {
    // A spawner whose own parent leaked descriptors 47 (a directory) and 48 (a file) to it.
    const leaky = `exec 47<'${dir}' 48<'${optionsFile}'; exec "$@"`;
    const outcome = await throughPerl(
      { prelude: prelude(), env: { WORKER_SECRET: "s3cret", PATH: "/usr/bin:/bin" }, nice: 7 },
      leaky,
    );
    expect(outcome.stderr).toBe("");
    expect(outcome.code).toBe(0);
    const [fds, options, program, envCount, ...rest] = outcome.stdout.split("\n");
    expect(fds?.trim().split(", ")).toEqual(["0", "1", "2", "3", "4"]);
    expect([options, program]).toEqual(["options", "program"]);
    expect(Number(envCount)).toBe(1); // sh's own PWD, nothing of the request's env
    const limits = rest.join("\n");
    expect(limits).toContain("Max cpu time 77 77 seconds");
    expect(limits).toContain(`Max file size ${1024 ** 2} ${1024 ** 2} bytes`);
    expect(limits).toContain("Max core file size 0 0 bytes");
    expect(limits).toContain(`Max address space ${4 * 1024 ** 3} ${4 * 1024 ** 3} bytes`);
    const [pid, pgid, sid, ni] = (rest.find((line) => /^ ?\d+ \d+ \d+/.test(line)) ?? "").trim().split(" ");
    expect([pgid, sid]).toEqual([pid, pid]);
    expect(Number(pid)).toBe(outcome.pid);
    expect(Number(ni)).toBe(7);
    expect(readFileSync(procsFile, "utf8")).toBe(`${outcome.pid}\n`);
  });

  it("a step that fails ends the child with the failure exit and line; the command never runs", async () => {
    const missing = path.join(dir, "missing", "cgroup.procs");
    for (const [steps, line] of [
      [
        [{ op: "join", path: missing, failure: `overseer-sandbox: cannot join cgroup ${missing}` }],
        `cannot join cgroup ${missing}`,
      ],
      [
        [{ op: "open", fd: 5, path: missing, failure: "overseer-sandbox: cannot open the seccomp program" }],
        "cannot open the seccomp program",
      ],
    ] as const) {
      const outcome = await throughPerl({
        prelude: prelude([...steps]),
        args: ["-c", `echo RAN > ${dir}/ran`],
      });
      expect(outcome.code).toBe(125);
      expect(outcome.stderr).toBe(`overseer-sandbox: ${line}\n`);
      expect(outcome.pid).toBeDefined();
      expect(() => readFileSync(path.join(dir, "ran"))).toThrow();
      expect(() => readFileSync(missing)).toThrow();
    }
  });

  it("refuses a bad prelude as a bad request (nothing started)", async () => {
    for (const bad of [
      { failureExit: 125, steps: [{ op: "open", fd: 12, path: optionsFile, failure: "x" }] },
      { failureExit: 125, steps: [{ op: "join", path: "relative/cgroup.procs", failure: "x" }] },
      { failureExit: 125, steps: [{ op: "rlimit", resource: "nofile", value: 1, failure: "x" }] },
      { failureExit: 0, steps: [] },
    ]) {
      const outcome = await throughPerl({ prelude: bad as unknown as LaunchPrelude });
      expect(outcome.pid).toBeUndefined();
      expect(outcome.error?.message).toBe("process spawner: a bad request");
    }
  });
});

describe("spawnGroup with a preludeLaunch", () => {
  const launch = (): PreludeLaunch => ({
    file: "/bin/sh",
    args: ["-c", "echo direct; env | wc -l"],
    prelude: prelude(),
  });

  for (const [name, viaSpawner, program, expected] of [
    ["through the Perl spawner runs it, with an empty environment", true, "perl", "direct\n1\n"],
    ["through the Node spawner runs the launcher", true, "node", "launcher\n"],
    ["spawned directly runs the launcher", false, "auto", "launcher\n"],
  ] as const) {
    it(name, async () => {
      useProcessSpawner(viaSpawner, program);
      expect(await launchPreludeAvailable()).toBe(program === "perl");
      const { child } = spawnGroup("/bin/sh", ["-c", "echo launcher"], {
        cwd: dir,
        env: { PATH: "/usr/bin:/bin", WORKER_SECRET: "s3cret" },
        stdin: false,
        preludeLaunch: launch(),
      });
      const outcome = await collect(child);
      expect(outcome.stdout).toBe(expected);
      expect(outcome.code).toBe(0);
    });
  }

  it("refuses a prelude that does not parse before anything is sent", () => {
    useProcessSpawner(true, "perl");
    const bad = {
      ...launch(),
      prelude: { failureExit: 125, steps: [{ op: "open", fd: 2, path: "/x", failure: "x" }] },
    };
    expect(() =>
      spawnGroup("/bin/true", [], { cwd: dir, env: {}, stdin: false, preludeLaunch: bad as PreludeLaunch }),
    ).toThrow();
  });
});
