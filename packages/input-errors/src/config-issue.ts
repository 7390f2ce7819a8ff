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

/** One problem as a line: `path: expected X, received Y (hint)`. */
export function formatIssueLine(issue: ConfigIssue, rootName = "(top level)"): string {
  const hint = issue.hint ? ` (${issue.hint})` : "";
  return `${issue.path === "" ? rootName : issue.path}: expected ${issue.expected}, received ${issue.received}${hint}`;
}
