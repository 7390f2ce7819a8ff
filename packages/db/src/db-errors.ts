/** Another transaction changed what this one read; nothing was written. Retry from a fresh read. */
export class ConflictError extends Error {
  override readonly name = "ConflictError";
  constructor(
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

/** The caller no longer holds the project's lease; it must stop scheduling that project. */
export class LeaseLostError extends Error {
  override readonly name = "LeaseLostError";
  constructor(
    readonly projectId: string,
    readonly owner: string,
  ) {
    super(`Coordinator ${owner} no longer holds the lease on project ${projectId}.`);
  }
}

/**
 * The project was not in a state the caller allowed (`ApplyOptions.projectStatusIn`) when the
 * transaction read it; nothing was written.
 */
export class ProjectStatusRefusedError extends Error {
  override readonly name = "ProjectStatusRefusedError";
  constructor(
    readonly projectId: string,
    readonly status: string,
    readonly allowed: readonly string[],
  ) {
    super(
      `Project ${projectId} is ${status}; this change was allowed only while it is ${allowed.join(" or ")}.`,
    );
  }
}

export class NotFoundError extends Error {
  override readonly name = "NotFoundError";
}

const UNIQUE_VIOLATION = "23505";

export function isUniqueViolation(error: unknown): boolean {
  return (
    typeof error === "object" && error !== null && (error as { code?: string }).code === UNIQUE_VIOLATION
  );
}

/** 40001 (serialization failure) and 40P01 (deadlock): a concurrent transaction won; retry. */
export function isSerializationFailure(error: unknown): boolean {
  const code = typeof error === "object" && error !== null ? (error as { code?: string }).code : undefined;
  return code === "40001" || code === "40P01";
}
