import { createHook } from "node:async_hooks";
import { execFile, spawn } from "node:child_process";
import { existsSync, lstatSync, readdirSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rename, rm, rmdir, stat, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { ETC_ALLOWLIST } from "../src/bwrap-argv-builder.ts";
import { preparedRunCgroup } from "../src/bwrap-driver.ts";
import { ETC_COPY_LIMIT } from "../src/etc-snapshot.ts";
import {
  type EgressDecision,
  LAUNCHER_SETUP_FAILED_EXIT,
  runPreparedCommand,
  SANDBOX_CONTROL_MOUNT,
  SANDBOX_HOME,
  SandboxSpecError,
} from "../src/index.ts";
import { defaultRunFileRoot } from "../src/runtime-dir.ts";
import {
  createWorkspace,
  disposeDrivers,
  newDriver,
  runSandboxed,
  runShell,
  type SandboxWorkspace,
  testRuntimeRoot,
  useSandboxSpawnMode,
} from "./helpers/sandbox-fixture.ts";

const execFileAsync = promisify(execFile);

afterAll(disposeDrivers);
useSandboxSpawnMode();

let ws: SandboxWorkspace;

beforeEach(async () => {
  ws = await createWorkspace();
});

afterEach(async () => {
  await ws.dispose();
});

describe("BwrapDriver: running commands", () => {
  const driver = newDriver();

  it("runs argv in the checkout with the prompt on stdin and propagates the exit code", async () => {
    const result = await runShell(
      driver,
      'pwd; read -r line; echo "got: $line"; echo note > from-agent.txt; exit 7',
      ws.spec(),
      {
        stdin: "the prompt\n",
      },
    );
    expect(result.stdout).toBe(`${ws.checkout}\ngot: the prompt\n`);
    expect(result.exitCode).toBe(7);
    expect(await readFile(join(ws.checkout, "from-agent.txt"), "utf8")).toBe("note\n");
  });

  it("passes exactly spec.env plus HOME (and bwrap's PWD), without a shell in between", async () => {
    const result = await runSandboxed(
      driver,
      ["/usr/bin/env"],
      ws.spec({ env: { PATH: "/usr/bin:/bin", TOKEN: "t0k3n" } }),
    );
    expect(result.stdout.split("\n").filter(Boolean).sort()).toEqual([
      `HOME=${SANDBOX_HOME}`,
      "PATH=/usr/bin:/bin",
      `PWD=${ws.checkout}`,
      "TOKEN=t0k3n",
    ]);
  });

  it("makes the control dir writable, HOME and /tmp private and writable, git usable read-only", async () => {
    const result = await runShell(
      driver,
      `echo '{"kind":"submit"}' > ${ws.control}/transition.json && echo x > $HOME/f && echo y > /tmp/f && cat $HOME/f /tmp/f && whoami && git --version >/dev/null && echo git-ok`,
      ws.spec(),
    );
    expect(result.stdout).toBe("x\ny\nagent\ngit-ok\n");
    expect(JSON.parse(await readFile(join(ws.control, "transition.json"), "utf8"))).toEqual({
      kind: "submit",
    });
  });

  it("keeps the run's PATH first in login shells, whose /etc/profile resets PATH (Codex runs sh -lc)", async () => {
    const tools = await mkdtemp(join(tmpdir(), "overseer-login-path-"));
    try {
      await writeFile(join(tools, "overseer-agent"), "#!/bin/sh\necho found-it\n", { mode: 0o755 });
      const spec = ws.spec({ env: { PATH: `${tools}:/usr/bin:/bin` }, readOnlyBinds: [tools] });
      for (const shell of ["/bin/sh", "/bin/bash"]) {
        const result = await runSandboxed(driver, [shell, "-lc", "overseer-agent; echo $PATH"], spec);
        expect(result.stdout.split("\n")[0], shell).toBe("found-it");
        expect(result.stdout.split("\n")[1]?.startsWith(`${tools}:`), shell).toBe(true);
      }
    } finally {
      await rm(tools, { recursive: true, force: true });
    }
  });

  it("shows the large /etc directories (bound, not copied) as the host has them, read-only", async () => {
    // Debian's /etc/alternatives and /etc/ssl/certs: hundreds of symlinks each.
    const large = ETC_ALLOWLIST.filter(
      (entry) =>
        lstatSync(`/etc/${entry}`, { throwIfNoEntry: false })?.isDirectory() &&
        readdirSync(`/etc/${entry}`, { recursive: true }).length > ETC_COPY_LIMIT,
    );
    expect(large.length).toBeGreaterThan(0);
    const list = (dir: string) =>
      `for f in ${dir}/*; do printf '%s %s\\n' "$f" "$(readlink "$f" || echo file)"; done`;
    for (const entry of large) {
      const inside = await runShell(
        driver,
        `${list(`/etc/${entry}`)}; touch /etc/${entry}/x || echo refused`,
        ws.spec(),
      );
      const host = await execFileAsync("/bin/sh", ["-c", list(`/etc/${entry}`)]);
      expect(inside.stdout, entry).toBe(`${host.stdout}refused\n`);
    }
  });

  it("finds spec.commands and the control dir with no environment at all (env -i, PATH-less shells, /bin path)", async () => {
    const tools = await mkdtemp(join(tmpdir(), "overseer-commands-"));
    try {
      const script = `#!/bin/sh\necho "$0 $*" >> ${SANDBOX_CONTROL_MOUNT}/calls.txt\n`;
      await writeFile(join(tools, "overseer-agent"), script, { mode: 0o755 });
      const spec = ws.spec({
        env: { PATH: "/usr/bin:/bin" },
        commands: { "overseer-agent": join(tools, "overseer-agent") },
      });
      const result = await runShell(
        driver,
        [
          "env -i overseer-agent execvp",
          "env -i /bin/overseer-agent absolute",
          "env -i /bin/sh -c 'overseer-agent dash'",
          "env -i /bin/bash -c 'overseer-agent bash'",
          "env -i /bin/sh -lc 'overseer-agent login'",
          "test -L /bin/sh && /bin/sh -c 'echo sh-ok'",
          "test -e /usr/bin/overseer-agent || echo usr-untouched",
          "echo x > /bin/overseer-agent || echo command-read-only",
          "touch /bin/planted || echo bin-read-only",
        ].join("; "),
        spec,
      );
      expect(result.stdout).toBe("sh-ok\nusr-untouched\ncommand-read-only\nbin-read-only\n");
      expect(await readFile(join(ws.control, "calls.txt"), "utf8")).toBe(
        [
          "/bin/overseer-agent execvp",
          "/bin/overseer-agent absolute",
          "/bin/overseer-agent dash",
          "/bin/overseer-agent bash",
          "/bin/overseer-agent login",
          "",
        ].join("\n"),
      );
      expect(await readFile(join(tools, "overseer-agent"), "utf8")).toBe(script);
    } finally {
      await rm(tools, { recursive: true, force: true });
    }
  });

  it("places a command as its own file (same inode, read-only), linked into /bin without a bind where it can, bound where it cannot", async () => {
    const sameFs = await mkdtemp(join(tmpdir(), "overseer-commands-"));
    const otherFs = existsSync("/dev/shm") ? await mkdtemp("/dev/shm/overseer-commands-") : null;
    try {
      const optionsOf = async (spec: ReturnType<typeof ws.spec>) => {
        const prepared = await driver.prepare(["/bin/true"], spec);
        try {
          const file = /exec 3<'([^']+)'/.exec(prepared.args.join(" "))?.[1] ?? "";
          return (await readFile(file, "utf8")).split("\0");
        } finally {
          await prepared.cleanup();
        }
      };
      for (const [dir, bound] of [[sameFs, false], ...(otherFs ? [[otherFs, true] as const] : [])] as const) {
        const file = join(dir, "overseer-agent");
        await writeFile(file, "#!/bin/sh\necho one\n", { mode: 0o755 });
        const spec = ws.spec({ env: { PATH: "/usr/bin:/bin" }, commands: { "overseer-agent": file } });
        expect((await optionsOf(spec)).includes("/bin/overseer-agent")).toBe(bound);
        const { ino } = await stat(file);
        const inside = await runShell(
          driver,
          "stat -c '%i %a' /bin/overseer-agent; /bin/overseer-agent",
          spec,
        );
        expect(inside.stdout).toBe(`${ino} 755\none\n`);
        // A replaced file (a new inode, as a deploy makes it) is what the next run sees.
        await writeFile(`${file}.new`, "#!/bin/sh\necho two\n", { mode: 0o755 });
        await rename(`${file}.new`, file);
        expect((await runShell(driver, "/bin/overseer-agent", spec)).stdout).toBe("two\n");
      }
    } finally {
      await rm(sameFs, { recursive: true, force: true });
      if (otherFs) await rm(otherFs, { recursive: true, force: true });
    }
  });

  it("refuses a command whose file does not exist", async () => {
    await expect(
      driver.prepare(["/bin/true"], ws.spec({ commands: { "overseer-agent": join(ws.outside, "nope") } })),
    ).rejects.toThrow(/commands\.overseer-agent: .*nope is not an existing file/);
  });

  it("honours a custom unprivileged uid/gid", async () => {
    const result = await runShell(
      driver,
      "id -u; id -g; stat -c %u README.md",
      ws.spec({ uid: 65534, gid: 65534 }),
    );
    expect(result.stdout).toBe("65534\n65534\n65534\n");
  });

  it("masks hiddenPaths that lie inside a bound directory", async () => {
    await mkdir(join(ws.gitDir, "secrets"));
    await writeFile(join(ws.gitDir, "secrets", "token"), ws.secret);
    await writeFile(join(ws.gitDir, "credentials"), ws.secret);
    const result = await runShell(
      driver,
      `ls -A ${ws.gitDir}/secrets; cat ${ws.gitDir}/credentials; cat ${ws.gitDir}/HEAD; echo end`,
      ws.spec({
        hiddenPaths: [join(ws.gitDir, "secrets"), join(ws.gitDir, "credentials"), "/nonexistent/path"],
      }),
    );
    expect(result.stdout).toBe("ref: refs/heads/main\nend\n");
    expect(result.stdout).not.toContain(ws.secret);
  });

  it("binds a read-only path nested in the checkout after the checkout (parents first)", async () => {
    await mkdir(join(ws.checkout, "vendor"));
    const result = await runShell(
      driver,
      "touch vendor/x 2>&1; touch ok && echo wrote-checkout",
      ws.spec({ readOnlyBinds: [join(ws.checkout, "vendor")] }),
    );
    expect(result.stdout).toContain("Read-only file system");
    expect(result.stdout).toContain("wrote-checkout");
  });

  it("shows a read-only path nested in another read-only bind (a worktree's admin dir in its mirror) through the outer bind, read-only", async () => {
    const admin = join(ws.gitDir, "worktrees", "run1");
    await mkdir(admin, { recursive: true });
    await writeFile(join(admin, "HEAD"), "0123456789012345678901234567890123456789\n");
    const spec = ws.spec({ readOnlyBinds: [ws.gitDir, admin] });
    const prepared = await driver.prepare(["/bin/true"], spec);
    try {
      const options = await readFile(/exec 3<'([^']+)'/.exec(prepared.args.join(" "))?.[1] ?? "", "utf8");
      expect(options.split("\0")).not.toContain(admin);
    } finally {
      await prepared.cleanup();
    }
    const result = await runShell(
      driver,
      `cat ${admin}/HEAD; touch ${admin}/x 2>&1; touch ${ws.gitDir}/x 2>&1; echo end`,
      spec,
    );
    expect(result.stdout).toMatch(
      /^0123456789012345678901234567890123456789\n.*Read-only file system\n.*Read-only file system\nend\n$/s,
    );
  });

  it("applies a CPU bandwidth quota when limits.cpus is set", async () => {
    const caps = await driver.capabilities();
    const prepared = await driver.prepare(["/bin/true"], ws.spec({ limits: { cpus: 0.5 } }));
    try {
      const cgroup = preparedRunCgroup(prepared);
      if (caps.cpuRate.via === "cgroup-v1")
        expect(await cgroup?.readCounter("cpu.cfs_quota_us")).toBe(50_000);
      expect((await runPreparedCommand(prepared)).exitCode).toBe(0);
    } finally {
      await prepared.cleanup();
    }
  });

  it("fails closed (exit 125, command never runs) when it cannot join its cgroup", async (context) => {
    const prepared = await driver.prepare(["/bin/sh", "-c", "echo RAN > ran.txt"], ws.spec());
    try {
      const cgroup = preparedRunCgroup(prepared);
      if (cgroup === null) context.skip("no cgroups on this host");
      for (const dir of cgroup?.dirs ?? []) await rmdir(dir);
      const result = await runPreparedCommand(prepared);
      expect(result.exitCode).toBe(LAUNCHER_SETUP_FAILED_EXIT);
      expect(result.stderr).toContain("cannot join cgroup");
      expect(existsSync(join(ws.checkout, "ran.txt"))).toBe(false);
    } finally {
      await prepared.cleanup();
    }
  });

  it("without cgroups, falls back to RLIMIT_AS and says the pids limit is not enforced", async () => {
    const fallback = newDriver({ cgroups: { mode: "off" } });
    const caps = await fallback.capabilities();
    expect(caps.pids.enforced).toBe(false);
    expect(caps.memory).toMatchObject({ enforced: true, via: "rlimit" });
    expect(caps.killAll).toMatchObject({ enforced: true, via: "pid-namespace" });
    const result = await runShell(
      fallback,
      "grep -E '^Max (address space|cpu time)' /proc/self/limits | tr -s ' '",
      ws.spec({ limits: { memoryBytes: 1024 ** 3, cpuSeconds: 120 } }),
    );
    expect(result.stdout).toContain("Max cpu time 120 120 seconds");
    expect(result.stdout).toContain(`Max address space ${1024 ** 3} ${1024 ** 3} bytes`);
  });

  it("runs concurrent sandboxes independently", async () => {
    const results = await Promise.all(
      [1, 2, 3].map((n) =>
        runShell(driver, `echo ${n} > /tmp/n; cat /tmp/n; echo ${n} > out-${n}.txt`, ws.spec()),
      ),
    );
    expect(results.map((r) => r.stdout)).toEqual(["1\n", "2\n", "3\n"]);
    for (const n of [1, 2, 3])
      expect(await readFile(join(ws.checkout, `out-${n}.txt`), "utf8")).toBe(`${n}\n`);
  });

  it("rejects bad specs with errors that name the field", async () => {
    await expect(
      driver.prepare(["true"], ws.spec({ checkoutDir: join(ws.root, "missing") })),
    ).rejects.toThrow(/checkoutDir: .*missing does not exist/);
    await expect(driver.prepare(["true"], ws.spec({ readOnlyBinds: ["/nope/nothing"] }))).rejects.toThrow(
      /readOnlyBinds\[0\]: \/nope\/nothing does not exist/,
    );
    await expect(driver.prepare(["true"], ws.spec({ hiddenPaths: [ws.checkout] }))).rejects.toThrow(
      /hiddenPaths\[0\]/,
    );
    await expect(driver.prepare([], ws.spec())).rejects.toBeInstanceOf(SandboxSpecError);
  });

  it("a run without network keeps only its private options file, until cleanup", async () => {
    const prepared = await driver.prepare(["/bin/true"], ws.spec());
    const launcher = prepared.args.find((arg) => arg.includes("exec 3<")) as string;
    const argsFile = /exec 3<'([^']+)'/.exec(launcher)?.[1] as string;
    const info = await stat(argsFile);
    expect(info.isFile()).toBe(true);
    expect(info.mode & 0o777).toBe(0o600);
    expect((await readFile(argsFile, "utf8")).split("\0")).toContain("--unshare-all");
    expect((await runPreparedCommand(prepared)).exitCode).toBe(0);
    await prepared.cleanup();
    expect(existsSync(argsFile)).toBe(false);
    // An options file already gone (a tmp cleaner, an operator) does not fail the next cleanup.
    const again = await driver.prepare(["/bin/true"], ws.spec());
    const againFile = /exec 3<'([^']+)'/.exec(again.args.join("\n"))?.[1] as string;
    await rm(againFile);
    await again.cleanup();
  });

  it("writes a run's options file into runFileRoot (private, 0700) and removes it at cleanup", async () => {
    const runFileRoot = `${testRuntimeRoot}-run-files`;
    const files = newDriver({ runFileRoot });
    try {
      const prepared = await files.prepare(["/bin/true"], ws.spec());
      const argsFile = /exec 3<'([^']+)'/.exec(prepared.args.join("\n"))?.[1] as string;
      expect(argsFile.startsWith(`${runFileRoot}/run-${process.pid}-`)).toBe(true);
      expect((await stat(runFileRoot)).mode & 0o777).toBe(0o700);
      expect((await runPreparedCommand(prepared)).exitCode).toBe(0);
      await prepared.cleanup();
      expect(existsSync(argsFile)).toBe(false);
    } finally {
      await rm(runFileRoot, { recursive: true, force: true });
    }
  });

  it("puts options files on a tmpfs /dev/shm by default, never on another file system", () => {
    // A file made and removed per spawn costs ~150-500 µs of CPU on ext4, ~27 µs on a tmpfs.
    expect(defaultRunFileRoot("/proc")).toBeNull();
    expect(defaultRunFileRoot(join(ws.root, "absent"))).toBeNull();
    const shm = defaultRunFileRoot();
    if (shm !== null) expect(shm).toBe(`/dev/shm/overseer-sandbox-${process.getuid?.()}`);
  });

  it("prepares a run's sandbox with no thread-pool file system request once its snapshots exist", async () => {
    // Every path a prepare resolves (binds, checkout, control dir, commands, /bin's mtime) is a
    // synchronous call: ~10 µs of CPU each, against 30-50 µs for the promise API's round trip.
    await (await driver.prepare(["/bin/true"], ws.spec())).cleanup();
    const requests: string[] = [];
    const hook = createHook({
      init: (_id, type) => {
        if (type.startsWith("FSREQ")) requests.push(type);
      },
    });
    hook.enable();
    let prepared: Awaited<ReturnType<typeof driver.prepare>>;
    try {
      prepared = await driver.prepare(["/bin/true"], ws.spec());
    } finally {
      hook.disable();
    }
    expect(requests).toEqual([]);
    expect((await runPreparedCommand(prepared)).exitCode).toBe(0);
    await prepared.cleanup();
  });

  it("cleanup is idempotent and stop() after exit is harmless", async () => {
    const prepared = await driver.prepare(["/bin/true"], ws.spec());
    let pid = 0;
    await runPreparedCommand(prepared, { onSpawn: (p) => (pid = p) });
    await prepared.stop(pid, { graceMs: 100 });
    await prepared.cleanup();
    await prepared.cleanup();
  });

  it("probe() proves the policy on this host", async () => {
    const report = await driver.probe();
    expect(report.available).toBe(true);
    expect(report.unsafe).toBe(false);
    expect(report.version).toMatch(/^bubblewrap /);
    expect(report.writeInside.ok).toBe(true);
    expect(report.writeOutsideDenied.ok).toBe(true);
    expect(report.networkDenied.ok).toBe(true);
    expect(report.privilegesDropped.ok).toBe(true);
    expect(report.limits.cpuTime.enforced).toBe(true);
    expect(report.limits.memory.enforced).toBe(true);
    expect(report.problems.filter((p) => !p.startsWith("limit "))).toEqual([]);
  });
});

