import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../support/service-process.ts";

/**
 * The repository is self-contained: everything the code and the docs cite is in docs/, and a
 * clone with no other folder beside it can follow every reference.
 */

const TEXT = /\.(ts|tsx|mts|mjs|cjs|js|md|json|ya?ml|sh)$/;
const SELF = path.relative(REPO_ROOT, import.meta.filename);

const files = execFileSync("git", ["ls-files"], { cwd: REPO_ROOT, encoding: "utf8" })
  .split("\n")
  .filter(
    (f) =>
      TEXT.test(f) && !f.endsWith("package-lock.json") && f !== SELF && existsSync(path.join(REPO_ROOT, f)),
  );
const read = (file: string) => readFileSync(path.join(REPO_ROOT, file), "utf8");

/** `file:line: text` for every line of every tracked text file matching `pattern`. */
function linesMatching(pattern: RegExp): string[] {
  const hits: string[] = [];
  for (const file of files) {
    read(file)
      .split("\n")
      .forEach((line, i) => {
        if (pattern.test(line)) hits.push(`${file}:${i + 1}: ${line.trim()}`);
      });
  }
  return hits;
}

/** The comment part of a line of code: a `*`, `//` or `#` line, or what follows `// `. */
function commentOf(line: string): string {
  if (/^\s*(\*|\/\/|\/\*\*|# )/.test(line)) return line;
  return line.includes("// ") ? line.slice(line.indexOf("// ")) : "";
}

describe("references stay inside the repository", () => {
  it("nothing links the team workspace beside the repository", () => {
    expect(linesMatching(/\.\.\/shared\b|\bshared\/SPEC/)).toEqual([]);
  });

  it("nothing cites an outside contract's section numbers: code cites docs/ instead", () => {
    expect(linesMatching(/\bSPEC\b/)).toEqual([]);
  });

  it("nothing cites source documents a clone does not have", () => {
    expect(
      linesMatching(/\bseeds?(\/|'s\b| (documents?|procedure|runner|system|file|JSON|operator)\b)/i),
    ).toEqual([]);
  });

  it("every docs/… path cited from code comments or docs exists", () => {
    // Citations live in Markdown and in comments; a docs/… path in a string is test data.
    const missing: string[] = [];
    for (const file of files) {
      const prose = file.endsWith(".md");
      for (const line of read(file).split("\n")) {
        for (const match of (prose ? line : commentOf(line)).matchAll(/\bdocs\/[\w./-]*?\.md\b/g)) {
          if (!existsSync(path.join(REPO_ROOT, match[0]))) missing.push(`${file}: ${match[0]}`);
        }
      }
    }
    expect(missing).toEqual([]);
  });

  it("every source path cited in docs/, the READMEs and code comments exists", () => {
    // A path from the repository root (`packages/db/src/run-fence.ts`) or from the citing
    // workspace (`test/fixtures/agent-output`; `src/healthcheck-main.ts` in a package README);
    // in Markdown, a bare file name (`control-file-schema.ts`) must name a file somewhere in the
    // repository. Fenced code blocks hold examples (`write src/a.txt`), not citations.
    const names = new Set(files.map((f) => path.basename(f)));
    const top = "packages|services|apps|test|scripts|infra|docs";
    const citedInCode = new RegExp(`(?<![\\w./-])((?:${top})/[\\w.@/-]*\\w)`, "g");
    const citedInProse = new RegExp(`(?<![\\w./-])((?:${top}|src|bin)/[\\w.@/-]*\\w)`, "g");
    // (`*-schemas.ts` names a family of files, not one.)
    const bare = /(?<![\w./*-])(\w[\w-]*\.(?:ts|tsx|mts|mjs|cjs|sh|sql))\b/g;
    const missing: string[] = [];
    for (const file of files) {
      const markdown = file.endsWith(".md");
      if (markdown && !file.startsWith("docs/") && !file.endsWith("README.md")) continue;
      const workspace = /^(packages|services|apps)\/[^/]+\//.exec(file)?.[0] ?? "";
      let fence = ""; // the open fence (```, ````…), or "" outside fenced code
      read(file)
        .split("\n")
        .forEach((line, i) => {
          const marker = markdown ? (/^\s*(`{3,})/.exec(line)?.[1] ?? "") : "";
          if (fence === "" && marker !== "") fence = marker;
          else if (fence !== "" && marker.length >= fence.length && line.trim() === marker) fence = "";
          else if (fence !== "") return;
          if (marker !== "") return;
          const text = markdown ? line : commentOf(line);
          for (const match of text.matchAll(markdown ? citedInProse : citedInCode)) {
            const target = match[1] as string;
            if (
              !existsSync(path.join(REPO_ROOT, target)) &&
              !existsSync(path.join(REPO_ROOT, workspace, target))
            )
              missing.push(`${file}:${i + 1}: ${target}`);
          }
          if (!markdown) return;
          for (const match of text.matchAll(bare))
            if (!names.has(match[1] as string)) missing.push(`${file}:${i + 1}: ${match[1]}`);
        });
    }
    expect(missing).toEqual([]);
  });

  it("every @overseer/… package named anywhere is a workspace", () => {
    const workspaces = new Set(
      files
        .filter((f) => /^(packages|services|apps)\/[^/]+\/package\.json$|^test\/package\.json$/.test(f))
        .map((f) => (JSON.parse(read(f)) as { name: string }).name),
    );
    expect(
      linesMatching(/@overseer\/[a-z]/).flatMap((hit) =>
        [...hit.matchAll(/@overseer\/[a-z][a-z0-9-]*/g)]
          .map((m) => m[0])
          .filter((name) => !workspaces.has(name))
          .map((name) => `${hit.slice(0, hit.indexOf(": "))}: ${name}`),
      ),
    ).toEqual([]);
  });

  it("every relative Markdown link resolves", () => {
    const broken: string[] = [];
    for (const file of files.filter((f) => f.endsWith(".md"))) {
      for (const match of read(file).matchAll(/\]\(([^)#\s]+)(#[^)]*)?\)/g)) {
        const target = match[1] as string;
        if (/^[a-z]+:/.test(target)) continue;
        if (!existsSync(path.join(REPO_ROOT, path.dirname(file), target))) broken.push(`${file}: ${target}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it("every cited state-machine rule is one docs/state-machine.md numbers", () => {
    const rules = new Set(
      [...read("docs/state-machine.md").matchAll(/^(\d+)\. \*\*/gm)].map((m) => Number(m[1])),
    );
    expect([...rules].sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    const unknown: string[] = [];
    for (const file of files) {
      for (const match of read(file).matchAll(/docs\/state-machine\.md rules? (\d+)(?: and (\d+))?/g)) {
        for (const n of [match[1], match[2]])
          if (n !== undefined && !rules.has(Number(n))) unknown.push(`${file}: rule ${n}`);
      }
    }
    expect(unknown).toEqual([]);
  });
});
