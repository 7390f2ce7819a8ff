import type { CliIo } from "./cli-io.ts";

/** One CLI verb. `run` returns the exit code; throwing UsageError exits 2, anything else 1. */
export interface CliCommand {
  /** Words that select it, e.g. ["task", "import"]. */
  readonly path: readonly string[];
  readonly summary: string;
  readonly usage: string;
  run(args: string[], io: CliIo): Promise<number>;
}

export function findCommand(
  commands: readonly CliCommand[],
  argv: readonly string[],
): { command: CliCommand; rest: string[] } | null {
  let best: { command: CliCommand; rest: string[] } | null = null;
  for (const command of commands) {
    const n = command.path.length;
    if (argv.length >= n && command.path.every((w, i) => argv[i] === w)) {
      if (!best || n > best.command.path.length) best = { command, rest: argv.slice(n) };
    }
  }
  return best;
}

export function helpText(commands: readonly CliCommand[]): string {
  const lines = ["Usage: overseer <command> [options]", "", "Commands:"];
  const width = Math.max(...commands.map((c) => c.path.join(" ").length));
  for (const c of commands) lines.push(`  ${c.path.join(" ").padEnd(width)}  ${c.summary}`);
  lines.push(
    "",
    "Aliases: --status = status, --notify TEXT = notify TEXT.",
    "Exit codes: 0 ok, 1 failure, 2 usage or configuration error.",
  );
  return lines.join("\n");
}