describe("BwrapDriver: network proxy mode", () => {
  let target: Server;
  let targetPort = 0;
  let targetHits = 0;
  const decisions: EgressDecision[] = [];

  beforeEach(async () => {
    targetHits = 0;
    decisions.length = 0;
    target = createServer((req, res) => {
      targetHits++;
      res.end(`hello from ${req.headers.host}\n`);
    });
    await new Promise<void>((resolve) => target.listen(0, "127.0.0.1", resolve));
    const address = target.address();
    targetPort = typeof address === "object" && address !== null ? address.port : 0;
  });

  afterEach(async () => {
    await new Promise<void>((resolve) => target.close(() => resolve()));
  });

  /** A driver whose proxy resolves test names to the local target and allows loopback (tests only). */
  function proxyDriver() {
    return newDriver({
      egress: {
        resolve: async (host) => {
          if (host.endsWith(".test")) return ["127.0.0.1"];
          throw Object.assign(new Error("not found"), { code: "ENOTFOUND" });
        },
        isForbiddenAddress: () => false,
        onDecision: (decision) => decisions.push(decision),
      },
    });
  }

  it("reaches allow-listed hosts through the proxy and nothing else", async () => {
    const spec = ws.spec({
      network: { mode: "proxy", allowHosts: ["allowed.test"], allowPorts: [targetPort] },
    });
    const result = await runShell(
      proxyDriver(),
      `echo "proxy=$HTTPS_PROXY";
       curl -sS --max-time 10 -p http://allowed.test:${targetPort}/ 2>&1; echo "rc=$?";
       curl -sS --max-time 10 -p http://denied.test:${targetPort}/ 2>&1; echo "rc=$?";
       curl -sS --max-time 10 http://allowed.test:${targetPort}/plain 2>&1; echo "rc=$?";
       curl -sS --noproxy '*' --max-time 5 http://127.0.0.1:${targetPort}/ 2>&1; echo "rc=$?"`,
      spec,
      { timeoutMs: 40_000 },
    );
    const lines = result.stdout.split("\n");
    expect(lines[0]).toBe("proxy=http://127.0.0.1:3128");
    expect(result.stdout).toContain(`hello from allowed.test:${targetPort}`);
    expect(result.stdout).toMatch(/CONNECT tunnel failed, response 403|403/);
    expect(targetHits).toBe(2); // the CONNECT and the plain-HTTP request; never the denied or direct ones
    expect(decisions.map((d) => [d.method, d.host, d.allowed])).toEqual([
      ["CONNECT", "allowed.test", true],
      ["CONNECT", "denied.test", false],
      ["HTTP", "allowed.test", true],
    ]);
  });

  it("with the production address rule, an allow-listed name resolving to loopback is refused", async () => {
    const driver = newDriver({
      egress: { resolve: async () => ["127.0.0.1"], onDecision: (d) => decisions.push(d) },
    });
    const spec = ws.spec({
      network: { mode: "proxy", allowHosts: ["internal.test"], allowPorts: [targetPort] },
    });
    const result = await runShell(
      driver,
      `curl -sS --max-time 10 -p http://internal.test:${targetPort}/ 2>&1; echo "rc=$?"`,
      spec,
      {
        timeoutMs: 30_000,
      },
    );
    expect(result.stdout).toContain("403");
    expect(targetHits).toBe(0);
    expect(decisions[0]?.reason).toContain("127.0.0.1");
  });

  it("binds the control dir at its fixed place inside the runtime mount as well", async () => {
    const result = await runShell(
      proxyDriver(),
      `echo fixed > ${SANDBOX_CONTROL_MOUNT}/probe && test -S /overseer/egress.sock && echo ok`,
      ws.spec({ network: { mode: "proxy", allowHosts: ["a.test"] } }),
      { timeoutMs: 30_000 },
    );
    expect(result.stdout).toBe("ok\n");
    expect(await readFile(join(ws.control, "probe"), "utf8")).toBe("fixed\n");
  });

  it("removes the proxy socket at cleanup", async () => {
    const driver = proxyDriver();
    const prepared = await driver.prepare(
      ["/bin/true"],
      ws.spec({ network: { mode: "proxy", allowHosts: ["a.test"] } }),
    );
    const launcher = prepared.args.find((arg) => arg.includes("/bwrap-args")) as string;
    const runDir = /exec 3<'([^']+)\/bwrap-args'/.exec(launcher)?.[1] as string;
    expect((await stat(join(runDir, "mount", "egress.sock"))).isSocket()).toBe(true);
    const result = await runPreparedCommand(prepared);
    expect(result.exitCode).toBe(0);
    await prepared.cleanup();
    expect(existsSync(runDir)).toBe(false);
  });
});

