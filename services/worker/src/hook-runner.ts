import type { WrapCommand, WrappedCommand } from "@overseer/harness";
import { lowerSessionPriority } from "@overseer/process";
import { execa } from "execa";

export interface HookResult {
  ok: boolean;
  /** Redacted, capped output of the hook (shown when it fails the run). */
  output: string;
  exitCode: number | null;
  timedOut: boolean;
}

export interface RunHookOptions {
  argv: readonly string[];
  cwd: string;
  env: Record<string, string>;
  timeoutMs: number;
  killGraceMs: number;
  redact: (text: string) => string;
  wrap?: WrapCommand | undefined;
  /** Bytes of output kept (the last ones). */
  maxOutputBytes: number;
  signal?: AbortSignal;
}

/**
 * Runs a workspace hook (`hooks.setup` / `hooks.after_run`) in the run's sandbox, in its own
 * process group, killed as a group on timeout. A failing hook fails the run with its output.
 */
export async function runHook(options: RunHookOptions): Promise<HookResult> {
  const prepared: WrappedCommand = options.wrap
    ? await options.wrap(options.argv, options.env)
    : { file: options.argv[0] as string, args: options.argv.slice(1), env: options.env };
  try {
    const child = execa(prepared.file, prepared.args, {
      cwd: options.cwd,
      env: prepared.env,
      extendEnv: false,
      detached: true,
      stdin: "ignore",
      all: true,
      reject: false,
      timeout: options.timeoutMs,
      killSignal: "SIGKILL",
      cancelSignal: options.signal,
      maxBuffer: options.maxOutputBytes * 4,
    });
    // Run work: below the services when runs saturate the CPU (OVERSEER_RUN_NICE).
    if (child.pid !== undefined) lowerSessionPriority(child.pid);
    // Kill the whole group, not only the direct child, when the hook times out.
    const killGroup = () => {
      if (child.pid !== undefined) {
        try {
          process.kill(-child.pid, "SIGKILL");
        } catch {
          // already gone
        }
      }
    };
    const timer = setTimeout(killGroup, options.timeoutMs + options.killGraceMs);
    timer.unref();
    const result = await child;
    clearTimeout(timer);
    killGroup();
    const all = typeof result.all === "string" ? result.all : "";
    const output = options.redact(
      all.length > options.maxOutputBytes ? all.slice(-options.maxOutputBytes) : all,
    );
    return {
      ok: result.exitCode === 0 && !result.timedOut,
      output,
      exitCode: result.exitCode ?? null,
      timedOut: result.timedOut,
    };
  } finally {
    await prepared.cleanup?.();
  }
}
