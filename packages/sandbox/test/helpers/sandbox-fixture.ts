import { createHash, randomBytes } from "node:crypto";
import { lstat, mkdir, mkdtemp, readdir, readFile, readlink, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PROCESS_DEFAULTS, useProcessSpawner } from "@overseer/process";
import { afterAll, beforeAll, expect } from "vitest";
import {
  BwrapDriver,
  type BwrapDriverOptions,
  type PreparedCommand,
  type RunPreparedResult,
  runPreparedCommand,
  type SandboxDriver,
  type SandboxSpec,
} from "../../src/index.ts";

/**
 * A throw-away host layout for sandbox tests:
 *   <root>/project/checkout   the run's checkout (bound read-write)
 *   <root>/project/control    the control dir (bound read-write)
 *   <root>/project/gitdir     stands for the worktree's git dir (bound read-only)
 *   <root>/other-project/...  another project's checkout (never bound)
 *   <root>/outside/...        unrelated host files (never bound)
 * plus a canary directory in /root (like ~/.ssh). `witness` fingerprints everything outside the
 * checkout so each attack test can assert that nothing there changed.
 */
export interface SandboxWorkspace {
  root: string;
  checkout: string;
  control: string;
  gitDir: string;
  otherProject: string;
  outside: string;
  rootCanaryDir: string;
  /** Secret text placed in files the sandbox must never read. */
  secret: string;
  spec(overrides?: Partial<SandboxSpec>): SandboxSpec;
  dispose(): Promise<void>;
}

export async function createWorkspace(): Promise<SandboxWorkspace> {
  const root = await mkdtemp(join(tmpdir(), "overseer-sbx-test-"));
  const secret = `canary-secret-${randomBytes(8).toString("hex")}`;
  const checkout = join(root, "project", "checkout");
  const control = join(root, "project", "control");
  const gitDir = join(root, "project", "gitdir");
  const otherProject = join(root, "other-project", "checkout");
  const outside = join(root, "outside");
  const rootCanaryDir = join("/root", `.ssh-canary-${randomBytes(6).toString("hex")}`);
  for (const dir of [checkout, control, gitDir, otherProject, outside, rootCanaryDir])
    await mkdir(dir, { recursive: true });
  await writeFile(join(checkout, "README.md"), "# project\n");
  await writeFile(join(gitDir, "HEAD"), "ref: refs/heads/main\n");
  await writeFile(join(otherProject, "secret.txt"), `${secret}\n`);
  await writeFile(join(outside, "canary.txt"), `${secret}\n`);
  await writeFile(join(rootCanaryDir, "id_ed25519"), `${secret}\n`, { mode: 0o600 });
  return {
    root,
    checkout,
    control,
    gitDir,
    otherProject,
    outside,
    rootCanaryDir,
    secret,
    spec: (overrides = {}) => ({
      checkoutDir: checkout,
      controlDir: control,
      readOnlyBinds: [gitDir],
      env: { PATH: "/usr/local/bin:/usr/bin:/bin" },
      network: { mode: "none" },
      limits: { pidsMax: 128, memoryBytes: 512 * 1024 ** 2, tmpfsBytes: 64 * 1024 ** 2 },
      ...overrides,
    }),
    dispose: async () => {
      await rm(root, { recursive: true, force: true });
      await rm(rootCanaryDir, { recursive: true, force: true });
    },
  };
}

/** Content hash, mode and mtime of every entry under `dirs` (symlinks by target). */
export async function fingerprintTree(dirs: readonly string[]): Promise<Map<string, string>> {
  const result = new Map<string, string>();
  const walk = async (path: string): Promise<void> => {
    const info = await lstat(path);
    if (info.isSymbolicLink()) {
      result.set(path, `link:${await readlink(path)}`);
    } else if (info.isDirectory()) {
      result.set(path, `dir:${info.mode}:${info.mtimeMs}`);
      for (const entry of (await readdir(path)).sort()) await walk(join(path, entry));
    } else {
      const hash = info.isFile()
        ? createHash("sha256")
            .update(await readFile(path))
            .digest("hex")
        : "special";
      result.set(path, `file:${info.mode}:${info.mtimeMs}:${info.size}:${hash}`);
    }
  };
  for (const dir of dirs) await walk(dir);
  return result;
}