describe("BwrapDriver: the host launcher", () => {
  it("starts as bash itself (no env -i exec) and ignores a careless caller's BASH_ENV, SHELLOPTS and exported functions", async () => {
    const driver = newDriver();
    const markers = await mkdtemp(join(tmpdir(), "overseer-launcher-env-"));
    const hook = join(markers, "bash-env.sh");
    await writeFile(hook, `touch ${join(markers, "bash-env-ran")}\n`);
    const prepared = await driver.prepare(["/bin/sh", "-c", "echo inside; env | sort"], ws.spec());
    try {
      expect(prepared.file).toBe("/bin/bash");
      const child = spawn(prepared.file, [...prepared.args], {
        cwd: prepared.cwd,
        env: {
          ...process.env,
          ...prepared.env,
          BASH_ENV: hook,
          ENV: hook,
          SHELLOPTS: "xtrace",
          "BASH_FUNC_ulimit%%": `() { touch ${join(markers, "function-ran")}; }`,
        },
        detached: true,
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (chunk: Buffer) => {
        stdout += chunk.toString();
      });
      child.stderr.on("data", (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
      expect(stderr).toBe("");
      expect(code).toBe(0);
      expect(stdout.split("\n")[0]).toBe("inside");
      expect(stdout).not.toContain("BASH_ENV");
      expect(stdout).not.toContain("SHELLOPTS");
      expect(existsSync(join(markers, "bash-env-ran"))).toBe(false);
      expect(existsSync(join(markers, "function-ran"))).toBe(false);
    } finally {
      await prepared.cleanup();
      await rm(markers, { recursive: true, force: true });
    }
  });
});

describe("BwrapDriver: process-group kill from a caller", () => {
  it("killing the spawned process group ends the run and the caller sees the exit", async () => {
    const driver = newDriver();
    const prepared = await driver.prepare(["/bin/sh", "-c", "echo up; exec sleep 600"], ws.spec());
    try {
      const child = spawn(prepared.file, [...prepared.args], {
        cwd: prepared.cwd,
        env: { ...prepared.env },
        detached: true,
        stdio: ["ignore", "pipe", "ignore"],
      });
      await new Promise<void>((resolve) => child.stdout.once("data", () => resolve()));
      const exit = new Promise<NodeJS.Signals | null>((resolve) =>
        child.once("exit", (_code, signal) => resolve(signal)),
      );
      process.kill(-(child.pid as number), "SIGKILL");
      expect(await exit).toBe("SIGKILL");
    } finally {
      await prepared.cleanup();
    }
  });
});
