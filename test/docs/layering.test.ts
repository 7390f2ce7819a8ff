import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../support/service-process.ts";

/**
 * The layering is enforced by the rules of .dependency-cruiser.cjs; the picture in
 * docs/architecture.md and each README's "Must not import" line describe it. Both are read here
 * and compared with what the rules allow, so neither can drift from the enforcement.
 *
 * "What the rules allow" is computed from the rules themselves, not from a copy of their table:
 * workspace A may import workspace B when no forbidden rule matches a dependency from a file of
 * A's src to B's entry point. Only rules on paths are evaluated (cycles, dependency types and
 * unresolvable imports say nothing about which workspace may import which).
 */

type PathCondition = { path?: string | string[]; pathNot?: string | string[] };
type Rule = {
  name: string;
  from: PathCondition & Record<string, unknown>;
  to: PathCondition & Record<string, unknown>;
};

const require = createRequire(import.meta.url);
const RULES = (require(path.join(REPO_ROOT, ".dependency-cruiser.cjs")) as { forbidden: Rule[] }).forbidden;

/** Every workspace under packages/ and services/: name → its directory. */
const WORKSPACES = new Map(
  ["packages", "services"].flatMap((group) =>
    readdirSync(path.join(REPO_ROOT, group))
      .filter((name) => existsSync(path.join(REPO_ROOT, group, name, "package.json")))
      .map((name) => [name, `${group}/${name}`] as const),
  ),
);
const SERVICES = [...WORKSPACES].filter(([, dir]) => dir.startsWith("services/")).map(([name]) => name);
const ALL = [...WORKSPACES.keys()];

const list = (value: string | string[] | undefined): string[] =>
  value === undefined ? [] : Array.isArray(value) ? value : [value];
const onlyPaths = (condition: Record<string, unknown>) =>
  Object.keys(condition).every((key) => key === "path" || key === "pathNot");

/**
 * Whether `file` meets a condition as dependency-cruiser reads it: one of `path` matches (a list
 * is "any of") and none of `pathNot`; `$1`… in the patterns are the groups of the `from` match.
 * Returns the match (its groups feed the `to` side), or null.
 */
function matches(
  condition: PathCondition,
  file: string,
  groups: readonly string[] = [],
): RegExpMatchArray | null {
  const pattern = (text: string) =>
    new RegExp(text.replace(/\$(\d)/g, (_, n: string) => groups[Number(n)] ?? ""));
  const paths = list(condition.path);
  const hit =
    paths.length === 0 ? [file] : (paths.map((p) => file.match(pattern(p))).find((m) => m !== null) ?? null);
  if (hit === null) return null;
  return list(condition.pathNot).some((p) => pattern(p).test(file)) ? null : (hit as RegExpMatchArray);
}

/** The rules that forbid workspace `from` to import workspace `to` (empty: allowed). */
function forbiddenBy(from: string, to: string): string[] {
  const source = `${WORKSPACES.get(from)}/src/module.ts`;
  const target = `${WORKSPACES.get(to)}/src/index.ts`;
  return RULES.filter((rule) => {
    if (!onlyPaths(rule.from) || !onlyPaths(rule.to)) return false;
    const hit = matches(rule.from, source);
    return hit !== null && matches(rule.to, target, [...hit]) !== null;
  }).map((rule) => rule.name);
}

/** The workspaces `name`'s src may import, by the rules. */
function allowedImports(name: string): Set<string> {
  return new Set(ALL.filter((other) => other !== name && forbiddenBy(name, other).length === 0));
}

const sorted = (names: Iterable<string>) => [...names].sort();

describe("the rules are what the layering says", () => {
  it("spot checks: what the issue asked for holds", () => {
    expect(forbiddenBy("harness", "queue")).toContain("layer-harness");
    expect(forbiddenBy("queue", "sandbox")).toContain("layer-queue");
    expect(forbiddenBy("run-contract", "domain")).toContain("layer-run-contract");
    expect(forbiddenBy("sandbox", "run-contract")).toEqual([]);
    expect(forbiddenBy("worker", "gateway")).toContain("services-never-import-services");
    expect(forbiddenBy("gateway", "cli")).toContain("nothing-imports-the-cli");
    expect(forbiddenBy("coordinator", "db")).toEqual([]);
  });
});

/**
 * The diagram: a fenced block after the marker line. A line names a tier in its first column
 * (or continues the tier above when indented), then `package[, package…] → what it may import`:
 * names, `nothing`, or `every package below` (every package drawn in a lower tier).
 */
const DIAGRAM_MARKER =
  "<!-- layering: compared with .dependency-cruiser.cjs by test/docs/layering.test.ts -->";

interface DiagramRow {
  tier: number;
  names: string[];
  targets: string[] | "below";
  line: string;
}

