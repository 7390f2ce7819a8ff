import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { SIZE_ALLOW_LIST, type SizeOffence } from "./size-allow-list.ts";
import { fileLineCount, functionSizes } from "./source-size-measure.ts";

/**
 * The size limits of the source (issue 20's "done when"): no non-generated source file (src and
 * test, .ts/.tsx) over MAX_FILE_LINES lines, and no function over MAX_FUNCTION_LINES own lines
 * (source-size-measure.ts: nested functions and object/array literal tables do not count, so
 * route definitions, schemas and lookup tables are declarations, not logic). Migrations are
 * declarations as a whole. Today's offenders are listed in size-allow-list.ts, each naming who
 * removes it; the list only shrinks (an entry that no longer offends fails too).
 */
const MAX_FILE_LINES = 600;
const MAX_FUNCTION_LINES = 100;

const ROOT = path.resolve(import.meta.dirname, "../..");
const SOURCE = /^((packages|services|apps)\/[^/]+\/(src|test)|test)\/.+\.tsx?$/;
/** Whole files of declarations: schema migrations. */
const DECLARATION_FILES = /^packages\/db\/src\/migrations\//;

/** Source files in the work tree (tracked or new, not ignored); declaration and generated files excluded. */
function sourceFiles(): { file: string; text: string }[] {
  const listed = execFileSync(
    "git",
    ["ls-files", "--cached", "--others", "--exclude-standard", "--deduplicate"],
    {
      cwd: ROOT,
      encoding: "utf8",
    },
  );
  return listed
    .split("\n")
    .filter((file) => SOURCE.test(file) && !file.endsWith(".d.ts"))
    .flatMap((file) => {
      const text = readFileSync(path.join(ROOT, file), "utf8");
      return /^\s*(\/\/|\/\*+|\*)\s*@generated\b/m.test(text.slice(0, 500)) ? [] : [{ file, text }];
    });
}

/** Every offence in the tree today. */
function offences(): (SizeOffence & { lines: number })[] {
  const found: (SizeOffence & { lines: number })[] = [];
  for (const { file, text } of sourceFiles()) {
    const lines = fileLineCount(text);
    if (lines > MAX_FILE_LINES) found.push({ file, lines });
    if (DECLARATION_FILES.test(file)) continue;
    for (const fn of functionSizes(file, text))
      if (fn.lines > MAX_FUNCTION_LINES) found.push({ file, function: fn.name, lines: fn.lines });
  }
  return found;
}

const key = (o: SizeOffence) => (o.function ? `${o.file}: function ${o.function}` : `${o.file}: file`);

describe("source size limits", () => {
  const found = offences();
  const allowed = new Set(SIZE_ALLOW_LIST.map(key));

  it(`no source file over ${MAX_FILE_LINES} lines and no function over ${MAX_FUNCTION_LINES} own lines`, () => {
    const news = found.filter((o) => !allowed.has(key(o))).map((o) => `${key(o)} has ${o.lines} lines`);
    expect(
      news,
      `Split these (a file by concern into modules; a function into named steps). Limits: ${MAX_FILE_LINES} lines a file, ${MAX_FUNCTION_LINES} own lines a function`,
    ).toEqual([]);
  });

  it("the allow-list only shrinks: every entry still offends", () => {
    const offending = new Set(found.map(key));
    const stale = SIZE_ALLOW_LIST.filter((o) => !offending.has(key(o))).map(key);
    expect(
      stale,
      "These are within the limits now: remove them from test/code-shape/size-allow-list.ts",
    ).toEqual([]);
  });
});

describe("functionSizes", () => {
  const sizes = (text: string) =>
    Object.fromEntries(functionSizes("example.ts", text).map((fn) => [fn.name, fn.lines]));

  it("counts a function's lines, comments and blank lines included", () => {
    const text = ["function plain(a: number) {", "  // why", "", "  return a + 1;", "}", ""].join("\n");
    expect(sizes(text)).toEqual({ plain: 5 });
    expect(fileLineCount(text)).toBe(5);
  });

  it("leaves nested functions to their own count, keeping the lines they start and end on", () => {
    const text = [
      "class Runner {",
      "  run() {",
      "    const step = () => {",
      "      work();",
      "      work();",
      "    };",
      "    step();",
      "  }",
      "}",
    ].join("\n");
    expect(sizes(text)).toEqual({ "Runner.run": 5, step: 4 });
  });

  it("does not count object and array literal tables (definitions, schemas) as the function's lines", () => {
    const text = [
      "export function register(app: App) {",
      "  const routes = [",
      "    { path: '/a', method: 'get' },",
      "    { path: '/b', method: 'get' },",
      "  ];",
      "  app.add({",
      "    path: '/c',",
      "    handler: async (c: Context) => {",
      "      return c.json({",
      "        ok: true,",
      "      });",
      "    },",
      "  });",
      "}",
    ].join("\n");
    expect(sizes(text)).toEqual({ register: 6, handler: 4 });
  });

  it("names callbacks by their call and first argument", () => {
    const text = [
      'describe("limits", () => {',
      '  it("works", async () => {',
      "    run();",
      "  });",
      "});",
    ].join("\n");
    expect(sizes(text)).toEqual({ 'describe("limits") callback': 4, 'it("works") callback': 3 });
  });
});
