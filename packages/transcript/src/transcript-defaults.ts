/** The bounds a transcript parser applies unless told otherwise (`resolveTranscriptParserOptions`). */
export const TRANSCRIPT_PARSER_DEFAULTS = Object.freeze({
  /** Characters kept of one tool output: its head and its tail, the middle cut (`truncated`). */
  maxToolOutputChars: 8 * 1024,
  /** Characters kept of one message, reasoning summary, error or raw line. */
  maxTextChars: 32 * 1024,
  /** Characters of a tool call's arguments kept (as JSON) when they are large. */
  maxArgsChars: 8 * 1024,
});

export interface TranscriptParserOptions {
  maxToolOutputChars: number;
  maxTextChars: number;
  maxArgsChars: number;
  /**
   * The time stamped on an entry whose event carries none (the worker passes its clock, so live
   * entries have a time); without it such entries have `at: null`.
   */
  now: (() => string) | null;
  /**
   * The checkout's path as the agent sees it: edited paths under it are made relative to it (as
   * in the commit diff). Null: paths stay as the CLI reported them.
   */
  root: string | null;
}

/** The parser options: the defaults, overridden by what is given (positive numbers only). */
export function resolveTranscriptParserOptions(
  given: Partial<TranscriptParserOptions> = {},
): TranscriptParserOptions {
  const positive = (value: number | undefined, fallback: number) =>
    typeof value === "number" && Number.isFinite(value) && value > 0 ? Math.floor(value) : fallback;
  return {
    maxToolOutputChars: positive(given.maxToolOutputChars, TRANSCRIPT_PARSER_DEFAULTS.maxToolOutputChars),
    maxTextChars: positive(given.maxTextChars, TRANSCRIPT_PARSER_DEFAULTS.maxTextChars),
    maxArgsChars: positive(given.maxArgsChars, TRANSCRIPT_PARSER_DEFAULTS.maxArgsChars),
    now: given.now ?? null,
    root: given.root ? given.root.replace(/\/+$/, "") : null,
  };
}
