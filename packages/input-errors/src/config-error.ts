import { type ConfigIssue, formatIssueLine } from "./config-issue.ts";

/**
 * Raised for any invalid configuration: environment settings, runner config files, structured
 * file syntax. It always carries every problem found, never only the first, so one edit fixes
 * them all. The CLI maps it to exit code 2.
 */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
  /** Where the configuration came from: `environment`, a file path, `project demo runner config`. */
  readonly source: string;
  readonly issues: readonly ConfigIssue[];

  constructor(source: string, issues: readonly ConfigIssue[], advice?: string) {
    super(formatConfigError(source, issues, advice));
    this.source = source;
    this.issues = issues;
  }
}

/** `source: path: expected X, received Y (hint)` — one line per issue. */
export function formatConfigIssue(source: string, issue: ConfigIssue): string {
  return `${source}: ${formatIssueLine(issue)}`;
}

function formatConfigError(source: string, issues: readonly ConfigIssue[], advice?: string): string {
  const count = issues.length === 1 ? "1 problem" : `${issues.length} problems`;
  const lines = [`Invalid configuration in ${source} (${count}):`];
  for (const issue of issues) lines.push(`  ${formatConfigIssue(source, issue)}`);
  if (advice) lines.push(advice);
  return lines.join("\n");
}
