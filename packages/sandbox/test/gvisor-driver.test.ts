import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  GvisorDriver,
  type GvisorDriverOptions,
  runPreparedCommand,
  SANDBOX_CONTROL_MOUNT,
} from "../src/index.ts";
import {
  createWorkspace,
  runShell,
  type SandboxWorkspace,
  testRuntimeRoot,
  waitFor,
  witnessFor,
} from "./helpers/sandbox-fixture.ts";

/**
 * The gVisor driver against the real runsc: a command runs in the checkout, edits land, writes
 * outside are refused, the network is gVisor's empty netstack except through the egress proxy,
 * pids are bounded (fork bomb), and a stop kills the container with nothing left behind.
 */

const drivers: GvisorDriver[] = [];
function newGvisor(options: GvisorDriverOptions = {}): GvisorDriver {
  const driver = new GvisorDriver({ runtimeRoot: `${testRuntimeRoot}-gvisor`, ...options });
  drivers.push(driver);
  return driver;
}

const skipReason = await (async () => {
  if (process.platform !== "linux") return "gVisor needs Linux";
  const version = await new GvisorDriver().version();
  if (version === null) return "runsc is not installed (apt-get install runsc)";
  return null;
})();
if (skipReason !== null) console.warn(`gvisor-driver.test.ts skipped: ${skipReason}`);

let ws: SandboxWorkspace;
beforeEach(async () => {
  ws = await createWorkspace();
});
afterEach(async () => {
  await ws.dispose();
});
afterAll(async () => {
  for (const driver of drivers.splice(0)) await driver.dispose();
});

describe.skipIf(skipReason !== null)("GvisorDriver on the real runsc", () => {
  const driver = newGvisor();

  it("runs argv in the checkout under gVisor's kernel, with stdin, env and the exit code", async () => {
    const result = await runShell(
      driver,
      'pwd; read -r line; echo "got: $line"; echo "token=$TOKEN home=$HOME"; echo note > from-agent.txt; dmesg 2>/dev/null | head -1 | grep -qi gvisor && echo kernel=gvisor; exit 7',
      ws.spec({ env: { PATH: "/usr/bin:/bin", TOKEN: "t0k3n" } }),
      { stdin: "the prompt\n", timeoutMs: 30_000 },
    );
    expect(result.stderr).toBe("");
    expect(result.stdout).toBe(
      `${ws.checkout}\ngot: the prompt\ntoken=t0k3n home=/home/agent\nkernel=gvisor\n`,
    );
    expect(result.exitCode).toBe(7);
    expect(await readFile(join(ws.checkout, "from-agent.txt"), "utf8")).toBe("note\n");
  });

  it("refuses writes outside the checkout and control dir and hides the rest of the host", async () => {
    const witness = witnessFor(ws);
    await witness.capture();
    const result = await runShell(
      driver,
      [
        `echo '{"kind":"submit"}' > ${SANDBOX_CONTROL_MOUNT}/transition.json && echo control=ok`,
        `(echo x > ${ws.gitDir}/HEAD) 2>/dev/null && echo gitdir=written || echo gitdir=denied`,
        `(echo x > /usr/overseer-probe) 2>/dev/null && echo usr=written || echo usr=denied`,
        `cat ${ws.outside}/canary.txt 2>/dev/null || echo outside=invisible`,
        `cat ${ws.otherProject}/secret.txt 2>/dev/null || echo other=invisible`,
        "test -e /etc/shadow && echo shadow=visible || echo shadow=absent",
        "grep -E '^CapEff' /proc/self/status",
      ].join("; "),
      ws.spec(),
      { timeoutMs: 30_000 },
    );
    expect(result.stdout.split("\n").filter(Boolean)).toEqual([
      "control=ok",
      "gitdir=denied",
      "usr=denied",
      "outside=invisible",
      "other=invisible",
      "shadow=absent",
      "CapEff:\t0000000000000000",
    ]);
    expect(JSON.parse(await readFile(join(ws.control, "transition.json"), "utf8"))).toEqual({
      kind: "submit",
    });
    await witness.assertUnchanged();
  });

  it("contains a fork bomb at the run's pids limit and still exits", async () => {
    const result = await runShell(
      driver,
      '(n=0; while [ $n -lt 400 ]; do sleep 3 & n=$((n+1)); done) 2>/dev/null; c=0; for p in /proc/[0-9]*; do c=$((c+1)); done; echo "procs=$c"',
      ws.spec({ limits: { pidsMax: 40, memoryBytes: 256 * 1024 ** 2 } }),
      { timeoutMs: 60_000 },
    );
    const procs = Number(/procs=(\d+)/.exec(result.stdout)?.[1] ?? "NaN");
    expect(procs).toBeGreaterThan(1);
    expect(procs).toBeLessThanOrEqual(40);
  });

  it("stops a run on timeout: the container and every process are gone, no state is left", async () => {
    const tag = `${4000 + Math.floor(Math.random() * 1000)}.${Date.now() % 1_000_000}`;
    const prepared = await driver.prepare(
      ["/bin/sh", "-c", `sleep ${tag} & sleep ${tag}; echo never`],
      ws.spec(),
    );
    let pid = 0;
    try {
      const result = await runPreparedCommand(prepared, {
        timeoutMs: 3_000,
        graceMs: 500,
        onSpawn: (p) => {
          pid = p;
        },
      });
      expect(result.timedOut).toBe(true);
      expect(result.stdout).not.toContain("never");
    } finally {
      await prepared.cleanup();
    }
    // gVisor's processes are not host processes: the host sees only runsc's; all must be gone.
    expect(await waitFor(async () => !existsSync(`/proc/${pid}`), 5_000)).toBe(true);
    const leftovers = await runscProcessesFor(prepared.runId);
    expect(leftovers).toEqual([]);
  });
});

