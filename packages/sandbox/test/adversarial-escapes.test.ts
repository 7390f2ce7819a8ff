import { execFile, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { lstat, readFile, rm, stat } from "node:fs/promises";
import { createServer as createNetServer, type Server } from "node:net";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { driver, useAdversarialSandbox, witness, ws } from "./helpers/adversarial-setup.ts";
import { runSandboxed, runShell } from "./helpers/sandbox-fixture.ts";

/**
 * Attacks an untrusted agent could try from inside a bwrap sandbox, run for real: escapes through the filesystem, inherited descriptors, privileges and the network. Every case
 * asserts that the attack failed inside AND (afterEach) that nothing outside the checkout changed:
 * the other project, unrelated host files, the read-only git dir and a canary in /root are
 * fingerprinted (content, mode, mtime) before and compared after each test.
 */

const execFileAsync = promisify(execFile);

useAdversarialSandbox();

function listen(server: Server, target: number | string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    const onListening = () => {
      const address = server.address();
      resolve(typeof address === "object" && address !== null ? address.port : 0);
    };
    if (typeof target === "string") server.listen(target, onListening);
    else server.listen(target, "127.0.0.1", onListening);
  });
}

describe("filesystem escapes", () => {
  it("cannot write a host file by absolute path, and cannot even see it", async () => {
    const target = join(ws.outside, "canary.txt");
    const result = await runShell(
      driver,
      `cat ${target} 2>/dev/null && echo READ; echo pwned > ${target} 2>/dev/null && echo WROTE; true`,
      ws.spec(),
    );
    expect(result.stdout).not.toContain(ws.secret);
    expect(result.stdout).not.toContain("READ");
    expect(await readFile(target, "utf8")).toBe(`${ws.secret}\n`);
  });

  it("cannot climb out of the checkout with ..", async () => {
    const result = await runShell(
      driver,
      "cat ../../outside/canary.txt ../../other-project/checkout/secret.txt 2>&1; mkdir -p ../../outside && echo pwned > ../../outside/canary.txt; echo LISTING; ls -A ../..",
      ws.spec(),
    );
    expect(result.stdout).not.toContain(ws.secret);
    // Whatever the agent created up there lived in its private /tmp, not on the host.
    expect(await readFile(join(ws.outside, "canary.txt"), "utf8")).toBe(`${ws.secret}\n`);
    // The sibling project is not even listed from inside.
    expect(result.stdout.split("LISTING")[1]?.split("\n").filter(Boolean).sort()).toEqual([
      "outside",
      "project",
    ]);
  });

  it("a symlink planted in the checkout does not lead outside", async () => {
    const target = join(ws.outside, "canary.txt");
    const result = await runShell(
      driver,
      `ln -s ${target} evil-abs && ln -s ../../outside/canary.txt evil-rel && ln -s /root evil-root;
       cat evil-abs evil-rel 2>&1; ls evil-root/ 2>&1; echo pwned > evil-abs 2>&1; echo pwned > evil-rel 2>&1; echo done`,
      ws.spec(),
    );
    expect(result.stdout).toContain("done");
    expect(result.stdout).not.toContain(ws.secret);
    expect(await readFile(target, "utf8")).toBe(`${ws.secret}\n`);
    // The links themselves exist on the host: the worker must never follow them (documented).
    expect((await lstat(join(ws.checkout, "evil-abs"))).isSymbolicLink()).toBe(true);
  });

  it("cannot hardlink a visible read-only file into the checkout", async () => {
    const result = await runShell(
      driver,
      `ln ${ws.gitDir}/HEAD hl-git 2>&1 && echo LINKED; ln /etc/passwd hl-etc 2>&1 && echo LINKED; ln /usr/bin/env hl-usr 2>&1 && echo LINKED; true`,
      ws.spec(),
    );
    expect(result.stdout).not.toContain("LINKED");
    expect(result.stdout).toContain("Invalid cross-device link");
    expect(existsSync(join(ws.checkout, "hl-git"))).toBe(false);
  });

  it("cannot create device nodes", async () => {
    const result = await runShell(
      driver,
      "mknod dev-mem c 1 1 2>&1 && echo MADE; mknod dev-sda b 8 0 2>&1 && echo MADE; true",
      ws.spec(),
    );
    expect(result.stdout).not.toContain("MADE");
    expect(result.stdout).toContain("Operation not permitted");
    expect(existsSync(join(ws.checkout, "dev-mem"))).toBe(false);
  });

  it("cannot write to the read-only git dir", async () => {
    const result = await runShell(
      driver,
      `echo pwned >> ${ws.gitDir}/HEAD 2>&1; touch ${ws.gitDir}/new 2>&1; rm -f ${ws.gitDir}/HEAD 2>&1; cat ${ws.gitDir}/HEAD`,
      ws.spec(),
    );
    expect(result.stdout).toContain("Read-only file system");
    expect(result.stdout).toContain("ref: refs/heads/main");
    expect(await readFile(join(ws.gitDir, "HEAD"), "utf8")).toBe("ref: refs/heads/main\n");
  });

  it("cannot see /root, other projects, /etc/shadow or the host's accounts", async () => {
    const result = await runShell(
      driver,
      `ls -A /root 2>&1; cat ${ws.rootCanaryDir}/id_ed25519 2>&1; ls ${ws.otherProject} 2>&1; cat /etc/shadow 2>&1; cat /etc/passwd; ls /run /var/run /var/lib 2>&1; true`,
      ws.spec(),
    );
    expect(result.stdout).not.toContain(ws.secret);
    expect(result.stdout).toContain("ls: cannot access '/root'");
    expect(result.stdout).toContain("cat: /etc/shadow: No such file or directory");
    expect(result.stdout).toContain("ls: cannot access '/run'");
    const hostUsers = (await readFile("/etc/passwd", "utf8"))
      .split("\n")
      .map((l) => l.split(":")[0])
      .filter(Boolean);
    const sandboxUsers = result.stdout
      .split("\n")
      .filter((l) => /^[a-z_][a-z0-9_-]*:x:\d+:/.test(l))
      .map((l) => l.split(":")[0]);
    expect(sandboxUsers.sort()).toEqual(["agent", "nobody", "root"]);
    expect(hostUsers.length).toBeGreaterThan(3);
  });

  it("cannot remount anything writable or mount new filesystems", async () => {
    const result = await runShell(
      driver,
      `mount -o remount,rw / 2>&1; mount -o remount,rw /usr 2>&1; mount -o remount,rw ${ws.gitDir} 2>&1;
       mount -t tmpfs none /tmp 2>&1; touch /usr/pwned 2>&1; touch /pwned 2>&1; touch /etc/pwned 2>&1; echo end`,
      ws.spec(),
    );
    expect(result.stdout).toContain("end");
    expect(result.stdout).toMatch(/must be superuser|Permission denied|not permitted/);
    expect(result.stdout.match(/Read-only file system/g)?.length).toBe(3);
    expect(existsSync("/usr/pwned")).toBe(false);
  });

  it("cannot write kernel knobs in /proc (core_pattern would be a host takeover)", async () => {
    const hostCorePattern = await readFile("/proc/sys/kernel/core_pattern", "utf8");
    // Writes the CURRENT value back, so the test is harmless even if containment failed.
    const result = await runShell(
      driver,
      `cat /proc/sys/kernel/core_pattern > /tmp/cp && { cat /tmp/cp > /proc/sys/kernel/core_pattern && echo WROTE_SYSCTL; } 2>&1;
       { echo 1 > /proc/sys/vm/drop_caches && echo WROTE_DROP_CACHES; } 2>&1;
       [ -e /proc/sysrq-trigger ] && { { : > /proc/sysrq-trigger && echo WROTE_SYSRQ; } 2>&1; }; echo end`,
      ws.spec(),
    );
    expect(result.stdout).not.toContain("WROTE_");
    expect(result.stdout).toContain("Read-only file system");
    expect(result.stdout).toContain("end");
    expect(await readFile("/proc/sys/kernel/core_pattern", "utf8")).toBe(hostCorePattern);
  });

  it("cannot plant setuid/setgid files (they would be setuid-root on the host)", async () => {
    const result = await runShell(
      driver,
      `cp /usr/bin/id ./suid-id && chmod u+s ./suid-id 2>&1; chmod g+s ./suid-id 2>&1; chmod 4755 ./suid-id 2>&1;
       python3 -c 'import os
try:
    os.open("suid-new", os.O_CREAT | os.O_WRONLY, 0o4755); print("CREATED")
except OSError as e: print("errno", e.errno)'; echo end`,
      ws.spec(),
    );
    expect(result.stdout).toContain("end");
    expect(result.stdout).toContain("Operation not permitted");
    expect(result.stdout).not.toContain("CREATED");
    const mode = (await stat(join(ws.checkout, "suid-id"))).mode;
    expect(mode & 0o6000).toBe(0);
    expect(existsSync(join(ws.checkout, "suid-new"))).toBe(false);
  });
});

