import { relative, sep } from "node:path";
import type { Reporter } from "vitest/reporters";

/**
 * A Vitest reporter (vitest.config.ts) that prints line and branch coverage per workspace
 * (packages/<name>, services/<name>) after `vitest run` has collected coverage, weakest first,
 * so the thinly tested parts of the tree show in every `npm test`. Thresholds are not enforced
 * here: the table is for reading; vitest's own coverage.thresholds would fail the run.
 */

/** The part of istanbul's CoverageMap (what Vitest hands to onCoverage) this reporter reads. */
interface CoverageMap {
  files(): string[];
  fileCoverageFor(file: string): { toSummary(): FileSummary };
}

interface Counter {
  total: number;
  covered: number;
}

interface FileSummary {
  lines: Counter;
  branches: Counter;
}

interface WorkspaceCoverage {
  workspace: string;
  lines: Counter;
  branches: Counter;
}

const percent = (counter: Counter): number =>
  counter.total === 0 ? 100 : (100 * counter.covered) / counter.total;

/** `packages/cli/src/bin.ts` → `packages/cli`; files outside a workspace group under their first folder. */
export function workspaceOf(root: string, file: string): string {
  const parts = relative(root, file).split(sep);
  return parts[0] === "packages" || parts[0] === "services" || parts[0] === "apps"
    ? parts.slice(0, 2).join("/")
    : (parts[0] ?? file);
}

/** Sums the per-file counters by workspace, weakest line coverage first, plus the total. */
export function coverageByWorkspace(root: string, map: CoverageMap): WorkspaceCoverage[] {
  const rows = new Map<string, WorkspaceCoverage>();
  const total: WorkspaceCoverage = {
    workspace: "all",
    lines: { total: 0, covered: 0 },
    branches: { total: 0, covered: 0 },
  };
  for (const file of map.files()) {
    const workspace = workspaceOf(root, file);
    const row = rows.get(workspace) ?? {
      workspace,
      lines: { total: 0, covered: 0 },
      branches: { total: 0, covered: 0 },
    };
    const summary = map.fileCoverageFor(file).toSummary();
    for (const target of [row, total]) {
      target.lines.total += summary.lines.total;
      target.lines.covered += summary.lines.covered;
      target.branches.total += summary.branches.total;
      target.branches.covered += summary.branches.covered;
    }
    rows.set(workspace, row);
  }
  return [...[...rows.values()].sort((a, b) => percent(a.lines) - percent(b.lines)), total];
}

export function formatCoverageTable(rows: readonly WorkspaceCoverage[]): string {
  const width = Math.max(...rows.map((row) => row.workspace.length), "workspace".length);
  const cell = (counter: Counter) =>
    `${percent(counter).toFixed(1).padStart(5)} % ${`(${counter.covered}/${counter.total})`.padEnd(13)}`;
  const lines = [`${"workspace".padEnd(width)}  lines                 branches`];
  for (const row of rows)
    lines.push(`${row.workspace.padEnd(width)}  ${cell(row.lines)} ${cell(row.branches)}`);
  return lines.join("\n");
}

export default class CoverageByWorkspaceReporter implements Reporter {
  private root = process.cwd();

  onInit(vitest: { config: { root: string } }): void {
    this.root = vitest.config.root;
  }

  onCoverage(coverage: unknown): void {
    const rows = coverageByWorkspace(this.root, coverage as CoverageMap);
    process.stdout.write(
      `\nCoverage by workspace (lines and branches, weakest first)\n${formatCoverageTable(rows)}\n`,
    );
  }
}
