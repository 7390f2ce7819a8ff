import { terminalSafe, terminalStyledSafe } from "./terminal-text.ts";

/** Output of a command: lines for people, JSON for scripts. Injected so tests capture it. */
export interface CliIo {
  out(line: string): void;
  err(line: string): void;
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** Whether `out` reaches a terminal that shows colours (`wantsColor`); absent: plain text. */
  color?: boolean;
  /** Prints a line carrying the CLI's own colour codes (`color` true); absent: `out`. */
  outStyled?(line: string): void;
}

/**
 * Colours on stdout: FORCE_COLOR decides when set ("0" off, anything else on); else NO_COLOR
 * (any value) or TERM=dumb turns them off; otherwise only a TTY gets them (piped output stays plain).
 */
export function wantsColor(isTty: boolean, env: NodeJS.ProcessEnv): boolean {
  if (env.FORCE_COLOR !== undefined) return env.FORCE_COLOR !== "0";
  if (env.NO_COLOR !== undefined || env.TERM === "dumb") return false;
  return isTty;
}

export const processIo: CliIo = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  env: process.env,
  cwd: process.cwd(),
  color: wantsColor(process.stdout.isTTY === true, process.env),
  outStyled: (line) => process.stdout.write(`${line}\n`),
};

/**
 * `io` whose every printed line goes through terminalSafe (runCli gives every verb this one);
 * a styled line keeps only the colour codes the CLI itself writes (terminalStyledSafe).
 */
export function terminalSafeIo(io: CliIo): CliIo {
  const styled = io.outStyled?.bind(io);
  return {
    out: (line) => io.out(terminalSafe(line)),
    err: (line) => io.err(terminalSafe(line)),
    env: io.env,
    cwd: io.cwd,
    color: io.color === true && styled !== undefined,
    outStyled: (line) => (styled ? styled(terminalStyledSafe(line)) : io.out(terminalSafe(line))),
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

/** `?a=1&b=2` of the filters given (undefined or empty ones left out); "" when none is. */
export function queryString(filters: Record<string, string | number | undefined>): string {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(filters))
    if (value !== undefined && value !== "") query.set(key, String(value));
  return query.size > 0 ? `?${query}` : "";
}

/** A list command's output: the items as JSON (`json`), `none` when there is none, else a table. */
export function printList<T>(
  io: CliIo,
  items: readonly T[],
  {
    json,
    none,
    headers,
    row,
  }: { json: boolean | undefined; none: string; headers: readonly string[]; row: (item: T) => string[] },
): void {
  if (json) io.out(JSON.stringify(items, null, 2));
  else if (items.length === 0) io.out(none);
  else for (const line of formatTable(headers, items.map(row))) io.out(line);
}