/** Snapshot of everything outside the checkout/control dir; `assertUnchanged` compares. */
export class OutsideWitness {
  private before = new Map<string, string>();
  constructor(private readonly dirs: readonly string[]) {}

  async capture(): Promise<void> {
    this.before = await fingerprintTree(this.dirs);
  }

  async assertUnchanged(): Promise<void> {
    const after = await fingerprintTree(this.dirs);
    expect(Object.fromEntries(after)).toEqual(Object.fromEntries(this.before));
  }
}

export function witnessFor(ws: SandboxWorkspace, extra: readonly string[] = []): OutsideWitness {
  return new OutsideWitness([
    join(ws.root, "other-project"),
    ws.outside,
    ws.gitDir,
    ws.rootCanaryDir,
    ...extra,
  ]);
}

/**
 * The way a suite spawns its sandboxes (runPreparedCommand goes through @overseer/process
 * spawnGroup, as the harness does): `OVERSEER_TEST_SANDBOX_SPAWN=perl` (the Perl spawner, which
 * takes the launcher's steps itself: a launch prelude), `node` (the Node spawner, bash launcher) or
 * `direct` (no spawner, bash launcher); unset, the defaults (the Perl spawner where there is perl).
 * Registers the hooks that set it for the file and put the defaults back after it.
 */
export function useSandboxSpawnMode(): void {
  const mode = process.env.OVERSEER_TEST_SANDBOX_SPAWN;
  beforeAll(() => {
    if (mode === "direct") useProcessSpawner(false);
    else if (mode === "perl" || mode === "node") useProcessSpawner(true, mode);
    else if (mode !== undefined)
      throw new Error(`OVERSEER_TEST_SANDBOX_SPAWN=${mode}: expected perl, node or direct`);
  });
  afterAll(() => useProcessSpawner(PROCESS_DEFAULTS.spawner, PROCESS_DEFAULTS.spawnerProgram));
}

/** Prepares `argv` with `driver`, runs it (bounded), always cleans up. */
export async function runSandboxed(
  driver: SandboxDriver,
  argv: readonly string[],
  spec: SandboxSpec,
  options: { timeoutMs?: number; stdin?: string; onPrepared?: (p: PreparedCommand) => void } = {},
): Promise<RunPreparedResult> {
  const prepared = await driver.prepare(argv, spec);
  try {
    options.onPrepared?.(prepared);
    return await runPreparedCommand(prepared, {
      timeoutMs: options.timeoutMs ?? 20_000,
      stdin: options.stdin,
    });
  } finally {
    await prepared.cleanup();
  }
}

/** `sh -c script` in the sandbox. */
export function runShell(
  driver: SandboxDriver,
  script: string,
  spec: SandboxSpec,
  options: { timeoutMs?: number; stdin?: string } = {},
): Promise<RunPreparedResult> {
  return runSandboxed(driver, ["/bin/sh", "-c", script], spec, options);
}

/** Runtime root of every driver made by `newDriver` in this test process (removed by `disposeDrivers`). */
export const testRuntimeRoot = join(tmpdir(), `overseer-sbx-test-rt-${process.pid}`);
const drivers: BwrapDriver[] = [];

export function newDriver(options: BwrapDriverOptions = {}): BwrapDriver {
  const driver = new BwrapDriver({ runtimeRoot: testRuntimeRoot, ...options });
  drivers.push(driver);
  return driver;
}

/** afterAll hook: disposes the drivers and removes their runtime root. */
export async function disposeDrivers(): Promise<void> {
  for (const driver of drivers.splice(0)) await driver.dispose();
  await rm(testRuntimeRoot, { recursive: true, force: true });
}

/** Host pids of live `sleep <tag…>` processes (the tag is a unique duration such as 4000.123456). */
export async function hostSleepersWithTag(tag: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const [argv0 = "", argv1 = ""] = (await readFile(`/proc/${entry}/cmdline`, "utf8")).split("\0");
      const state = (await readFile(`/proc/${entry}/stat`, "utf8")).split(") ")[1]?.[0];
      if (argv0.endsWith("sleep") && argv1.startsWith(tag) && state !== "Z") pids.push(Number(entry));
    } catch {
      // exited meanwhile
    }
  }
  return pids;
}

/** Polls `check` until it returns true or `timeoutMs` passes; returns the last result. */
export async function waitFor(
  check: () => Promise<boolean>,
  timeoutMs: number,
  intervalMs = 25,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
