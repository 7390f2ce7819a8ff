import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { CONTROL_KINDS, ControlTransitionSchema } from "@overseer/run-contract";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../support/service-process.ts";

/**
 * docs/control-file.md is the agent's contract: it must name every kind the schema accepts, every
 * field of each, and every verb and flag the bundled `overseer-agent` takes (read from its own
 * `--help`, so a new verb or flag fails here until the doc shows it).
 */

const DOC = readFileSync(path.join(REPO_ROOT, "docs/control-file.md"), "utf8");
const AGENT = path.join(REPO_ROOT, "packages/harness/bin/overseer-agent");

/**
 * Verb → its flags, from usage lines `overseer-agent VERB …` (indented continuations belong to
 * the verb above) and the one line naming the flags of every verb (`*`).
 */
function flagsByVerb(lines: readonly string[]): Map<string, string[]> {
  const verbs = new Map<string, string[]>();
  let verb = "";
  for (const line of lines) {
    const start = /overseer-agent\s+([a-z]+)\b/.exec(line);
    if (start) verb = start[1] as string;
    else if (/\bevery verb\b|\bany verb\b/i.test(line)) verb = "*";
    else if (verb === "*" || !/^\s{8,}/.test(line)) verb = "";
    if (verb === "") continue;
    const flags = [...line.matchAll(/--[a-z][a-z-]*/g)].map((m) => m[0]);
    verbs.set(verb, [...new Set([...(verbs.get(verb) ?? []), ...flags])].sort());
  }
  return verbs;
}

/** The usage section of `overseer-agent --help` (up to the verb descriptions). */
function helpUsage(): string[] {
  const help = execFileSync("sh", [AGENT, "--help"], { encoding: "utf8" });
  const lines = help.split("\n");
  const from = lines.findIndex((line) => line.startsWith("Usage:"));
  const to = lines.findIndex((line) => line.startsWith("Verbs:"));
  expect(from, "overseer-agent --help has a Usage: section").toBeGreaterThan(-1);
  return lines.slice(from + 1, to === -1 ? undefined : to);
}

/** The first ```sh block of the doc: its usage. */
function docUsage(): string[] {
  return (/```sh\n([\s\S]*?)\n```/.exec(DOC)?.[1] ?? "").split("\n");
}

/** A kind's row of the format table, or "" when it has none. */
function tableRow(kind: string): string {
  return DOC.split("\n").find((line) => line.startsWith(`| \`${kind}\` |`)) ?? "";
}

/** Field names each kind's schema accepts (version, kind and usage are shared by all). */
function fieldsOf(kind: string): string[] {
  const member = ControlTransitionSchema.options.find((option) => {
    const shape = "shape" in option ? option.shape : option.in.shape;
    return shape.kind.value === kind;
  });
  if (member === undefined) return [];
  const shape = "shape" in member ? member.shape : member.in.shape;
  return Object.keys(shape).filter((field) => !["version", "kind", "usage"].includes(field));
}

describe("docs/control-file.md covers the whole control file", () => {
  it("the schema and overseer-agent know the same kinds", () => {
    const verbs = [...flagsByVerb(helpUsage()).keys()].filter((verb) => verb !== "*");
    expect(verbs.sort()).toEqual([...CONTROL_KINDS].sort());
  });

  it.each(CONTROL_KINDS)("kind %s has a row naming each of its fields", (kind) => {
    const row = tableRow(kind);
    expect(row, `a row | \`${kind}\` | in the format table`).not.toBe("");
    const missing = fieldsOf(kind).filter((field) => !row.includes(`\`${field}\``));
    expect(missing).toEqual([]);
  });

  it("the usage block shows every verb and flag overseer-agent --help does", () => {
    expect(Object.fromEntries(flagsByVerb(docUsage()))).toEqual(Object.fromEntries(flagsByVerb(helpUsage())));
  });
});
