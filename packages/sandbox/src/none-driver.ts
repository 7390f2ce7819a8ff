import { stat } from "node:fs/promises";
import { PROCESS_DEFAULTS } from "@overseer/process";
import { stopProcessTree } from "./process-tree.ts";
import type {
  LimitEnforcement,
  PreparedCommand,
  ProbeReport,
  SandboxCapabilities,
  SandboxDriver,
  StopOptions,
} from "./sandbox-driver.ts";
import { SandboxSpecError } from "./sandbox-errors.ts";
import { runSandboxProbe } from "./sandbox-probe.ts";
import { parseSandboxSpec, type SandboxSpec } from "./sandbox-spec-schema.ts";

/**
 * UNSAFE: runs the agent directly as the worker's user (root on a typical worker host), with no
 * namespace, mount, network or resource isolation. Only the environment is still restricted to
 * `spec.env` (callers must spawn with exactly `PreparedCommand.env`, e.g. execa `extendEnv:
 * false`). A process that calls setsid() escapes the process-group kill. `createSandboxDriver`
 * refuses this driver unless the unsafe switch is set, and `probe()` reports `unsafe: true`.
 *
 * It ignores `spec.commands` and has no fixed `/overseer/control`: without a mount namespace a
 * per-run file at a fixed place would mean writing to the host's system directories, shared by
 * every run. A process here finds `overseer-agent` and its control dir only through the
 * environment it was given (PATH, OVERSEER_AGENT_BIN, OVERSEER_CONTROL_DIR).
 */

const NOT_ENFORCED: LimitEnforcement = {
  enforced: false,
  via: "none",
  detail: "driver none enforces nothing (unsafe)",
};

class UnsandboxedCommand implements PreparedCommand {
  readonly driver = "none" as const;
  constructor(
    readonly runId: string,
    readonly file: string,
    readonly args: readonly string[],
    readonly env: Readonly<Record<string, string>>,
    readonly cwd: string,
  ) {}

  async stop(pid: number | undefined, options: StopOptions = {}): Promise<void> {
    if (pid !== undefined)
      await stopProcessTree(pid, {
        graceMs: options.graceMs ?? PROCESS_DEFAULTS.killGraceMs,
        spareRoot: false,
      });
  }

  async cleanup(): Promise<void> {
    // Nothing was set up on the host.
  }

  async limitsReached(): Promise<string[]> {
    return []; // nothing counts them without a sandbox
  }
}

export class NoneDriver implements SandboxDriver {
  readonly name = "none" as const;
  /** Marks the driver as unsafe for every report that shows it. */
  readonly unsafe = true;

  async version(): Promise<string | null> {
    return `unsandboxed (node ${process.version})`;
  }

  async capabilities(): Promise<SandboxCapabilities> {
    return {
      pids: NOT_ENFORCED,
      memory: NOT_ENFORCED,
      cpuTime: NOT_ENFORCED,
      cpuRate: NOT_ENFORCED,
      killAll: {
        enforced: false,
        via: "none",
        detail: "only the process group is killed; setsid() children survive",
      },
      seccomp: NOT_ENFORCED,
    };
  }

  async prepare(argv: readonly string[], specInput: SandboxSpec): Promise<PreparedCommand> {
    const [file, ...args] = argv;
    if (file === undefined) throw new SandboxSpecError("argv: expected a non-empty array of strings");
    const spec = parseSandboxSpec(specInput);
    const info = await stat(spec.checkoutDir).catch(() => null);
    if (info === null || !info.isDirectory()) {
      throw new SandboxSpecError(`checkoutDir: ${spec.checkoutDir} is not an existing directory`);
    }
    return new UnsandboxedCommand(spec.runId, file, args, { ...spec.env }, spec.checkoutDir);
  }

  async dispose(): Promise<void> {
    // Nothing is kept on the host.
  }

  async probe(): Promise<ProbeReport> {
    const [version, capabilities] = await Promise.all([this.version(), this.capabilities()]);
    const report = await runSandboxProbe(this, { version, capabilities, unsafe: true });
    report.problems.unshift("driver none is UNSAFE: the agent runs with the worker's privileges and network");
    return report;
  }
}
