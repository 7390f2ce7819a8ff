/** `text` cut to `max` characters, with a mark saying how much was cut. */
export function boundText(text: string, max: number): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}… [${text.length - max} more characters]`;
}

/**
 * A tool output bounded to about `max` characters: its head (a quarter) and tail (the rest, where
 * errors usually are), with a line saying how much of the middle was cut.
 */
export function boundOutput(text: string, max: number): { output: string; truncated: boolean } {
  if (text.length <= max) return { output: text, truncated: false };
  const head = Math.floor(max / 4);
  const tail = max - head;
  const cut = text.length - head - tail;
  return {
    output: `${text.slice(0, head)}\n[… ${cut} characters cut …]\n${text.slice(text.length - tail)}`,
    truncated: true,
  };
}

/** Tool arguments kept as they are, or as a bounded JSON string when they are too large. */
export function boundArgs(args: unknown, max: number): unknown {
  if (args === undefined) return null;
  const json = JSON.stringify(args);
  if (json === undefined || json.length <= max) return args;
  return boundText(json, max);
}
