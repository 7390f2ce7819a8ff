/** Why a harness command cannot be started. */
export type HarnessNotConfiguredReason = "empty_argv" | "not_found" | "not_executable";

/**
 * The configured harness command cannot be started (docs/state-machine.md rule 7: the task waits for an
 * operator with reason "harness not configured"). Not retryable: the runner config must change.
 */
export class HarnessNotConfiguredError extends Error {
  override readonly name = "HarnessNotConfiguredError";
  /** The command that could not be started (argv[0], or the sandbox's wrapper binary). */
  readonly file: string;
  readonly reason: HarnessNotConfiguredReason;

  constructor(file: string, reason: HarnessNotConfiguredReason, detail?: string) {
    const fix =
      'set "argv" (or "commands_by_role.<role>") in the project\'s runner config to a command installed on the worker';
    const what =
      reason === "empty_argv"
        ? "the harness command is empty"
        : reason === "not_found"
          ? `harness executable "${file}" was not found${detail ? ` (${detail})` : ""}`
          : `harness executable "${file}" is not executable${detail ? ` (${detail})` : ""}`;
    super(`${what}; ${fix}`);
    this.file = file;
    this.reason = reason;
  }
}

/**
 * The mandatory part of a prompt (task card + action instructions) is longer than
 * `max_prompt_chars`. Sizes are UTF-16 code units (JavaScript string length).
 */
export class PromptTooLargeError extends Error {
  override readonly name = "PromptTooLargeError";
  /** Characters the prompt needs at least. */
  readonly needed: number;
  /** The configured `max_prompt_chars`. */
  readonly max: number;

  constructor(needed: number, max: number) {
    super(
      `prompt needs ${needed} chars but max_prompt_chars is ${max}; raise max_prompt_chars in the runner config or shorten the task body`,
    );
    this.needed = needed;
    this.max = max;
  }
}

/**
 * The run was aborted (operator cancel, worker shutdown, lost lock) before its harness was
 * started: nothing ran. The caller ends the run the way it ends an aborted harness, never as
 * a failure to retry.
 */
export class HarnessAbortedError extends Error {
  override readonly name = "HarnessAbortedError";
  constructor() {
    super("run aborted before the harness was started");
  }
}
