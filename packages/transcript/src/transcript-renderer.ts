import type { TranscriptEntry } from "./transcript-entry.ts";

export interface RenderOptions {
  /** ANSI colours (a terminal); plain text otherwise. */
  color: boolean;
  /** Lines of a tool output shown: its first and last halves, the middle elided. Default 20. */
  maxOutputLines?: number;
}

const ANSI = {
  dim: "\u001b[2m",
  bold: "\u001b[1m",
  red: "\u001b[31m",
  green: "\u001b[32m",
  yellow: "\u001b[33m",
  blue: "\u001b[34m",
  magenta: "\u001b[35m",
  cyan: "\u001b[36m",
  reset: "\u001b[0m",
} as const;

type Paint = (style: keyof typeof ANSI, text: string) => string;

const TIME_WIDTH = 8;
const INDENT = " ".repeat(TIME_WIDTH + 1);

function time(at: string | null): string {
  if (at === null) return " ".repeat(TIME_WIDTH);
  const match = /T(\d\d:\d\d:\d\d)/.exec(at);
  return (match?.[1] ?? at).padEnd(TIME_WIDTH).slice(0, TIME_WIDTH);
}

/** Continuation lines of a block, indented under the text column. */
function indent(text: string, extra = ""): string {
  return text
    .split("\n")
    .map((line, i) => (i === 0 ? line : `${INDENT}${extra}${line}`))
    .join("\n");
}

function elide(lines: string[], max: number): string[] {
  if (lines.length <= max) return lines;
  const head = Math.ceil(max / 2);
  const tail = max - head;
  return [...lines.slice(0, head), `[… ${lines.length - max} lines …]`, ...lines.slice(lines.length - tail)];
}

const count = (n: number) => n.toLocaleString("en-US");

function usageLine(entry: Extract<TranscriptEntry, { kind: "usage" }>): string {
  const cached = entry.cachedInputTokens ? ` (${count(entry.cachedInputTokens)} cached)` : "";
  const parts = [`${count(entry.inputTokens)} in${cached}`, `${count(entry.outputTokens)} out`];
  if (entry.model) parts.push(entry.model);
  if (entry.costUsd !== null) parts.push(`$${entry.costUsd.toFixed(4)}`);
  return `tokens ${parts.join(" · ")}`;
}

function argsText(args: unknown): string {
  if (args === null || args === undefined) return "";
  const json = typeof args === "string" ? args : JSON.stringify(args);
  return json.length > 200 ? `${json.slice(0, 199)}…` : json;
}

function body(entry: TranscriptEntry, paint: Paint, maxOutputLines: number): string {
  switch (entry.kind) {
    case "message": {
      const style = entry.role === "assistant" ? "cyan" : entry.role === "user" ? "bold" : "dim";
      return paint(style, `${entry.role}: ${indent(entry.text.trimEnd(), "  ")}`);
    }
    case "reasoning":
      return paint("magenta", `thinking: ${indent(entry.text.trimEnd(), "  ")}`);
    case "tool_call":
      return entry.command !== null
        ? paint("yellow", `$ ${indent(entry.command, "  ")}`)
        : paint("yellow", `→ ${entry.tool} ${argsText(entry.args)}`.trimEnd());
    case "tool_result": {
      const status =
        entry.exitCode === null
          ? paint("dim", "↳ done")
          : paint(entry.exitCode === 0 ? "green" : "red", `↳ exit ${entry.exitCode}`);
      const lines = entry.output.replace(/\n+$/, "").split("\n");
      const shown = entry.output.trim() === "" ? [] : elide(lines, maxOutputLines);
      const cut = entry.truncated ? paint("dim", " (output truncated)") : "";
      return [status + cut, ...shown.map((line) => `${INDENT}  ${paint("dim", line)}`)].join("\n");
    }
    case "file_edit":
      return paint("blue", `✎ ${entry.change ?? "edit"} ${entry.path}`);
    case "usage":
      return paint("dim", usageLine(entry));
    case "error":
      return paint("red", `error: ${indent(entry.message, "  ")}`);
    case "raw":
      return paint("dim", indent(entry.text));
  }
}

/**
 * A transcript as terminal text, one entry a block: time, then what happened (`assistant:`,
 * `$ command`, `↳ exit N` with the output, `✎ add path`, tokens, errors). Entries of several
 * runs are separated by a line naming the run.
 */
export function renderTranscript(entries: readonly TranscriptEntry[], options: RenderOptions): string {
  const paint: Paint = options.color
    ? (style, text) => `${ANSI[style]}${text}${ANSI.reset}`
    : (_, text) => text;
  const maxOutputLines = Math.max(2, options.maxOutputLines ?? 20);
  const out: string[] = [];
  let run: string | undefined;
  for (const entry of entries) {
    if (entry.runId !== undefined && entry.runId !== run) {
      run = entry.runId;
      out.push(paint("bold", `── run ${run} ──`));
    }
    const stamp = entry.kind === "tool_result" ? " ".repeat(TIME_WIDTH) : time(entry.at);
    out.push(`${paint("dim", stamp)} ${body(entry, paint, maxOutputLines)}`);
  }
  return out.length === 0 ? "" : `${out.join("\n")}\n`;
}
