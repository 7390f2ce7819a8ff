import { chmod, mkdir, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type {
  PreparedCommand,
  ProbeCheck,
  ProbeReport,
  SandboxCapabilities,
  SandboxDriver,
} from "./sandbox-driver.ts";
import { runPreparedCommand } from "./sandbox-runner.ts";
import type { SandboxSpec } from "./sandbox-spec-schema.ts";

/**
 * The `doctor` probe shared by every driver: it really runs a sandboxed shell script and checks,
 * from the host side, that the policy held — a write in the checkout arrived, writes to a
 * read-only bind and to an unbound host directory failed and left both canaries untouched, a TCP
 * listener on the host loopback saw no connection, and the process had no capabilities.
 */

const PROBE_SCRIPT = `
echo probe-inside > "$1/probe-inside.txt" && echo WRITE_INSIDE=ok || echo WRITE_INSIDE=fail
if (echo tampered > "$2/canary.txt") 2>/dev/null; then echo WRITE_RO=written; else echo WRITE_RO=denied; fi
if (echo tampered > "$3/canary.txt") 2>/dev/null; then echo WRITE_UNBOUND=written; else echo WRITE_UNBOUND=denied; fi
if cat "$3/canary.txt" >/dev/null 2>&1; then echo READ_UNBOUND=readable; else echo READ_UNBOUND=denied; fi
while read -r key value rest; do
  case "$key" in CapEff:|NoNewPrivs:) echo "\${key%:}=$value";; esac
done < /proc/self/status
ifaces=""
while IFS=: read -r name rest; do
  case "$name" in *Inter-*|*face*) ;; *) ifaces="$ifaces$(echo $name)," ;; esac
done < /proc/net/dev
echo "IFACES=$ifaces"
if [ -x /bin/bash ]; then
  if /bin/bash -c "exec 3<>/dev/tcp/127.0.0.1/$4" 2>/dev/null; then echo TCP=connected; else echo TCP=refused; fi
else
  echo TCP=untested
fi
if ls -d / >/dev/null 2>&1; then echo LS=ok; else echo LS=fail; fi
`;

export interface ProbeContext {
  version: string | null;
  capabilities: SandboxCapabilities;
  unsafe: boolean;
  /** Extra spec fields for this driver's probe. */
  spec?: Partial<SandboxSpec>;
  /** chmod applied to the probe's checkout and control dirs (when the sandbox user is not their owner). */
  writableDirMode?: number;
  /** False when the sandbox's /proc does not show NoNewPrivs (gVisor): only the capabilities are checked. Default true. */
  noNewPrivsReported?: boolean;
  /** Runs after the command exited, before cleanup (e.g. to read the run cgroup's counters). */
  inspect?: (prepared: PreparedCommand, problems: string[]) => Promise<void>;
}

async function listen(server: Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      resolve(typeof address === "object" && address !== null ? address.port : 0);
    });
  });
}

async function fingerprint(path: string): Promise<string> {
  const [content, info] = await Promise.all([readFile(path, "utf8"), stat(path)]);
  return `${content}|${info.mtimeMs}|${info.size}`;
}

/** The probe's directories on the host: two the sandbox may write, a read-only bind, an unbound one. */
interface ProbeDirs {
  checkout: string;
  control: string;
  readOnly: string;
  unbound: string;
}

/** Host-side fingerprints of the two canaries, compared before and after the sandboxed run. */
type CanaryPrints = readonly [readOnly: string, unbound: string];

async function createProbeDirs(base: string, writableDirMode: number | undefined): Promise<ProbeDirs> {
  const dirs: ProbeDirs = {
    checkout: join(base, "checkout"),
    control: join(base, "control"),
    readOnly: join(base, "readonly"),
    unbound: join(base, "unbound"),
  };
  for (const dir of [dirs.checkout, dirs.control, dirs.readOnly, dirs.unbound]) await mkdir(dir);
  if (writableDirMode !== undefined) {
    for (const dir of [dirs.checkout, dirs.control]) await chmod(dir, writableDirMode);
  }
  await writeFile(join(dirs.readOnly, "canary.txt"), "read-only canary\n");
  await writeFile(join(dirs.unbound, "canary.txt"), "unbound canary\n");
  return dirs;
}

