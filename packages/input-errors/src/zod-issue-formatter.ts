import type { z } from "zod";
import { type ConfigIssue, formatIssueLine } from "./config-issue.ts";
import { createRedactor } from "./redactor.ts";

/**
 * The one place that turns zod issues into `path: expected X, received Y (hint)` problems:
 * config files and settings, gateway request validation, queue payloads, control files and
 * run jobs all report through it, so every boundary reads the same way.
 *
 * Every schema of the settings, the runner config and task files is parsed with
 * `expectedErrorMap`, so an issue's `message` is always the *expected* half: either a phrase a
 * schema set itself (`{ error: "an integer from 1 to 256" }`, which wins by zod's precedence)
 * or one derived here from the issue details.
 * Issues parsed without it (zod's own "Invalid input: expected string, received number") get
 * the same derived phrase, so callers outside this package need no special parse options.
 * The *received* half is computed from the raw input at the issue's path, never from zod's
 * text, so the same rules (truncation, secret hiding, token redaction) apply everywhere.
 */

/** Longest excerpt of a received value shown in an error. */
const MAX_RECEIVED_CHARS = 80;

const redactTokens = createRedactor([]);

/** The expected phrase for unknown keys; the key list after it feeds the did-you-mean hint. */
const KNOWN_KEYS_PREFIX = "one of the known keys: ";

export const expectedErrorMap: z.core.$ZodErrorMap = (issue) => {
  switch (issue.code) {
    case "invalid_type":
      return typePhrase(issue.expected);
    case "too_small":
      return boundPhrase(issue.origin, "at least", ">", issue.minimum, issue.inclusive, issue.exact);
    case "too_big":
      return boundPhrase(issue.origin, "at most", "<", issue.maximum, issue.inclusive, issue.exact);
    case "invalid_format":
      return issue.format === "regex" && issue.pattern
        ? `a string matching ${issue.pattern}`
        : `a valid ${issue.format}`;
    case "invalid_value":
      return issue.values.length === 1
        ? JSON.stringify(issue.values[0])
        : `one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}`;
    case "not_multiple_of":
      return `a multiple of ${String(issue.divisor)}`;
    case "unrecognized_keys":
      return `${KNOWN_KEYS_PREFIX}${knownKeysOf(issue.inst).join(", ")}`;
    case "invalid_union":
      return "a value of one of the accepted forms";
    case "invalid_key":
      return "a valid key";
    case "invalid_element":
      return "a valid element";
    default:
      return issue.message ?? "a valid value";
  }
};

function typePhrase(expected: string): string {
  switch (expected) {
    case "int":
      return "an integer";
    case "boolean":
      return "true or false";
    case "array":
    case "object":
      return `an ${expected}`;
    case "nonoptional":
      return "a value";
    default:
      return `a ${expected}`;
  }
}

function boundPhrase(
  origin: string,
  words: string,
  sign: string,
  bound: number | bigint,
  inclusive: boolean | undefined,
  exact: boolean | undefined,
): string {
  const n = Number(bound);
  switch (origin) {
    case "string":
      if (exact) return `a string of exactly ${n} characters`;
      return words === "at least" && n === 1
        ? "a non-empty string"
        : `a string of ${words} ${plural(n, "character")}`;
    case "array":
    case "set":
      if (exact) return `a list of exactly ${plural(n, "item")}`;
      return `a list with ${words} ${plural(n, "item")}`;
    default:
      return `a number ${sign}${inclusive === false ? "" : "="} ${n}`;
  }
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}

function knownKeysOf(inst: unknown): string[] {
  const shape = (inst as { shape?: unknown } | undefined)?.shape;
  return shape && typeof shape === "object" ? Object.keys(shape).sort() : [];
}

export interface DescribeOptions {
  /** The value is secret: only its type is shown, never its content. */
  secret?: boolean;
}

/**
 * Printable description of a received value: JSON excerpt (strings quoted, so `"123"` and
 * `123` differ), truncated, with well-known token shapes redacted. Secret values show only
 * their type: an error message is logged and displayed, so it must never carry a secret.
 */
export function describeReceived(value: unknown, options: DescribeOptions = {}): string {
  if (value === undefined) return "nothing (missing)";
  if (options.secret) return `${articleType(value)} (secret, hidden)`;
  if (value === null) return "null";
  if (typeof value === "string" && value === "") return '"" (empty string)';
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  if (text.length > MAX_RECEIVED_CHARS) text = `${text.slice(0, MAX_RECEIVED_CHARS)}…`;
  return redactTokens(text);
}

function articleType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  const t = typeof value;
  return t === "object" ? "an object" : `a ${t}`;
}