describe.skipIf(skipReason !== null)("GvisorDriver: network", () => {
  let target: Server;
  let targetPort = 0;
  let targetHits = 0;
  beforeAll(async () => {
    target = createServer((req, res) => {
      targetHits++;
      res.end(`hello from ${req.headers.host}\n`);
    });
    await new Promise<void>((resolve) => target.listen(0, "127.0.0.1", resolve));
    const address = target.address();
    targetPort = typeof address === "object" && address !== null ? address.port : 0;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => target.close(() => resolve()));
  });

  it("has no network without allow-listed hosts", async () => {
    const result = await runShell(
      newGvisor(),
      `curl -sS --max-time 3 http://127.0.0.1:${targetPort}/ >/dev/null 2>&1 && echo reached || echo blocked; cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d ' '`,
      ws.spec(),
      { timeoutMs: 30_000 },
    );
    expect(result.stdout.split("\n").filter(Boolean)).toEqual(["blocked", "lo"]);
  });

  it("reaches allow-listed hosts through the egress proxy and nothing else", async () => {
    targetHits = 0;
    const driver = newGvisor({
      egress: {
        resolve: async (host) => {
          if (host.endsWith(".test")) return ["127.0.0.1"];
          throw Object.assign(new Error("not found"), { code: "ENOTFOUND" });
        },
        isForbiddenAddress: () => false,
      },
    });
    const result = await runShell(
      driver,
      `echo "proxy=$HTTPS_PROXY";
       curl -sS --max-time 5 http://allowed.test:${targetPort}/ 2>&1;
       curl -sSf --max-time 5 http://denied.test:${targetPort}/ >/dev/null 2>&1 && echo denied-reached || echo denied-blocked;
       curl -sS --noproxy '*' --max-time 3 http://127.0.0.1:${targetPort}/ >/dev/null 2>&1 && echo direct-reached || echo direct-blocked`,
      ws.spec({ network: { mode: "proxy", allowHosts: ["allowed.test"], allowPorts: [targetPort] } }),
      { timeoutMs: 30_000 },
    );
    expect(result.stdout.split("\n").filter(Boolean)).toEqual([
      "proxy=http://127.0.0.1:3128",
      `hello from allowed.test:${targetPort}`,
      "denied-blocked",
      "direct-blocked",
    ]);
    expect(targetHits).toBe(1);
  });
});

describe.skipIf(skipReason !== null)("GvisorDriver.probe", () => {
  it("passes the shared doctor probe and names runsc's version and platform", async () => {
    const report = await newGvisor().probe();
    expect(report.driver).toBe("gvisor");
    expect(report.version).toMatch(/^runsc version .* \(platform (ptrace|systrap|kvm)/);
    expect([
      report.writeInside.ok,
      report.writeOutsideDenied.ok,
      report.networkDenied.ok,
      report.privilegesDropped.ok,
    ]).toEqual([true, true, true, true]);
  });
});

/** Host processes of runsc (run, gofer, sandbox) still naming the run's container. */
async function runscProcessesFor(runId: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, "utf8").catch(() => "");
    if (cmdline.includes("runsc") && cmdline.includes(`overseer-${runId}-`)) pids.push(Number(entry));
  }
  return pids;
}
