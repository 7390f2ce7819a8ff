import type { TranscriptEntryBody } from "./transcript-entry.ts";

/** One JSON event of a CLI's stream. */
export type AgentEvent = Record<string, unknown>;

/** An entry a reader found, with the time its event carries (ISO), if any. */
export interface ReadEntry {
  body: TranscriptEntryBody;
  at?: string | null;
}

/**
 * How one CLI's stream is read: `event` turns one JSON event into entries (an empty list: the
 * event is known and says nothing worth showing; `null`: not understood, kept as a raw line);
 * `text` reads a line that is not JSON (absent: kept raw); `finish` emits what is still held
 * back (a streamed message without its end) once the output has ended.
 */
export interface EventReader {
  event(event: AgentEvent, line: string): ReadEntry[] | null;
  text?(line: string): ReadEntry[] | null;
  finish?(): ReadEntry[];
}

export const str = (value: unknown): string | null => (typeof value === "string" ? value : null);
export const nonEmpty = (value: unknown): string | null =>
  typeof value === "string" && value.trim() !== "" ? value : null;
export const num = (value: unknown): number | null =>
  typeof value === "number" && Number.isFinite(value) ? value : null;
export const obj = (value: unknown): AgentEvent | null =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? (value as AgentEvent) : null;
export const arr = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

/** An ISO time from an ISO string or epoch milliseconds, else null. */
export function isoTime(value: unknown): string | null {
  if (typeof value === "number" && Number.isFinite(value)) return new Date(value).toISOString();
  if (typeof value === "string" && !Number.isNaN(Date.parse(value))) return new Date(value).toISOString();
  return null;
}

/** Text of a tool output given as a string, a list of text blocks, or something else (JSON). */
export function outputText(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === null || value === undefined) return "";
  if (Array.isArray(value)) {
    const texts = value.map((part) => str(obj(part)?.text)).filter((t): t is string => t !== null);
    if (texts.length === value.length) return texts.join("\n");
  }
  return JSON.stringify(value);
}
