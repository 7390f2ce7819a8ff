/**
 * Errors raised by @overseer/git. Each sets `name`, so callers can branch on it after a
 * structured-clone or a log round trip, and none of them carries a credential: URLs with a
 * user-info part are redacted before they reach a message.
 */

/** Replaces the user-info part of any URL (`https://user:token@host`) with `***`. */
export function redactUrlCredentials(text: string): string {
  return text.replace(/([a-z][a-z0-9+.-]*:\/\/)[^/@\s]+@/gi, "$1***@");
}

export interface GitErrorDetails {
  /** The git arguments the caller asked for (without the hardening `-c` prefix). */
  args: readonly string[];
  /** Exit code, or `null` when git did not exit by itself (signal, timeout, spawn failure). */
  exitCode: number | null;
  stderr: string;
  stdout: string;
  cwd: string;
  signal?: string | undefined;
  timedOut?: boolean | undefined;
}

/** A git process that failed (non-zero exit, signal, timeout, or git not runnable). */
export class GitError extends Error {
  override readonly name = "GitError";
  readonly args: readonly string[];
  readonly exitCode: number | null;
  readonly stderr: string;
  readonly stdout: string;
  readonly cwd: string;
  readonly signal: string | undefined;
  readonly timedOut: boolean;

  constructor(details: GitErrorDetails, summary?: string) {
    const args = details.args.map(redactUrlCredentials);
    const stderr = redactUrlCredentials(details.stderr);
    const how = details.timedOut
      ? "timed out"
      : details.exitCode === null
        ? `ended by ${details.signal ?? "an error before exit"}`
        : `exited with code ${details.exitCode}`;
    const tail = stderr.trim().split("\n").slice(-8).join("\n").slice(0, 2000);
    super(
      `${summary ? `${summary}: ` : ""}git ${args.join(" ")} ${how} (cwd ${details.cwd})${tail ? `\n${tail}` : ""}`,
    );
    this.args = args;
    this.exitCode = details.exitCode;
    this.stderr = stderr;
    this.stdout = redactUrlCredentials(details.stdout);
    this.cwd = details.cwd;
    this.signal = details.signal;
    this.timedOut = details.timedOut ?? false;
  }
}

/** A value given to this package is not acceptable; the message says which field and what to do. */
export class GitInputError extends Error {
  override readonly name = "GitInputError";
  readonly field: string;
  constructor(field: string, message: string) {
    super(`${field}: ${message}`);
    this.field = field;
  }
}

/** Every landing attempt lost the compare-and-swap race; nothing was forced. */
export class LandRaceError extends Error {
  override readonly name = "LandRaceError";
  readonly attempts: number;
  readonly branch: string;
  constructor(branch: string, attempts: number) {
    super(
      `landing on "${branch}" lost the compare-and-swap race ${attempts} times in a row; ` +
        "the branch was not changed. Retry later or raise maxAttempts.",
    );
    this.attempts = attempts;
    this.branch = branch;
  }
}

/** A mirror lock could not be taken within its bound. */
export class LockTimeoutError extends Error {
  override readonly name = "LockTimeoutError";
  readonly lockPath: string;
  constructor(lockPath: string, waitedMs: number, holder: string) {
    super(
      `could not take lock ${lockPath} within ${waitedMs} ms (held by ${holder}); ` +
        "if no process is using it, it becomes stale after lockStaleMs and is broken automatically",
    );
    this.lockPath = lockPath;
  }
}
