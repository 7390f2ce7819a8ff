import { GitInputError } from "./git-error.ts";

/**
 * Validation of the names this package puts on git command lines. Checking here (instead of
 * asking `git check-ref-format`) costs no process, and a name can never be read as an option.
 */

const SHA = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

export function isFullSha(value: string): boolean {
  return SHA.test(value);
}

export function assertSha(value: unknown, field: string): string {
  if (typeof value !== "string" || !SHA.test(value)) {
    throw new GitInputError(
      field,
      `expected a full lowercase commit id (40 or 64 hex digits), received ${JSON.stringify(value)}`,
    );
  }
  return value;
}

/** Why `name` is not a valid branch name (rules of git-check-ref-format), or `null`. */
export function branchNameProblem(name: string): string | null {
  if (name.length === 0) return "it is empty";
  if (name.startsWith("-")) return 'it starts with "-"';
  if (name.startsWith("refs/")) return 'it starts with "refs/" (give the short branch name)';
  if (name === "@" || name.includes("@{")) return 'it is "@" or contains "@{"';
  if (name.includes("..")) return 'it contains ".."';
  if (name.includes("//") || name.startsWith("/") || name.endsWith("/"))
    return "it has an empty path component";
  if (name.endsWith(".")) return 'it ends with "."';
  // biome-ignore lint/suspicious/noControlCharactersInRegex: rejecting control characters is the point
  if (/[\x00-\x20\x7f~^:?*[\\]/.test(name))
    return "it contains a space, a control character or one of ~ ^ : ? * [ \\";
  for (const part of name.split("/")) {
    if (part.startsWith(".")) return `component "${part}" starts with "."`;
    if (part.endsWith(".lock")) return `component "${part}" ends with ".lock"`;
  }
  return null;
}

export function assertBranchName(value: unknown, field: string): string {
  if (typeof value !== "string") {
    throw new GitInputError(field, `expected a branch name string, received ${typeof value}`);
  }
  const problem = branchNameProblem(value);
  if (problem) {
    throw new GitInputError(
      field,
      `${JSON.stringify(value)} is not a valid branch name: ${problem}. ` +
        'Use letters, digits and "-", "_", ".", "/" (e.g. "overseer/task/S00-028").',
    );
  }
  return value;
}

/** A revision the caller names: a branch, a commit id, or another git revision expression. */
export function assertRevision(value: unknown, field: string): string {
  if (typeof value !== "string" || value.length === 0) {
    throw new GitInputError(field, `expected a branch name or commit id, received ${JSON.stringify(value)}`);
  }
  // biome-ignore lint/suspicious/noControlCharactersInRegex: rejecting control characters is the point
  if (value.startsWith("-") || /[\x00-\x1f\x7f]/.test(value)) {
    throw new GitInputError(
      field,
      `${JSON.stringify(value)} is not a usable revision (starts with "-" or contains a control character)`,
    );
  }
  return value;
}

/** The branch docs/state-machine.md rule 4 keeps an escalated run's unfinished work on: `overseer/checkpoint/<task>/<agent>`. */
export function checkpointRef(taskId: string, agentId: string): string {
  return assertBranchName(`overseer/checkpoint/${taskId}/${agentId}`, "checkpointRef(taskId, agentId)");
}