/** `["files", ".env", "content"]` → `files[".env"].content`; `["argv", 0]` → `argv[0]`. */
export function formatIssuePath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const segment of path) {
    if (typeof segment === "number") out += `[${segment}]`;
    else if (typeof segment === "string" && /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(segment))
      out += out === "" ? segment : `.${segment}`;
    else out += `[${JSON.stringify(String(segment))}]`;
  }
  return out;
}

/** The value at `path` inside `root`, or undefined when the path does not exist. */
export function valueAtPath(root: unknown, path: readonly PropertyKey[]): unknown {
  let current = root;
  for (const segment of path) {
    if (current === null || typeof current !== "object") return undefined;
    if (!Object.hasOwn(current, segment)) return undefined;
    current = (current as Record<PropertyKey, unknown>)[segment];
  }
  return current;
}

/** Closest known key within edit distance 2 (typo help: `argvv` → `argv`), if any. */
export function suggestKey(key: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = 3;
  const lower = key.toLowerCase();
  for (const candidate of known) {
    const d = editDistance(lower, candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost);
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

/** zod's own English messages; they are replaced by the expected phrase derived from the issue. */
const ZOD_DEFAULT_MESSAGE =
  /^(Invalid (input|option|string|number|key|element|value|format)|Too (small|big)|Unrecognized keys?)\b/;

/**
 * The expected half of an issue, and the received half when the schema's own message already
 * states it (`expected at most 65536 bytes (UTF-8), received 65537 bytes`).
 */
function halvesOf(issue: z.core.$ZodIssue): { expected: string; received?: string } {
  if (ZOD_DEFAULT_MESSAGE.test(issue.message)) {
    const derived = expectedErrorMap(issue as unknown as z.core.$ZodRawIssue);
    return { expected: typeof derived === "string" ? derived : "a valid value" };
  }
  const own = issue.message.replace(/^expected /i, "");
  const split = /^([\s\S]*?), received ([\s\S]*)$/.exec(own);
  return split?.[1] && split[2] ? { expected: split[1], received: split[2] } : { expected: own };
}

export interface ToConfigIssuesOptions {
  /** True for paths whose values must never be printed (runner `secrets.*`). */
  isSecretPath?: (path: readonly PropertyKey[]) => boolean;
}

/**
 * Flattens zod issues (parsed with `expectedErrorMap`) into config issues. Unknown keys give
 * one issue per key with a did-you-mean hint; record-key failures point at the key itself.
 */
export function zodIssuesToConfigIssues(
  issues: readonly z.core.$ZodIssue[],
  input: unknown,
  options: ToConfigIssuesOptions = {},
): ConfigIssue[] {
  const out: ConfigIssue[] = [];
  const isSecret = options.isSecretPath ?? (() => false);
  for (const issue of issues) {
    if (issue.code === "unrecognized_keys") {
      const listsKnownKeys = issue.message.startsWith(KNOWN_KEYS_PREFIX);
      const knownKeys = listsKnownKeys ? issue.message.slice(KNOWN_KEYS_PREFIX.length).split(", ") : [];
      for (const key of issue.keys) {
        const suggestion = suggestKey(key, knownKeys);
        out.push({
          path: formatIssuePath([...issue.path, key]),
          expected: listsKnownKeys ? issue.message : "no such field (unknown fields are refused)",
          received: "an unknown key",
          hint: suggestion ? `did you mean "${suggestion}"?` : "remove it or fix its spelling",
        });
      }
      continue;
    }
    if (issue.code === "invalid_key") {
      const key = issue.path[issue.path.length - 1];
      const inner = issue.issues[0];
      out.push({
        path: formatIssuePath(issue.path),
        expected: `a key that is ${inner?.message ?? "valid"}`,
        received: `the key ${JSON.stringify(String(key))}`,
      });
      continue;
    }
    const halves = halvesOf(issue);
    out.push({
      path: formatIssuePath(issue.path),
      expected: halves.expected,
      received:
        halves.received ?? describeReceived(valueAtPath(input, issue.path), { secret: isSecret(issue.path) }),
    });
  }
  return out;
}

export interface FormatZodIssuesOptions extends ToConfigIssuesOptions {
  /** How the whole input is named when an issue has no path (`(top level)`, `(body)`). */
  rootName?: string;
}

/**
 * Every issue of a failed parse of `input`, as `path: expected X, received Y (hint)` lines
 * joined with `; ` — for one-line errors (queue payloads, control files, run jobs).
 */
export function formatZodIssues(
  issues: readonly z.core.$ZodIssue[],
  input: unknown,
  options: FormatZodIssuesOptions = {},
): string {
  return zodIssuesToConfigIssues(issues, input, options)
    .map((issue) => formatIssueLine(issue, options.rootName))
    .join("; ");
}
