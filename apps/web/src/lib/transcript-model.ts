import type { TranscriptEntry } from "../api/types.ts";

/**
 * The pure side of the transcript views: pairing each tool call with its result, the token
 * and cost meter, and search. No DOM, no fetch.
 */

export type ToolResult = Extract<TranscriptEntry, { kind: "tool_result" }>;
export type ToolCall = Extract<TranscriptEntry, { kind: "tool_call" }>;

/** A row of the transcript: a tool call carries its result; a result with no call stands alone. */
export type TranscriptRow =
  | { key: string; entry: ToolCall; result: ToolResult | null }
  | { key: string; entry: Exclude<TranscriptEntry, ToolCall>; result?: undefined };

/** Pairs each tool result with its call (same run, same `callId`; else the call just before it). */
export function transcriptRows(entries: readonly TranscriptEntry[]): TranscriptRow[] {
  const rows: TranscriptRow[] = [];
  const open = new Map<string, Extract<TranscriptRow, { entry: ToolCall }>>();
  let lastCall: Extract<TranscriptRow, { entry: ToolCall }> | null = null;
  for (const entry of entries) {
    const key = `${entry.runId ?? ""}:${entry.seq}`;
    if (entry.kind === "tool_call") {
      const row = { key, entry, result: null };
      rows.push(row);
      lastCall = row;
      if (entry.callId !== null) open.set(`${entry.runId ?? ""}:${entry.callId}`, row);
      continue;
    }
    if (entry.kind === "tool_result") {
      const call =
        entry.callId !== null ? open.get(`${entry.runId ?? ""}:${entry.callId}`) : (lastCall ?? undefined);
      if (call && call.result === null && (call.entry.runId ?? "") === (entry.runId ?? "")) {
        call.result = entry;
        continue;
      }
    }
    rows.push({ key, entry: entry as Exclude<TranscriptEntry, ToolCall> });
  }
  return rows;
}

export interface UsageTotals {
  calls: number;
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
  /** Null when no usage entry carried a cost (the CLI does not price its usage). */
  costUsd: number | null;
  models: string[];
}

/**
 * The token and cost meter: every usage entry summed (docs/transcripts.md: they add up to the
 * run's total). A CLI prices per call (opencode), once at the end (Claude's result) or never
 * (Codex): the cost is the sum of the prices given, null when none was.
 */
export function usageTotals(entries: readonly TranscriptEntry[]): UsageTotals {
  const t: UsageTotals = {
    calls: 0,
    inputTokens: 0,
    cachedInputTokens: 0,
    outputTokens: 0,
    costUsd: null,
    models: [],
  };
  for (const e of entries) {
    if (e.kind !== "usage") continue;
    t.calls += 1;
    t.inputTokens += e.inputTokens;
    t.cachedInputTokens += e.cachedInputTokens ?? 0;
    t.outputTokens += e.outputTokens;
    if (e.costUsd !== null) t.costUsd = (t.costUsd ?? 0) + e.costUsd;
    if (e.model && !t.models.includes(e.model)) t.models.push(e.model);
  }
  return t;
}

/** The searchable text of a row: what the operator sees of it. */
export function rowText(row: TranscriptRow): string {
  const e = row.entry;
  const own = (() => {
    switch (e.kind) {
      case "message":
      case "reasoning":
      case "raw":
        return e.text;
      case "tool_call":
        return `${e.tool} ${e.command ?? JSON.stringify(e.args ?? "")}`;
      case "tool_result":
        return e.output;
      case "file_edit":
        return e.path;
      case "error":
        return e.message;
      case "usage":
        return e.model ?? "";
    }
  })();
  return row.result ? `${own}\n${row.result.output}` : own;
}

/** The rows whose text contains `needle` (case-insensitive); every row for an empty needle. */
export function searchRows(rows: readonly TranscriptRow[], needle: string): TranscriptRow[] {
  const n = needle.trim().toLowerCase();
  if (!n) return rows as TranscriptRow[];
  return rows.filter((r) => rowText(r).toLowerCase().includes(n));
}