async function canaryPrints(dirs: ProbeDirs, onMissing?: () => string): Promise<CanaryPrints> {
  const print = (dir: string): Promise<string> => {
    const pending = fingerprint(join(dir, "canary.txt"));
    return onMissing === undefined ? pending : pending.catch(onMissing);
  };
  return [await print(dirs.readOnly), await print(dirs.unbound)];
}

/** The script's `KEY=value` lines. */
function parseProbeFacts(stdout: string): Map<string, string> {
  const facts = new Map<string, string>();
  for (const line of stdout.split("\n")) {
    const at = line.indexOf("=");
    if (at > 0) facts.set(line.slice(0, at), line.slice(at + 1));
  }
  return facts;
}

const failed = (detail: string): ProbeCheck => ({ ok: false, detail });

async function checkWriteInside(checkout: string, facts: Map<string, string>): Promise<ProbeCheck> {
  const inside = await readFile(join(checkout, "probe-inside.txt"), "utf8").catch(() => "");
  return inside === "probe-inside\n"
    ? { ok: true, detail: "a file written in the checkout appeared on the host" }
    : failed(`the checkout write did not arrive (inside reported ${facts.get("WRITE_INSIDE") ?? "nothing"})`);
}

function checkWriteOutsideDenied(
  facts: Map<string, string>,
  before: CanaryPrints,
  after: CanaryPrints,
): ProbeCheck {
  const outsideOk =
    facts.get("WRITE_RO") === "denied" &&
    facts.get("WRITE_UNBOUND") === "denied" &&
    facts.get("READ_UNBOUND") === "denied" &&
    after[0] === before[0] &&
    after[1] === before[1];
  return outsideOk
    ? {
        ok: true,
        detail: "read-only bind and unbound host path were not writable; host canaries unchanged",
      }
    : failed(
        `read-only bind write: ${facts.get("WRITE_RO")}, unbound write: ${facts.get("WRITE_UNBOUND")}, unbound read: ${facts.get("READ_UNBOUND")}, canaries ${after[0] === before[0] && after[1] === before[1] ? "unchanged" : "CHANGED"}`,
      );
}

function checkNetworkDenied(facts: Map<string, string>, connections: number): ProbeCheck {
  const ifaces = (facts.get("IFACES") ?? "").split(",").filter(Boolean);
  const tcp = facts.get("TCP") ?? "untested";
  const networkOk = tcp !== "connected" && connections === 0 && ifaces.every((name) => name === "lo");
  return networkOk
    ? {
        ok: true,
        detail: `no route to the host loopback (interfaces: ${ifaces.join(",") || "none"}; tcp ${tcp}; listener saw 0 connections)`,
      }
    : failed(
        `interfaces: ${ifaces.join(",")}; tcp to host loopback ${tcp}; listener saw ${connections} connections`,
      );
}

function checkPrivilegesDropped(facts: Map<string, string>, noNewPrivsReported: boolean): ProbeCheck {
  const capEff = facts.get("CapEff");
  const noNewPrivs = facts.get("NoNewPrivs");
  if (!noNewPrivsReported && capEff !== undefined && /^0+$/.test(capEff) && noNewPrivs === undefined)
    return {
      ok: true,
      detail: "CapEff 0 (no_new_privs set by the runtime; this kernel's /proc does not show it)",
    };
  return capEff !== undefined && /^0+$/.test(capEff) && noNewPrivs === "1"
    ? { ok: true, detail: "CapEff 0, NoNewPrivs 1" }
    : failed(`CapEff ${capEff ?? "?"}, NoNewPrivs ${noNewPrivs ?? "?"}`);
}

