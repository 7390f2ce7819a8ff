/**
 * Errors of @overseer/forge. One class with a `code` the caller branches on (the retry-or-not
 * decision is the caller's: `unavailable` and `rate_limited` are worth a later retry, the others
 * need a person). Messages name the forge, the request and what to do; none carries a token.
 */
import type { ForgeKind } from "./forge-adapter.ts";

export type ForgeErrorCode =
  /** The token is missing, expired or revoked (401). */
  | "unauthorized"
  /** The token lacks a right, or branch protection refused (403). */
  | "forbidden"
  | "not_found"
  /** The forge refused the change as it stands (409/422/405). */
  | "conflict"
  /** Still rate limited after the configured retries. */
  | "rate_limited"
  /** 5xx or no answer after the configured retries. */
  | "unavailable"
  /** The forge answered something the schema does not describe. */
  | "invalid_response";

export class ForgeError extends Error {
  override readonly name = "ForgeError";
  readonly code: ForgeErrorCode;
  readonly forge: ForgeKind;
  readonly status: number | null;

  constructor(forge: ForgeKind, code: ForgeErrorCode, message: string, status: number | null = null) {
    super(message);
    this.forge = forge;
    this.code = code;
    this.status = status;
  }
}

/** The error code of an HTTP status a forge answered with. */
export function codeOfStatus(status: number): ForgeErrorCode {
  if (status === 401) return "unauthorized";
  if (status === 403) return "forbidden";
  if (status === 404) return "not_found";
  if (status === 429) return "rate_limited";
  if (status >= 500) return "unavailable";
  return "conflict";
}
