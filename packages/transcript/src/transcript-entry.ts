import { z } from "zod";

/**
 * One entry of a run's transcript: what the agent said, thought, ran, got back, edited and
 * spent, read from its CLI's machine-readable output (docs/transcripts.md). `seq` orders the
 * entries of one run (0, 1, 2… in output order); `at` is the time the CLI stamped on the event,
 * else the time the worker read it, else null; `runId` is set where entries of several runs mix
 * (the task transcript, the live stream).
 */
const base = {
  seq: z.number().int().nonnegative(),
  at: z.string().nullable(),
  runId: z.string().optional(),
};

export const TRANSCRIPT_ENTRY_KINDS = [
  "message",
  "reasoning",
  "tool_call",
  "tool_result",
  "file_edit",
  "usage",
  "error",
  "raw",
] as const;

export const MessageEntrySchema = z.object({
  ...base,
  kind: z.literal("message"),
  role: z.enum(["assistant", "user", "system"]),
  text: z.string(),
});

/** A reasoning summary, where the CLI emits one. */
export const ReasoningEntrySchema = z.object({ ...base, kind: z.literal("reasoning"), text: z.string() });

/** A tool the model called: `command` is the shell command when the tool runs one. */
export const ToolCallEntrySchema = z.object({
  ...base,
  kind: z.literal("tool_call"),
  callId: z.string().nullable(),
  tool: z.string(),
  command: z.string().nullable(),
  args: z.unknown(),
});

/** What a tool call returned; `output` is bounded (`truncated` says when it was cut). */
export const ToolResultEntrySchema = z.object({
  ...base,
  kind: z.literal("tool_result"),
  callId: z.string().nullable(),
  exitCode: z.number().int().nullable(),
  output: z.string(),
  truncated: z.boolean(),
});

/** A file the agent wrote, changed or removed (path relative to the checkout when known). */
export const FileEditEntrySchema = z.object({
  ...base,
  kind: z.literal("file_edit"),
  path: z.string(),
  change: z.enum(["add", "update", "delete"]).nullable(),
});

/** Tokens (and cost, when the CLI prices them) of one model call or turn. */
export const UsageEntrySchema = z.object({
  ...base,
  kind: z.literal("usage"),
  inputTokens: z.number().nonnegative(),
  outputTokens: z.number().nonnegative(),
  cachedInputTokens: z.number().nonnegative().nullable(),
  model: z.string().nullable(),
  costUsd: z.number().nonnegative().nullable(),
});

export const ErrorEntrySchema = z.object({ ...base, kind: z.literal("error"), message: z.string() });

/** A line no parser understood, kept as it was (never dropped). */
export const RawEntrySchema = z.object({ ...base, kind: z.literal("raw"), text: z.string() });

export const TranscriptEntrySchema = z.discriminatedUnion("kind", [
  MessageEntrySchema,
  ReasoningEntrySchema,
  ToolCallEntrySchema,
  ToolResultEntrySchema,
  FileEditEntrySchema,
  UsageEntrySchema,
  ErrorEntrySchema,
  RawEntrySchema,
]);

export type TranscriptEntry = z.infer<typeof TranscriptEntrySchema>;
export type TranscriptEntryKind = TranscriptEntry["kind"];
/** An entry before the parser numbers and stamps it. */
export type TranscriptEntryBody = TranscriptEntry extends infer E
  ? E extends TranscriptEntry
    ? Omit<E, "seq" | "at" | "runId">
    : never
  : never;

/** A stored transcript: its entries in order, and whether some were left out to respect the size bound. */
export const TranscriptSchema = z.object({
  entries: z.array(TranscriptEntrySchema),
  truncated: z.boolean(),
});
export type Transcript = z.infer<typeof TranscriptSchema>;
