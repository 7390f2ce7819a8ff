import path from "node:path";
import YAML from "yaml";

export type StructuredFormat = "json" | "yaml";

/** A syntax error with its position (1-based) when the parser reports one. */
export interface SyntaxProblem {
  readonly line?: number;
  readonly column?: number;
  readonly message: string;
}

export type StructuredParseResult =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly problems: readonly SyntaxProblem[] };

/**
 * Most YAML aliases one document may expand. The default of the `yaml` package; stated here
 * because it is what stops a "billion laughs" file from exhausting memory.
 */
const MAX_YAML_ALIAS_COUNT = 100;

/**
 * Parses JSON or YAML into plain data. YAML uses the 1.2 core schema (so `yes`/`no` stay
 * strings and `S00-028` stays a string), rejects duplicate keys and multi-document files, and
 * reports every syntax error it finds, not just the first.
 */
export function parseStructuredText(text: string, format: StructuredFormat): StructuredParseResult {
  const source = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  if (format === "json") {
    try {
      return { ok: true, value: JSON.parse(source) };
    } catch (error) {
      return { ok: false, problems: [jsonProblem(source, (error as Error).message)] };
    }
  }
  const docs = YAML.parseAllDocuments(source, { prettyErrors: true, uniqueKeys: true });
  const list = Array.isArray(docs) ? docs : [docs];
  if (list.length > 1) {
    return { ok: false, problems: [{ message: `expected one YAML document, found ${list.length}` }] };
  }
  const doc = list[0];
  if (!doc) return { ok: true, value: null };
  if (doc.errors.length > 0) {
    return {
      ok: false,
      problems: doc.errors.map((e) => ({
        line: e.linePos?.[0].line,
        column: e.linePos?.[0].col,
        // The pretty message ends with a source excerpt, which may hold secrets: keep the first line.
        message: (e.message.split("\n")[0] ?? "").replace(/ at line \d+, column \d+:?$/, ""),
      })),
    };
  }
  try {
    return { ok: true, value: doc.toJS({ maxAliasCount: MAX_YAML_ALIAS_COUNT }) };
  } catch (error) {
    return { ok: false, problems: [{ message: (error as Error).message }] };
  }
}

/** `.yaml`/`.yml` → yaml, `.json` → json, anything else undefined. */
export function formatFromExtension(file: string): StructuredFormat | undefined {
  const ext = path.extname(file).toLowerCase();
  if (ext === ".yaml" || ext === ".yml") return "yaml";
  if (ext === ".json") return "json";
  return undefined;
}

/** `line 3, column 5: message` or just the message. */
export function formatSyntaxProblem(problem: SyntaxProblem): string {
  return problem.line === undefined
    ? problem.message
    : `line ${problem.line}, column ${problem.column ?? 1}: ${problem.message}`;
}

/**
 * A JSON syntax problem with a position. V8's wording varies by Node version: "(line L column
 * C)", "at position N", or none at all with an excerpt of the input (which may hold secrets,
 * so excerpts are cut). Without a position from V8, the YAML parser (JSON is a subset of YAML
 * flow syntax) is asked where the text breaks.
 */
function jsonProblem(text: string, rawMessage: string): SyntaxProblem {
  const message = stripExcerpt(rawMessage);
  const lineCol = /line (\d+) column (\d+)/.exec(rawMessage);
  if (lineCol)
    return { line: Number(lineCol[1]), column: Number(lineCol[2]), message: stripPosition(message) };
  const position = /at position (\d+)/.exec(rawMessage);
  if (position) return { ...offsetToLineColumn(text, Number(position[1])), message: stripPosition(message) };
  if (/Unexpected end of JSON input/.test(rawMessage))
    return { ...offsetToLineColumn(text, text.length), message };
  const yamlError = YAML.parseAllDocuments(text).flatMap((d) => ("errors" in d ? d.errors : []))[0];
  const at = yamlError?.linePos?.[0];
  return at ? { line: at.line, column: at.col, message } : { message };
}

function offsetToLineColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  return { line: before.split("\n").length, column: before.length - before.lastIndexOf("\n") };
}

/** `Unexpected token '}', "{ "a": [..." is not valid JSON` → `Unexpected token '}'`. */
function stripExcerpt(message: string): string {
  return message.replace(/, ".*" is not valid JSON$/s, "").trim();
}

function stripPosition(message: string): string {
  return message
    .replace(/\s*\(line \d+ column \d+\)/, "")
    .replace(/\s*at position \d+/, "")
    .replace(/\s*in JSON$/, "")
    .trim();
}