/**
 * Runs the probe script in the driver's sandbox and fills the report's four checks from what the
 * script printed and what the host saw (the checkout file, the canaries, the loopback listener).
 */
async function runProbeChecks(
  driver: SandboxDriver,
  context: ProbeContext,
  base: string,
  listener: { server: Server; connections: () => number },
  report: ProbeReport,
): Promise<void> {
  const dirs = await createProbeDirs(base, context.writableDirMode);
  const before = await canaryPrints(dirs);
  const port = await listen(listener.server);

  const prepared = await driver.prepare(
    ["/bin/sh", "-c", PROBE_SCRIPT, "probe", dirs.checkout, dirs.readOnly, dirs.unbound, String(port)],
    {
      ...context.spec,
      checkoutDir: dirs.checkout,
      controlDir: dirs.control,
      readOnlyBinds: [dirs.readOnly],
      env: { PATH: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" },
      network: { mode: "none" },
    },
  );
  try {
    const result = await runPreparedCommand(prepared, { timeoutMs: 30_000 });
    await context.inspect?.(prepared, report.problems);
    const facts = parseProbeFacts(result.stdout);
    if (result.exitCode !== 0) {
      report.problems.push(
        `probe command exited with ${result.exitCode ?? result.signal}: ${result.stderr.trim().slice(0, 500)}`,
      );
    }
    report.writeInside = await checkWriteInside(dirs.checkout, facts);
    const after = await canaryPrints(dirs, () => "missing");
    report.writeOutsideDenied = checkWriteOutsideDenied(facts, before, after);
    report.networkDenied = checkNetworkDenied(facts, listener.connections());
    report.privilegesDropped = checkPrivilegesDropped(facts, context.noNewPrivsReported ?? true);
    if (facts.get("LS") === "fail") {
      report.problems.push(
        "coreutils `ls -d /` fails inside the sandbox (an old gVisor rejects statx with AT_NO_AUTOMOUNT, so ls and stat fail with EINVAL): install a current gVisor release (https://gvisor.dev/docs/user_guide/install/)",
      );
    }
  } finally {
    await prepared.cleanup();
  }
}

/** Failed checks (unless the driver is knowingly unsafe) and unenforced limits, as problems. */
function collectCheckProblems(report: ProbeReport, context: ProbeContext): void {
  for (const [name, check] of [
    ["writeInside", report.writeInside],
    ["writeOutsideDenied", report.writeOutsideDenied],
    ["networkDenied", report.networkDenied],
    ["privilegesDropped", report.privilegesDropped],
  ] as const) {
    if (!check.ok && !context.unsafe) report.problems.push(`${name}: ${check.detail}`);
  }
  for (const [name, limit] of Object.entries(context.capabilities)) {
    if (!limit.enforced) report.problems.push(`limit ${name} not enforced: ${limit.detail}`);
  }
}

export async function runSandboxProbe(driver: SandboxDriver, context: ProbeContext): Promise<ProbeReport> {
  const started = performance.now();
  const report: ProbeReport = {
    driver: driver.name,
    available: context.version !== null,
    version: context.version,
    unsafe: context.unsafe,
    writeInside: failed("not run"),
    writeOutsideDenied: failed("not run"),
    networkDenied: failed("not run"),
    privilegesDropped: failed("not run"),
    limits: context.capabilities,
    durationMs: 0,
    problems: [],
  };
  if (context.version === null) {
    report.problems.push(`the ${driver.name} backend is not available on this host`);
    report.durationMs = performance.now() - started;
    return report;
  }

  const base = await mkdtemp(join(tmpdir(), "overseer-probe-"));
  let connections = 0;
  const server = createServer((socket) => {
    connections++;
    socket.destroy();
  });
  try {
    await runProbeChecks(driver, context, base, { server, connections: () => connections }, report);
  } catch (error) {
    report.problems.push(`probe failed: ${(error as Error).message}`);
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await rm(base, { recursive: true, force: true });
  }
  collectCheckProblems(report, context);
  report.durationMs = performance.now() - started;
  return report;
}