function readDiagram(): DiagramRow[] {
  const doc = readFileSync(path.join(REPO_ROOT, "docs/architecture.md"), "utf8");
  const start = doc.indexOf(DIAGRAM_MARKER);
  expect(start, `docs/architecture.md has the layering diagram after ${DIAGRAM_MARKER}`).toBeGreaterThan(-1);
  const block = /```\n([\s\S]*?)\n```/.exec(doc.slice(start))?.[1] ?? "";
  const lines = block.split("\n").filter((line) => line.trim() !== "");
  let tier = 0;
  const rows: DiagramRow[] = lines.map((line) => {
    if (!/^\s/.test(line)) tier += 1;
    const body = /^\s/.test(line) ? line.trim() : line.trim().replace(/^\S+\s+/, "");
    const [left = "", right = ""] = body.split("→").map((part) => part.trim());
    const names = left.split(",").map((n) => n.trim());
    const targets =
      right === "every package below"
        ? "below"
        : right === "nothing"
          ? []
          : right.split(",").map((n) => n.trim());
    return { tier, names, targets, line };
  });
  // Tiers were numbered top down; number them bottom up (a higher tier may import a lower one).
  return rows.map((row) => ({ ...row, tier: tier + 1 - row.tier }));
}

describe("docs/architecture.md draws the enforced layering", () => {
  const rows = readDiagram();
  const tierOf = new Map(rows.flatMap((row) => row.names.map((name) => [name, row.tier] as const)));

  it("draws every package and service once", () => {
    const drawn = rows.flatMap((row) => row.names);
    expect(sorted(drawn)).toEqual(sorted(new Set(drawn)));
    expect(sorted(drawn)).toEqual(sorted(ALL));
  });

  it("says, for each, exactly what the rules let it import", () => {
    const wrong: string[] = [];
    for (const row of rows) {
      for (const name of row.names) {
        const drawn =
          row.targets === "below"
            ? ALL.filter((other) => (tierOf.get(other) ?? Number.POSITIVE_INFINITY) < row.tier)
            : row.targets;
        const enforced = allowedImports(name);
        if (sorted(drawn).join() !== sorted(enforced).join())
          wrong.push(
            `${name}: drawn → ${sorted(drawn).join(", ")}; the rules allow → ${sorted(enforced).join(", ")}`,
          );
      }
    }
    expect(wrong).toEqual([]);
  });

  it("never draws a package below one it may import", () => {
    const upward: string[] = [];
    for (const name of ALL) {
      for (const target of allowedImports(name)) {
        if ((tierOf.get(target) ?? 0) > (tierOf.get(name) ?? 0)) upward.push(`${name} → ${target}`);
      }
    }
    expect(upward).toEqual([]);
  });
});

/**
 * A README's "Must not import:" sentence, read as a set of workspaces: `any other workspace but
 * `a` and `b`` (all but those), `anything`/`any other workspace` (all), or a list of `names`,
 * where "services", "another service" or "other services" stand for every service.
 */
function claimedForbidden(name: string, readme: string): Set<string> | string {
  const sentence = /Must not import:([\s\S]*?)(?:\.\s|\.$|\n\n|$)/.exec(readme)?.[1];
  if (sentence === undefined) return 'no "Must not import:" sentence';
  const named = [...sentence.matchAll(/`(?:@overseer\/)?([\w-]+)`/g)].map((m) => m[1] as string);
  const unknown = named.filter((n) => !WORKSPACES.has(n));
  if (unknown.length > 0) return `names ${unknown.join(", ")}, which are not workspaces`;
  const others = ALL.filter((other) => other !== name);
  if (/\bany other workspace but\b/.test(sentence)) return new Set(others.filter((o) => !named.includes(o)));
  if (/\banything\b|\bany other workspace\b/.test(sentence)) return new Set(others);
  const services = /\bservices\b|\banother service\b|\bany service\b/.test(sentence) ? SERVICES : [];
  return new Set([...named, ...services.filter((s) => s !== name)]);
}

/** The sentence a README should carry for `name`: the shorter of the two forms. */
function expectedSentence(name: string, allowed: Set<string>): string {
  const quote = (names: string[]) =>
    names.length <= 1
      ? names.map((n) => `\`${n}\``).join("")
      : `${names
          .slice(0, -1)
          .map((n) => `\`${n}\``)
          .join(", ")} and \`${names.at(-1)}\``;
  if (allowed.size === 0) return "Must not import: any other workspace.";
  const otherServices = SERVICES.filter((s) => s !== name);
  const forbiddenPackages = sorted(
    ALL.filter((o) => o !== name && !allowed.has(o) && !otherServices.includes(o)),
  );
  const servicesForbidden = otherServices.every((s) => !allowed.has(s));
  if (servicesForbidden && forbiddenPackages.length < allowed.size)
    return `Must not import: services${forbiddenPackages.length > 0 ? `, ${quote(forbiddenPackages)}` : ""}.`;
  return `Must not import: any other workspace but ${quote(sorted(allowed))}.`;
}

describe("each README's must-not-import list is the rules' own", () => {
  it.each(ALL)("%s", (name) => {
    const readme = path.join(REPO_ROOT, WORKSPACES.get(name) as string, "README.md");
    expect(existsSync(readme), `${readme} exists`).toBe(true);
    const allowed = allowedImports(name);
    const forbidden = new Set(ALL.filter((o) => o !== name && !allowed.has(o)));
    const claimed = claimedForbidden(name, readFileSync(readme, "utf8"));
    const advice = `write, for instance: ${expectedSentence(name, allowed)}`;
    expect(typeof claimed === "string" ? `${claimed}; ${advice}` : sorted(claimed).join(", "), advice).toBe(
      sorted(forbidden).join(", "),
    );
  });
});