describe("inherited file descriptors", () => {
  it("a directory fd the worker inherited without CLOEXEC does not reach the agent", async () => {
    const prepared = await driver.prepare(
      [
        "/bin/sh",
        "-c",
        "ls /proc/self/fd/; ls /proc/self/fd/47/ 2>&1; cat /proc/self/fd/47/canary.txt 2>&1; cat /proc/self/fd/48 2>&1; echo end",
      ],
      ws.spec(),
    );
    try {
      // A worker whose own parent leaked fds 47 (a host directory) and 48 (a host file).
      const { stdout } = await execFileAsync(
        "/bin/bash",
        [
          "-c",
          'exec 47<"$1" 48<"$2"; shift 2; exec "$@"',
          "leaky-worker",
          ws.outside,
          join(ws.outside, "canary.txt"),
          prepared.file,
          ...prepared.args,
        ],
        { cwd: prepared.cwd, env: {}, timeout: 20_000 },
      );
      expect(stdout).toContain("end");
      expect(stdout).not.toContain(ws.secret);
      expect(stdout.split("\n").slice(0, 4).sort()).toEqual(["0", "1", "2", "3"]); // ls's own dir fd is 3
    } finally {
      await prepared.cleanup();
    }
  });
});

describe("privileges and identity", () => {
  it("runs with no capabilities, no_new_privs, seccomp and an unprivileged uid", async () => {
    const result = await runShell(
      driver,
      "id -u; id -g; grep -E '^(CapEff|CapPrm|CapBnd|NoNewPrivs|Seccomp):' /proc/self/status",
      ws.spec(),
    );
    const status = Object.fromEntries(
      result.stdout
        .split("\n")
        .filter((l) => l.includes(":"))
        .map((l) => l.split(/:\s+/) as [string, string]),
    );
    expect(result.stdout.split("\n").slice(0, 2)).toEqual(["1000", "1000"]);
    expect(status.CapEff).toBe("0000000000000000");
    expect(status.CapPrm).toBe("0000000000000000");
    expect(status.CapBnd).toBe("0000000000000000");
    expect(status.NoNewPrivs).toBe("1");
    expect(status.Seccomp).toBe("2");
  });

  it("cannot regain capabilities in a nested user namespace", async () => {
    const result = await runShell(
      driver,
      "unshare -U -r sh -c 'mount -t tmpfs none /tmp && echo MOUNTED' 2>&1; echo end",
      ws.spec(),
    );
    expect(result.stdout).not.toContain("MOUNTED");
    expect(result.stdout).toContain("unshare failed");
  });

  it("sees no host process and cannot signal the worker", async () => {
    const result = await runShell(
      driver,
      `ls /proc | grep -c '^[0-9]'; kill -0 ${process.pid} 2>&1 && echo SIGNALLED; [ -e /proc/${process.pid} ] && echo VISIBLE; echo end`,
      ws.spec(),
    );
    expect(result.stdout).not.toContain("SIGNALLED");
    expect(result.stdout).not.toContain("VISIBLE");
    expect(Number(result.stdout.split("\n")[0])).toBeLessThan(10);
  });

  it("gets exactly the given environment; worker secrets are nowhere, not in /proc/*/environ either", async () => {
    const canary = `worker-secret-${ws.secret}`;
    process.env.OVERSEER_TEST_WORKER_SECRET = canary;
    try {
      const prepared = await driver.prepare(
        [
          "/bin/sh",
          "-c",
          "env; echo ---; for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < $f; done 2>/dev/null; echo ---; cat /proc/1/cmdline | tr '\\0' ' '",
        ],
        ws.spec({ env: { PATH: "/usr/bin:/bin", ALLOWED_VAR: "allowed-value" } }),
      );
      try {
        // A careless caller passing the worker's whole environment: `env -i` must still drop it.
        const output = await new Promise<string>((resolve, reject) => {
          const child = spawn(prepared.file, [...prepared.args], {
            cwd: prepared.cwd,
            env: { ...process.env, ...prepared.env },
            detached: true,
            stdio: ["ignore", "pipe", "inherit"],
          });
          let out = "";
          child.stdout.on("data", (chunk: Buffer) => {
            out += chunk.toString();
          });
          child.once("error", reject);
          child.once("close", () => resolve(out));
        });
        const [envPart = ""] = output.split("---");
        const names = envPart
          .split("\n")
          .filter(Boolean)
          .map((line) => line.split("=")[0])
          .sort();
        expect(names).toEqual(["ALLOWED_VAR", "HOME", "PATH", "PWD"]);
        expect(output).not.toContain(canary);
        expect(output).toContain("allowed-value");
      } finally {
        await prepared.cleanup();
      }
    } finally {
      delete process.env.OVERSEER_TEST_WORKER_SECRET;
    }
  });
});

