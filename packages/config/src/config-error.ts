/**
 * One bad input: where it is, what was expected, what was received. `received` is already
 * safe to print (secret values are never echoed, see `describeReceived`).
 */
export interface ConfigIssue {
  /** Field path (`sandbox.pids_max`, `commands_by_role.security[0]`) or variable name. */
  readonly path: string;
  /** What a valid value looks like, as a noun phrase ("an integer from 1 to 256"). */
  readonly expected: string;
  /** What was found, printable ("\"abc\"", "nothing (missing)", "a string (secret, hidden)"). */
  readonly received: string;
  /** What to do about it, when there is something more specific to say. */
  readonly hint?: string;
}

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

/** One problem as a line: `path: expected X, received Y (hint)`. */
export function formatIssueLine(issue: ConfigIssue, rootName = "(top level)"): string {
  const hint = issue.hint ? ` (${issue.hint})` : "";
  return `${issue.path === "" ? rootName : issue.path}: expected ${issue.expected}, received ${issue.received}${hint}`;
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
