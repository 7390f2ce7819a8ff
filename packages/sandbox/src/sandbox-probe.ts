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
`;

export interface ProbeContext {
  version: string | null;
  capabilities: SandboxCapabilities;
  unsafe: boolean;
  /** Extra spec fields for this driver's probe. */
  spec?: Partial<SandboxSpec>;
  /** chmod applied to the probe's checkout and control dirs (when the sandbox user is not their owner). */
  writableDirMode?: number;
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

export async function runSandboxProbe(driver: SandboxDriver, context: ProbeContext): Promise<ProbeReport> {
  const started = performance.now();
  const problems: string[] = [];
  const failed = (detail: string): ProbeCheck => ({ ok: false, detail });
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
    problems,
  };
  if (context.version === null) {
    problems.push(`the ${driver.name} backend is not available on this host`);
    report.durationMs = performance.now() - started;
    return report;
  }

  const base = await mkdtemp(join(tmpdir(), "overseer-probe-"));
  const server = createServer((socket) => {
    connections++;
    socket.destroy();
  });
  let connections = 0;
  try {
    const checkout = join(base, "checkout");
    const control = join(base, "control");
    const readOnly = join(base, "readonly");
    const unbound = join(base, "unbound");
    for (const dir of [checkout, control, readOnly, unbound]) await mkdir(dir);
    if (context.writableDirMode !== undefined) {
      for (const dir of [checkout, control]) await chmod(dir, context.writableDirMode);
    }
    await writeFile(join(readOnly, "canary.txt"), "read-only canary\n");
    await writeFile(join(unbound, "canary.txt"), "unbound canary\n");
    const before = [
      await fingerprint(join(readOnly, "canary.txt")),
      await fingerprint(join(unbound, "canary.txt")),
    ];
    const port = await listen(server);

    const prepared = await driver.prepare(
      ["/bin/sh", "-c", PROBE_SCRIPT, "probe", checkout, readOnly, unbound, String(port)],
      {
        ...context.spec,
        checkoutDir: checkout,
        controlDir: control,
        readOnlyBinds: [readOnly],
        env: { PATH: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" },
        network: { mode: "none" },
      },
    );
    try {
      const result = await runPreparedCommand(prepared, { timeoutMs: 30_000 });
      await context.inspect?.(prepared, problems);
      const facts = new Map<string, string>();
      for (const line of result.stdout.split("\n")) {
        const at = line.indexOf("=");
        if (at > 0) facts.set(line.slice(0, at), line.slice(at + 1));
      }
      if (result.exitCode !== 0) {
        problems.push(
          `probe command exited with ${result.exitCode ?? result.signal}: ${result.stderr.trim().slice(0, 500)}`,
        );
      }

      const inside = await readFile(join(checkout, "probe-inside.txt"), "utf8").catch(() => "");
      report.writeInside =
        inside === "probe-inside\n"
          ? { ok: true, detail: "a file written in the checkout appeared on the host" }
          : failed(
              `the checkout write did not arrive (inside reported ${facts.get("WRITE_INSIDE") ?? "nothing"})`,
            );

      const after = [
        await fingerprint(join(readOnly, "canary.txt")).catch(() => "missing"),
        await fingerprint(join(unbound, "canary.txt")).catch(() => "missing"),
      ];
      const outsideOk =
        facts.get("WRITE_RO") === "denied" &&
        facts.get("WRITE_UNBOUND") === "denied" &&
        facts.get("READ_UNBOUND") === "denied" &&
        after[0] === before[0] &&
        after[1] === before[1];
      report.writeOutsideDenied = outsideOk
        ? {
            ok: true,
            detail: "read-only bind and unbound host path were not writable; host canaries unchanged",
          }
        : failed(
            `read-only bind write: ${facts.get("WRITE_RO")}, unbound write: ${facts.get("WRITE_UNBOUND")}, unbound read: ${facts.get("READ_UNBOUND")}, canaries ${after[0] === before[0] && after[1] === before[1] ? "unchanged" : "CHANGED"}`,
          );

      const ifaces = (facts.get("IFACES") ?? "").split(",").filter(Boolean);
      const tcp = facts.get("TCP") ?? "untested";
      const networkOk = tcp !== "connected" && connections === 0 && ifaces.every((name) => name === "lo");
      report.networkDenied = networkOk
        ? {
            ok: true,
            detail: `no route to the host loopback (interfaces: ${ifaces.join(",") || "none"}; tcp ${tcp}; listener saw 0 connections)`,
          }
        : failed(
            `interfaces: ${ifaces.join(",")}; tcp to host loopback ${tcp}; listener saw ${connections} connections`,
          );

      const capEff = facts.get("CapEff");
      const noNewPrivs = facts.get("NoNewPrivs");
      report.privilegesDropped =
        capEff !== undefined && /^0+$/.test(capEff) && noNewPrivs === "1"
          ? { ok: true, detail: "CapEff 0, NoNewPrivs 1" }
          : failed(`CapEff ${capEff ?? "?"}, NoNewPrivs ${noNewPrivs ?? "?"}`);
    } finally {
      await prepared.cleanup();
    }
  } catch (error) {
    problems.push(`probe failed: ${(error as Error).message}`);
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await rm(base, { recursive: true, force: true });
  }
  for (const [name, check] of [
    ["writeInside", report.writeInside],
    ["writeOutsideDenied", report.writeOutsideDenied],
    ["networkDenied", report.networkDenied],
    ["privilegesDropped", report.privilegesDropped],
  ] as const) {
    if (!check.ok && !context.unsafe) problems.push(`${name}: ${check.detail}`);
  }
  for (const [name, limit] of Object.entries(context.capabilities)) {
    if (!limit.enforced) problems.push(`limit ${name} not enforced: ${limit.detail}`);
  }
  report.durationMs = performance.now() - started;
  return report;
}
