import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import {
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import {
  isProcessAlive,
  processSpawnerPid,
  type SpawnedGroup,
  spawnGroup,
  useProcessSpawner,
  useRunNice,
} from "../src/index.ts";

const ENV = { PATH: process.env.PATH ?? "/usr/bin:/bin", LC_ALL: "C" };
const REPO_ROOT = fileURLToPath(new URL("../../..", import.meta.url));
const PERL = realpathSync(execFileSync("sh", ["-c", "command -v perl"]).toString().trim());

interface Ended {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: Buffer;
  stderr: Buffer;
  error: Error | undefined;
}

/** Runs `sh -c script` in a new group; resolves once it closed (or failed to start). */
function sh(script: string, options: { input?: Buffer | string; cwd?: string } = {}) {
  const group = spawnGroup("sh", ["-c", script], {
    cwd: options.cwd ?? REPO_ROOT,
    env: ENV,
    stdin: options.input !== undefined,
  });
  return { group, ended: ended(group, options.input) };
}

function ended(group: SpawnedGroup, input?: Buffer | string): Promise<Ended> {
  const { child } = group;
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
  child.stderr.on("data", (chunk: Buffer) => err.push(chunk));
  child.stdin?.end(input);
  return new Promise((resolve) => {
    let error: Error | undefined;
    const done = (code: number | null, signal: NodeJS.Signals | null) =>
      resolve({ code, signal, stdout: Buffer.concat(out), stderr: Buffer.concat(err), error });
    child.once("error", (e) => {
      error = e;
      if (child.pid === undefined) done(null, null);
    });
    child.once("close", done);
  });
}

/** The first line `group` prints, as a number (a pid the script echoed). */
function firstNumber(group: SpawnedGroup): Promise<number> {
  return new Promise((resolve) => group.child.stdout.once("data", (chunk: Buffer) => resolve(Number(chunk))));
}

/** Waits (bounded) until `pid` is gone; true when it went. */
async function gone(pid: number): Promise<boolean> {
  for (let i = 0; i < 100 && isProcessAlive(pid); i++) await new Promise((r) => setTimeout(r, 100));
  return !isProcessAlive(pid);
}

afterAll(() => {
  useProcessSpawner(true);
  useRunNice(0);
});

/** The niceness of `pid` (field 19 of /proc/<pid>/stat) and its session's scheduling group's, if any. */
function niceOf(pid: number): { process: number; session: number | null } {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  let session: number | null = null;
  if (readFileSync("/proc/sys/kernel/sched_autogroup_enabled", "utf8").trim() === "1") {
    session = Number(/ nice (-?\d+)/.exec(readFileSync(`/proc/${pid}/autogroup`, "utf8"))?.[1]);
  }
  return { process: Number(fields[16]), session };
}

/** This process's descriptors above stdio without close-on-exec: any child inherits them. */
function inheritedFds(): number[] {
  return readdirSync("/proc/self/fd")
    .map(Number)
    .filter((fd) => {
      if (fd <= 2) return false;
      try {
        const flags = /^flags:\s+(\d+)/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, "utf8"))?.[1];
        return (Number.parseInt(flags ?? "0", 8) & 0o2000000) === 0;
      } catch {
        return false;
      }
    });
}

/** The spawner's program, by its executable. */
function programOf(pid: number): string {
  return readlinkSync(`/proc/${pid}/exe`);
}

const MODES = [
  ["through the Perl spawner", true, "perl"],
  ["through the Node spawner", true, "node"],
  ["spawned directly", false, "auto"],
] as const;

