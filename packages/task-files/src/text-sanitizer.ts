/**
 * One set of rules for text that crosses a boundary into Overseer (HTTP bodies, task files,
 * an agent's control files, run output): Postgres `text` and `jsonb` cannot hold NUL
 * characters, and a lone UTF-16 surrogate cannot be encoded as UTF-8 at all, so either would
 * make a later write fail far from where the text came in. Each boundary either refuses such
 * text (`findUnsafeText`, `findUnsafeValue`: what the caller can fix, say so) or normalises it
 * (`sanitizeText`, `sanitizeValue`, `decodeUtf8`: what nobody can fix, such as an agent's
 * output), never passes it on.
 */

/** What replaces a NUL, a lone surrogate or an invalid UTF-8 sequence when text is normalised. */
export const REPLACEMENT_CHARACTER = "\uFFFD";

// biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is what it finds
const NUL = /\u0000/g;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const LONE_SURROGATES = new RegExp(LONE_SURROGATE.source, "g");

/** Why `text` cannot be stored as is ("contains a NUL character at index 3"), or undefined. */
export function findUnsafeText(text: string): string | undefined {
  const nul = text.indexOf("\u0000");
  if (nul >= 0) return `contains a NUL character (\\u0000) at index ${nul}`;
  const surrogate = LONE_SURROGATE.exec(text);
  if (surrogate)
    return `contains a lone UTF-16 surrogate (\\u${surrogate[0].charCodeAt(0).toString(16)}) at index ${surrogate.index}`;
  return undefined;
}

/** `text` with every NUL and lone surrogate replaced by U+FFFD (the same string when it has none). */
export function sanitizeText(text: string): string {
  if (findUnsafeText(text) === undefined) return text;
  return text.replace(NUL, REPLACEMENT_CHARACTER).replace(LONE_SURROGATES, REPLACEMENT_CHARACTER);
}

/**
 * Decodes UTF-8 bytes for storage: invalid sequences become U+FFFD (as `TextDecoder` does),
 * and so do NUL characters.
 */
export function decodeUtf8(bytes: Uint8Array): string {
  return sanitizeText(new TextDecoder("utf-8", { fatal: false }).decode(bytes));
}

/** Decodes UTF-8 bytes, or returns undefined when they are not valid UTF-8 (to refuse them). */
export function decodeStrictUtf8(bytes: Uint8Array): string | undefined {
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

/** Where in a JSON-like value the first unsafe string (or object key) is, and why. */
export interface UnsafeTextProblem {
  /** `title`, `tasks[3].scope[0]`, or `(value)` for the value itself. */
  readonly path: string;
  readonly problem: string;
}

/**
 * The first string or key in `value` (plain JSON data) that `findUnsafeText` refuses.
 * Iterative, so a deeply nested value cannot overflow the stack.
 */
export function findUnsafeValue(value: unknown): UnsafeTextProblem | undefined {
  const stack: { value: unknown; path: string }[] = [{ value, path: "" }];
  while (stack.length > 0) {
    const { value: current, path } = stack.pop() as { value: unknown; path: string };
    if (typeof current === "string") {
      const problem = findUnsafeText(current);
      if (problem) return { path: path || "(value)", problem };
    } else if (Array.isArray(current)) {
      for (let i = current.length - 1; i >= 0; i--) stack.push({ value: current[i], path: `${path}[${i}]` });
    } else if (current !== null && typeof current === "object") {
      const entries = Object.entries(current);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, child] = entries[i] as [string, unknown];
        const keyProblem = findUnsafeText(key);
        const childPath = path ? `${path}.${key}` : key;
        if (keyProblem)
          return { path: `${path || "(value)"} key ${JSON.stringify(key)}`, problem: keyProblem };
        stack.push({ value: child, path: childPath });
      }
    }
  }
  return undefined;
}

/**
 * A copy of `value` (plain JSON data) whose strings and keys went through `sanitizeText`.
 * Values without unsafe text are returned as they are.
 */
export function sanitizeValue<T>(value: T): T {
  if (findUnsafeValue(value) === undefined) return value;
  return sanitizeUnchecked(value) as T;
}

function sanitizeUnchecked(value: unknown): unknown {
  if (typeof value === "string") return sanitizeText(value);
  if (Array.isArray(value)) return value.map(sanitizeUnchecked);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [sanitizeText(k), sanitizeUnchecked(v)] as const),
    );
  }
  return value;
}

/**
 * Deepest nesting of arrays and objects in JSON (or YAML flow) text, found without parsing, so
 * a hostile document can be refused before a recursive parser or validator sees it. Brackets
 * inside quoted strings do not count. YAML block nesting is not seen here; parsers of it are
 * guarded separately.
 */
export function nestingDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let quote: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quote !== undefined) {
      if (ch === "\\" && quote === '"') i++;
      else if (ch === quote) quote = undefined;
      continue;
    }
    if (ch === '"') quote = ch;
    else if (ch === "[" || ch === "{") {
      depth++;
      if (depth > deepest) deepest = depth;
    } else if (ch === "]" || ch === "}") depth = Math.max(0, depth - 1);
  }
  return deepest;
}