describe("network", () => {
  let listener: Server;
  let port = 0;
  let connections = 0;

  beforeAll(async () => {
    listener = createNetServer((socket) => {
      connections++;
      socket.destroy();
    });
    port = await listen(listener, 0);
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => listener.close(() => resolve()));
  });

  it("cannot reach Postgres, Redis or any host loopback port", async () => {
    const result = await runShell(
      driver,
      `for p in 5432 6379 ${port}; do bash -c "exec 3<>/dev/tcp/127.0.0.1/$p" 2>/dev/null && echo "OPEN $p" || echo "closed $p"; done;
       grep -v -E 'Inter|face|lo:' /proc/net/dev | wc -l; getent hosts example.com || echo nodns`,
      ws.spec(),
    );
    expect(result.stdout).toContain("closed 5432");
    expect(result.stdout).toContain("closed 6379");
    expect(result.stdout).toContain(`closed ${port}`);
    expect(result.stdout).not.toContain("OPEN");
    expect(result.stdout).toContain("nodns");
    expect(result.stdout.split("\n")[3]).toBe("0"); // no interface but lo
    expect(connections).toBe(0);
  });

  it("cannot connect to host unix sockets, filesystem or abstract", async () => {
    let unixConnections = 0;
    const socketPath = join(ws.outside, "service.sock");
    const abstractName = `\0overseer-test-${ws.secret}`;
    const fsServer = createNetServer((s) => {
      unixConnections++;
      s.destroy();
    });
    const abstractServer = createNetServer((s) => {
      unixConnections++;
      s.destroy();
    });
    await listen(fsServer, socketPath);
    await listen(abstractServer, abstractName);
    await witness.capture(); // the socket file is part of the outside world now
    try {
      const script = `
const net = require("net");
const targets = [${JSON.stringify(socketPath)}, "/var/run/postgresql/.s.PGSQL.5432", "/run/mysqld/mysqld.sock", ${JSON.stringify(abstractName)}];
let pending = targets.length;
for (const path of targets) {
  const s = net.connect(path);
  s.on("connect", () => { console.log("CONNECTED " + JSON.stringify(path)); s.destroy(); if (--pending === 0) process.exit(0); });
  s.on("error", (e) => { console.log("refused " + e.code); if (--pending === 0) process.exit(0); });
}`;
      const result = await runSandboxed(driver, ["/usr/bin/node", "-e", script], ws.spec());
      expect(result.stdout).not.toContain("CONNECTED");
      expect(result.stdout.match(/refused/g)?.length).toBe(4);
      expect(unixConnections).toBe(0);
    } finally {
      await new Promise<void>((resolve) => fsServer.close(() => resolve()));
      await new Promise<void>((resolve) => abstractServer.close(() => resolve()));
      await rm(socketPath, { force: true });
      await witness.capture();
    }
  });
});
