/**
 * Typed refusals of the state machine. `code` is stable (used as the HTTP error code);
 * the message says what was wrong and what to do.
 */
export type DomainErrorCode =
  | "not_found"
  | "invalid_transition"
  | "invalid_option"
  | "note_required"
  | "stale"
  | "conflict"
  | "project_inactive"
  | "already_exists"
  | "invalid_settings";

export class DomainError extends Error {
  override readonly name = "DomainError";
  constructor(
    readonly code: DomainErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

export function isDomainError(error: unknown): error is DomainError {
  return error instanceof DomainError;
}
