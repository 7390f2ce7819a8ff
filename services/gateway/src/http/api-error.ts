import { ConflictError, NotFoundError, ProjectStatusRefusedError } from "@overseer/db";
import { type DomainErrorCode, isDomainError } from "@overseer/domain";
import { ConfigError } from "@overseer/input-errors";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { DependencyTimeoutError } from "./with-timeout.ts";

/**
 * Every error the gateway answers is `{ error: { code, message, details } }` (docs/http-api.md), plus
 * route-specific top-level fields when an Argus client expects them (`application_status`,
 * `resolution`, `pending_questions`). `code` is stable and machine-readable; `message` says
 * what was wrong and what to do.
 */
export class ApiError extends Error {
  override readonly name = "ApiError";
  constructor(
    readonly status: ContentfulStatusCode,
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
    /** Extra top-level fields of the error body. */
    readonly extra: Record<string, unknown> = {},
    /** Extra response headers (Retry-After). */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }

  body(): Record<string, unknown> {
    return { error: { code: this.code, message: this.message, details: this.details }, ...this.extra };
  }
}

const DOMAIN_STATUS: Record<DomainErrorCode, ContentfulStatusCode> = {
  not_found: 404,
  invalid_transition: 409,
  stale: 409,
  conflict: 409,
  project_inactive: 409,
  already_exists: 409,
  invalid_settings: 422,
  invalid_option: 422,
  note_required: 422,
};

const HTTP_CODES: Partial<Record<number, string>> = {
  400: "malformed_request",
  413: "payload_too_large",
  415: "unsupported_media_type",
};

/** The ApiError for a known failure, or null for an unexpected one (answered 500). */
export function toApiError(error: unknown): ApiError | null {
  if (error instanceof ApiError) return error;
  if (isDomainError(error)) {
    const extra = error.code === "stale" ? staleExtra(error.details) : {};
    return new ApiError(DOMAIN_STATUS[error.code], error.code, error.message, error.details, extra);
  }
  if (error instanceof NotFoundError) return new ApiError(404, "not_found", error.message);
  if (error instanceof ProjectStatusRefusedError) {
    return new ApiError(
      403,
      "forbidden",
      `${error.message} Ask a token whose scope allows it (docs/http-api.md).`,
      {
        project_status: error.status,
        allowed_project_statuses: error.allowed,
      },
    );
  }
  if (error instanceof ConflictError) {
    return new ApiError(
      409,
      "conflict",
      `${error.message} Another change to the same task landed first and retries did not settle it; reload and try again.`,
      error.details,
    );
  }
  if (error instanceof ConfigError) {
    return new ApiError(422, "invalid_config", error.message, { source: error.source, issues: error.issues });
  }
  if (error instanceof DependencyTimeoutError) {
    return new ApiError(
      503,
      "unavailable",
      `${error.message}; retry shortly (GET /readyz shows which dependency is down).`,
      {
        dependency: error.dependency,
      },
    );
  }
  if (isConnectionError(error)) {
    return new ApiError(
      503,
      "unavailable",
      "A dependency (Postgres or Redis) is unreachable; retry shortly (GET /readyz shows which).",
    );
  }
  if (error instanceof HTTPException) {
    const status = error.status as ContentfulStatusCode;
    const code = HTTP_CODES[status] ?? `http_${status}`;
    const message =
      status === 400 && /json/i.test(error.message)
        ? "The request body is not valid JSON; send a JSON object with Content-Type: application/json."
        : status === 415
          ? "Unsupported Content-Type; send the body as application/json."
          : error.message || `HTTP ${status}`;
    return new ApiError(status, code, message);
  }
  return null;
}

/** Argus clients read `application_status` and the resolution that holds. */
function staleExtra(details: Record<string, unknown>): Record<string, unknown> {
  return {
    resolved: false,
    application_status: "stale",
    resolution: {
      resolution_id: details.resolution_id ?? null,
      selected_option: details.selected_option ?? null,
      note: details.note ?? null,
    },
  };
}

/** Connection-level failures of node-postgres and ioredis (not bugs, not bad input). */
const CONNECTION_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "CONNECT_TIMEOUT",
  "57P01",
  "57P02",
  "57P03",
  "3D000",
]);

function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === "string" && CONNECTION_CODES.has(code)) return true;
  const message = error instanceof Error ? error.message : "";
  if (typeof code === "string" && code.startsWith("08")) return true;
  return /Connection is closed|Stream isn't writeable|max retries per request|Connection terminated|not queryable|timeout exceeded when trying to connect/i.test(
    message,
  );
}