describe.each(MODES)("spawnGroup %s", (_name, viaSpawner, program) => {
  it("gives the exit code, both outputs byte for byte, and the stdin it was fed", async () => {
    useProcessSpawner(viaSpawner, program);
    const result = await sh("printf 'out ü'; printf 'err' >&2; exit 3").ended;
    expect(result).toMatchObject({ code: 3, signal: null, error: undefined });
    expect(result.stdout.toString("utf8")).toBe("out ü");
    expect(result.stderr.toString()).toBe("err");
    const input = Buffer.alloc(3 * 1024 * 1024 + 7, "xyz\n");
    const echoed = await sh("cat", { input }).ended;
    expect(echoed.code).toBe(0);
    expect(echoed.stdout.equals(input)).toBe(true);
    const parent = Number((await sh("echo $PPID").ended).stdout);
    expect(parent).toBe(viaSpawner ? processSpawnerPid() : process.pid);
    if (viaSpawner)
      expect(programOf(parent)).toBe(program === "perl" ? PERL : realpathSync(process.execPath));
  });

  it("gives the child exactly the environment asked for, and no descriptor beyond its stdio", async () => {
    useProcessSpawner(viaSpawner, program);
    const env = { PATH: ENV.PATH, ODD: "a b\nc=ü\\\"'", EMPTY: "", "X.Y": "z" };
    const listed = await ended(spawnGroup("env", ["-0"], { cwd: REPO_ROOT, env, stdin: false }));
    const pairs = listed.stdout.toString("utf8").split("\0").filter(Boolean).sort();
    expect(pairs).toEqual(
      Object.entries(env)
        .map(([name, value]) => `${name}=${value}`)
        .sort(),
    );
    // ls has its own stdio and the directory it lists (3), nothing else (but what this test's own
    // runner was given without close-on-exec, which every process passes on).
    const fds = await ended(spawnGroup("ls", ["/proc/self/fd"], { cwd: REPO_ROOT, env: ENV, stdin: false }));
    const seen = fds.stdout.toString().split("\n").filter(Boolean).map(Number);
    expect(seen.filter((fd) => !inheritedFds().includes(fd)).sort()).toEqual([0, 1, 2, 3]);
  });

  it("feeds many children's stdin at once, more than a pipe holds, each its own bytes", async () => {
    useProcessSpawner(viaSpawner, program);
    const inputs = Array.from({ length: 30 }, (_, i) => Buffer.alloc(200_000 + i, `${i};`));
    // Each reads only after a pause, so its input waits in the spawner meanwhile.
    const results = await Promise.all(inputs.map((input) => sh("sleep 0.2; cat", { input }).ended));
    results.forEach((result, i) => {
      expect(result.code).toBe(0);
      expect(result.stdout.equals(inputs[i] as Buffer)).toBe(true);
    });
  });

  it("fails to start a missing or non-executable command as child_process does", async () => {
    useProcessSpawner(viaSpawner, program);
    const missing = await ended(
      spawnGroup("no-such-command-here", [], { cwd: REPO_ROOT, env: ENV, stdin: true }),
    );
    expect(missing.error?.message).toBe("spawn no-such-command-here ENOENT");
    expect(missing.error).toMatchObject({ code: "ENOENT", errno: -2, syscall: "spawn no-such-command-here" });
    const dir = mkdtempSync(path.join(tmpdir(), "overseer-spawner-test-"));
    try {
      const script = path.join(dir, "not-executable");
      writeFileSync(script, "#!/bin/sh\necho no\n", { mode: 0o644 });
      const denied = await ended(spawnGroup(script, [], { cwd: REPO_ROOT, env: ENV, stdin: false }));
      expect(denied.error?.message).toBe(`spawn ${script} EACCES`);
      expect(denied.error).toMatchObject({ code: "EACCES", errno: -13 });
      expect(denied.stdout.length).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("carries outputs of many megabytes, and many calls at once each get their own", async () => {
    useProcessSpawner(viaSpawner, program);
    const big = await sh("head -c 25000000 /dev/zero").ended;
    expect(big.stdout.length).toBe(25_000_000);
    const many = await Promise.all(
      Array.from({ length: 40 }, (_, i) => sh(`echo ${i}; echo e${i} >&2; exit ${i % 4}`).ended),
    );
    many.forEach((result, i) => {
      expect(result.stdout.toString()).toBe(`${i}\n`);
      expect(result.stderr.toString()).toBe(`e${i}\n`);
      expect(result.code).toBe(i % 4);
    });
  });

  it("runs its child at the run niceness, the child's session too, and leaves it alone at 0", async () => {
    useProcessSpawner(viaSpawner, program);
    const own = niceOf(process.pid);
    // The child reports once it is fed, so it reads its niceness after spawnGroup set it.
    const report = "read go; cut -d' ' -f19 /proc/$$/stat; cat /proc/$$/autogroup 2>/dev/null || true";
    for (const nice of [7, 0]) {
      useRunNice(nice);
      const { group, ended: result } = sh(report, { input: "go\n" });
      // At 0 the child keeps its starter's niceness: the spawner's (which a run niceness left by
      // an earlier test file of this unisolated process may have lowered when it started), or ours.
      const starter = viaSpawner ? (processSpawnerPid() as number) : process.pid;
      const expected = nice === 0 ? niceOf(starter).process : nice;
      const out = (await result).stdout.toString();
      expect(Number(out.split("\n")[0])).toBe(expected);
      expect(group.child.pid).toBeDefined();
      if (out.includes("autogroup")) expect(out).toMatch(new RegExp(` nice ${nice}\n`));
    }
    // Only a session of its own is lowered: this process's is untouched.
    expect(niceOf(process.pid)).toEqual(own);
  });

  it("fails to start in a missing directory as child_process does: an error, no pid", async () => {
    useProcessSpawner(viaSpawner, program);
    const { group, ended: result } = sh("true", { cwd: "/nonexistent/dir" });
    const failed = await result;
    expect(group.child.pid).toBeUndefined();
    expect(failed.error?.message).toBe("spawn sh ENOENT");
    expect((failed.error as NodeJS.ErrnoException).code).toBe("ENOENT");
  });

  it("kills the whole process group, the command's own children too, even when asked before it started", async () => {
    useProcessSpawner(viaSpawner, program);
    const { group, ended: result } = sh("sleep 60 & echo $!; wait");
    const sleeper = await firstNumber(group);
    group.kill("SIGTERM");
    expect((await result).signal).toBe("SIGTERM");
    expect(await gone(sleeper)).toBe(true);
    const early = sh("sleep 60");
    early.group.kill("SIGKILL");
    expect((await early.ended).signal).toBe("SIGKILL");
  });
});

describe.each(["perl", "node"] as const)("the %s process spawner", (program) => {
  it("fails the calls in flight with a clear error when it dies, kills their groups, and is started again", async () => {
    useProcessSpawner(true, program);
    await sh("true").ended;
    const first = processSpawnerPid() as number;
    const { group, ended: result } = sh("sleep 60 & echo $!; wait");
    const sleeper = await firstNumber(group);
    process.kill(first, "SIGKILL");
    const failed = await result;
    expect(failed.code).toBeNull();
    expect(failed.error?.message).toMatch(
      /process spawner \(pid \d+\) was killed by SIGKILL while this command ran/,
    );
    expect(await gone(sleeper)).toBe(true);
    const again = await sh("echo again").ended;
    expect(again.stdout.toString()).toBe("again\n");
    expect(processSpawnerPid()).not.toBe(first);
  });

  it("shrugs off SIGINT, SIGTERM and SIGHUP (they are its parent's to handle), its children keep theirs", async () => {
    useProcessSpawner(true, program);
    await sh("true").ended;
    const pid = processSpawnerPid() as number;
    for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
      process.kill(pid, signal);
      const { group, ended: result } = sh("echo ready; exec sleep 60");
      await new Promise((resolve) => group.child.stdout.once("data", resolve));
      expect(processSpawnerPid()).toBe(pid);
      process.kill(group.child.pid as number, signal);
      expect((await result).signal).toBe(signal);
    }
  });

  it("started while runs are niced, runs at their niceness itself (relaying their output is run work)", async () => {
    useProcessSpawner(true, program);
    await sh("true").ended;
    const old = processSpawnerPid() as number;
    process.kill(old, "SIGKILL");
    expect(await gone(old)).toBe(true);
    // Gone is not yet seen: the connection learns it from the pipes' close, a turn or more later,
    // and a call sent before that fails with the dead spawner.
    for (let i = 0; i < 100 && processSpawnerPid() !== undefined; i++)
      await new Promise((r) => setTimeout(r, 20));
    expect(processSpawnerPid()).toBeUndefined();
    useRunNice(5);
    try {
      expect((await sh("echo new").ended).stdout.toString()).toBe("new\n");
      const nice = niceOf(processSpawnerPid() as number);
      expect(nice.process).toBe(5);
      if (nice.session !== null) expect(nice.session).toBe(5);
    } finally {
      useRunNice(0);
    }
  });

  it("never outlives its parent: killed with SIGKILL, the parent takes the spawner and its children along", async () => {
    const { parent, started } = spawnerParent(program, process.env);
    const { spawner, sleep, exe } = await started;
    expect(exe).toBe(program === "perl" ? PERL : realpathSync(process.execPath));
    expect(isProcessAlive(spawner) && isProcessAlive(sleep)).toBe(true);
    parent.kill("SIGKILL");
    expect(await gone(spawner)).toBe(true);
    expect(await gone(sleep)).toBe(true);
  });
});

interface ParentStarted {
  spawner: number;
  exe: string;
  sleep: number;
  retried: boolean;
}

/** fixtures/spawner-parent.ts in a process of its own with `env`: what it started, once it did. */
function spawnerParent(program: string, env: NodeJS.ProcessEnv) {
  const parent: ChildProcess = spawn(
    process.execPath,
    ["--import", "tsx", "packages/process/test/fixtures/spawner-parent.ts", program],
    { cwd: REPO_ROOT, env, stdio: ["ignore", "pipe", "ignore"] },
  );
  const started = new Promise<ParentStarted>((resolve) =>
    parent.stdout?.once("data", (chunk: Buffer) => resolve(JSON.parse(chunk.toString()))),
  );
  return { parent, started };
}

describe("the spawner's program", () => {
  it("is the Node spawner where no perl is on PATH, and where perl cannot run it (after one failed call)", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "overseer-spawner-test-"));
    try {
      const missing = spawnerParent("auto", { ...process.env, PATH: dir });
      const withoutPerl = await missing.started;
      missing.parent.kill("SIGKILL");
      expect(withoutPerl).toMatchObject({ exe: realpathSync(process.execPath), retried: false });
      writeFileSync(path.join(dir, "perl"), "#!/bin/sh\nexit 2\n", { mode: 0o755 });
      const broken = spawnerParent("auto", { ...process.env, PATH: dir });
      const withBrokenPerl = await broken.started;
      broken.parent.kill("SIGKILL");
      expect(withBrokenPerl).toMatchObject({ exe: realpathSync(process.execPath), retried: true });
      expect(await gone(withBrokenPerl.sleep)).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
