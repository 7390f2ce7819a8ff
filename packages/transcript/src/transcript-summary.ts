import type { TranscriptEntry } from "./transcript-entry.ts";

/**
 * What a run did, in the few lines an incident or decision card shows: the model's last
 * message, the command that failed (else the last one) with its exit code and the last lines of
 * its output, and the CLI's last error. Read from the transcript, so every preset (Copilot's
 * session file included) reads the same and no JSON noise reaches the card.
 */

/** Characters kept of a message, a command or an error. */
const MAX_TEXT = 600;
/** Lines of a command's output kept (its tail), and of raw lines when nothing else was read. */
const TAIL_LINES = 8;
/** Characters kept of one output line. */
const MAX_LINE = 300;

type Call = Extract<TranscriptEntry, { kind: "tool_call" }>;
type Result = Extract<TranscriptEntry, { kind: "tool_result" }>;

const bounded = (text: string, max = MAX_TEXT): string => {
  const trimmed = text.trim();
  return trimmed.length > max ? `${trimmed.slice(0, max - 1)}…` : trimmed;
};

function tail(text: string, lines = TAIL_LINES): string[] {
  return text
    .replace(/\n+$/, "")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .slice(-lines)
    .map((line) => bounded(line, MAX_LINE));
}

/** Each tool call with its result (same `callId`; else the result right after it). */
function callsWithResults(entries: readonly TranscriptEntry[]): { call: Call; result: Result | null }[] {
  const pairs: { call: Call; result: Result | null }[] = [];
  const open = new Map<string, { call: Call; result: Result | null }>();
  let previous: { call: Call; result: Result | null } | null = null;
  for (const entry of entries) {
    if (entry.kind === "tool_call") {
      const pair = { call: entry, result: null };
      pairs.push(pair);
      if (entry.callId !== null) open.set(entry.callId, pair);
      previous = pair;
    } else if (entry.kind === "tool_result") {
      const pair = entry.callId !== null ? open.get(entry.callId) : previous;
      if (pair && pair.result === null) pair.result = entry;
    }
    if (entry.kind !== "tool_call" && entry.kind !== "usage") previous = null;
  }
  return pairs;
}

const failed = (result: Result | null) =>
  result !== null && result.exitCode !== null && result.exitCode !== 0;

function commandText(call: Call): string {
  if (call.command !== null) return bounded(call.command);
  const args = call.args === undefined || call.args === null ? "" : ` ${JSON.stringify(call.args)}`;
  return bounded(`${call.tool}${args}`);
}

function describeCommand(pair: { call: Call; result: Result | null }): string[] {
  const exit = pair.result?.exitCode ?? null;
  const status = exit === null ? "" : ` (exit ${exit})`;
  const what = failed(pair.result) ? "The failing command" : "Its last command";
  const lines = [`${what}${status}: ${commandText(pair.call)}`];
  const output = pair.result ? tail(pair.result.output) : [];
  if (output.length > 0) lines.push("Its output, last lines:", ...output.map((line) => `  ${line}`));
  return lines;
}

/**
 * The card text of a run's transcript: "The model's last message: …", the failing (else last)
 * command with its exit code and output tail, "The CLI's last error: …"; when the transcript
 * holds none of these, the last raw lines the run printed (unknown JSON events left out).
 */
export function describeTranscript(entries: readonly TranscriptEntry[]): string {
  const parts: string[] = [];
  const message = entries.findLast(
    (e) => e.kind === "message" && e.role === "assistant" && e.text.trim() !== "",
  );
  if (message?.kind === "message") parts.push(`The model's last message: ${bounded(message.text)}`);
  const pairs = callsWithResults(entries);
  const shown = pairs.findLast((pair) => failed(pair.result)) ?? pairs.at(-1);
  if (shown) parts.push(...describeCommand(shown));
  const error = entries.findLast((e) => e.kind === "error");
  if (error?.kind === "error") parts.push(`The CLI's last error: ${bounded(error.message)}`);
  if (parts.length > 0) return parts.join("\n");
  // JSON events no parser understood are the CLI's noise, not its words.
  const words = entries.flatMap((e) =>
    e.kind === "raw" && !e.text.trimStart().startsWith("{") ? [e.text] : [],
  );
  const raw = tail(words.join("\n"), TAIL_LINES);
  return raw.length > 0 ? `Last lines of the run:\n${raw.join("\n")}` : "The run printed nothing readable.";
}
