import { boundArgs, boundOutput, boundText } from "./bounds.ts";
import type { AgentEvent, EventReader, ReadEntry } from "./event-reader.ts";
import { claudeReader } from "./readers/claude-reader.ts";
import { codexReader } from "./readers/codex-reader.ts";
import { copilotReader } from "./readers/copilot-reader.ts";
import { geminiReader } from "./readers/gemini-reader.ts";
import { opencodeReader } from "./readers/opencode-reader.ts";
import { resolveTranscriptParserOptions, type TranscriptParserOptions } from "./transcript-defaults.ts";
import type { TranscriptEntry, TranscriptEntryBody } from "./transcript-entry.ts";

/**
 * A stateful reader of one run's output, line by line: `push` returns the entries a line
 * completes (numbered from 0 in order), `finish` those still held back once the output ended.
 */
export interface TranscriptParser {
  push(line: string): TranscriptEntry[];
  finish(): TranscriptEntry[];
}

/** The agent kinds with a parser of their own; any other agent's lines are kept as raw entries. */
export const TRANSCRIPT_AGENTS = ["codex", "claude", "gemini", "opencode", "copilot"] as const;
export type TranscriptAgent = (typeof TRANSCRIPT_AGENTS)[number];

const READERS: Readonly<Record<TranscriptAgent, () => EventReader>> = {
  codex: codexReader,
  claude: claudeReader,
  gemini: geminiReader,
  opencode: opencodeReader,
  copilot: copilotReader,
};

/** Whether `agent` names a CLI whose output has a parser (else every line is a raw entry). */
export function hasTranscriptParser(agent: string | null | undefined): agent is TranscriptAgent {
  return typeof agent === "string" && Object.hasOwn(READERS, agent);
}

function parseJsonEvent(line: string): AgentEvent | null {
  if (!line.startsWith("{")) return null;
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as AgentEvent)
      : null;
  } catch {
    return null;
  }
}

/** `file` relative to `root` when it lies under it (and without a leading `./`). */
function relative(file: string, root: string | null): string {
  if (root !== null && file.startsWith(`${root}/`)) return file.slice(root.length + 1);
  return file.replace(/^\.\//, "");
}

/** The body with its texts and outputs bounded, its edited path relative to the checkout. */
function bounded(body: TranscriptEntryBody, options: TranscriptParserOptions): TranscriptEntryBody {
  const text = (value: string) => boundText(value, options.maxTextChars);
  switch (body.kind) {
    case "message":
    case "reasoning":
    case "raw":
      return { ...body, text: text(body.text) };
    case "error":
      return { ...body, message: text(body.message) };
    case "tool_call":
      return {
        ...body,
        command: body.command === null ? null : text(body.command),
        args: boundArgs(body.args, options.maxArgsChars),
      };
    case "file_edit":
      return { ...body, path: relative(body.path, options.root) };
    case "tool_result": {
      const cut = boundOutput(body.output, options.maxToolOutputChars);
      return { ...body, output: cut.output, truncated: body.truncated || cut.truncated };
    }
    default:
      return body;
  }
}

/**
 * The transcript parser for `agent`'s output (`codex --json`, claude and gemini `stream-json`,
 * opencode `--format json`, copilot's session events). A line its reader does not understand,
 * and every line of an agent without a reader, becomes a `raw` entry: nothing is dropped but
 * blank lines.
 */
export function createTranscriptParser(
  agent: string | null | undefined,
  given: Partial<TranscriptParserOptions> = {},
): TranscriptParser {
  const options = resolveTranscriptParserOptions(given);
  const reader: EventReader | null = hasTranscriptParser(agent) ? READERS[agent]() : null;
  let seq = 0;
  const number = (found: readonly ReadEntry[]): TranscriptEntry[] =>
    found.map(({ body, at }) => {
      const stamped = at ?? options.now?.() ?? null;
      return { seq: seq++, at: stamped, ...bounded(body, options) } as TranscriptEntry;
    });
  const raw = (line: string): ReadEntry[] => [{ body: { kind: "raw", text: line } }];
  return {
    push(line) {
      const trimmed = line.replace(/\r?\n$/, "").trimEnd();
      if (trimmed.trim() === "") return [];
      if (reader === null) return number(raw(trimmed));
      const event = parseJsonEvent(trimmed.trimStart());
      const found = event === null ? (reader.text?.(trimmed) ?? null) : reader.event(event, trimmed);
      return number(found ?? raw(trimmed));
    },
    finish() {
      return number(reader?.finish?.() ?? []);
    },
  };
}

/**
 * A parser fed with chunks of output as they arrive (not cut at lines): complete lines are
 * parsed at once, a partial line waits for its end or for `end()`.
 */
export interface TranscriptFeed {
  write(chunk: string): TranscriptEntry[];
  end(): TranscriptEntry[];
}

export function createTranscriptFeed(
  agent: string | null | undefined,
  options: Partial<TranscriptParserOptions> = {},
): TranscriptFeed {
  const parser = createTranscriptParser(agent, options);
  let pending = "";
  return {
    write(chunk) {
      pending += chunk;
      const lines = pending.split("\n");
      pending = lines.pop() ?? "";
      return lines.flatMap((line) => parser.push(line));
    },
    end() {
      const rest = pending;
      pending = "";
      return [...(rest === "" ? [] : parser.push(rest)), ...parser.finish()];
    },
  };
}

/** Every entry of a whole output at once. */
export function parseTranscript(
  output: string,
  agent: string | null | undefined,
  options: Partial<TranscriptParserOptions> = {},
): TranscriptEntry[] {
  const feed = createTranscriptFeed(agent, options);
  return [...feed.write(output), ...feed.end()];
}
