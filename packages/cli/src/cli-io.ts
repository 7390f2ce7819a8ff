import { terminalSafe } from "./terminal-text.ts";

/** Output of a command: lines for people, JSON for scripts. Injected so tests capture it. */
export interface CliIo {
  out(line: string): void;
  err(line: string): void;
  env: NodeJS.ProcessEnv;
  cwd: string;
}

export const processIo: CliIo = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  env: process.env,
  cwd: process.cwd(),
};

/** `io` whose every printed line goes through terminalSafe (runCli gives every verb this one). */
export function terminalSafeIo(io: CliIo): CliIo {
  return {
    out: (line) => io.out(terminalSafe(line)),
    err: (line) => io.err(terminalSafe(line)),
    env: io.env,
    cwd: io.cwd,
  };
}

/** Fixed-width table for terminal output. */
export function formatTable(headers: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join("  ")
      .trimEnd();
  return [line(headers), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)];
}
