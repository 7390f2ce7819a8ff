/** Exit codes (docs/http-api.md): 0 ok, 1 failure, 2 usage or configuration error. */
export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

/** Wrong arguments or configuration: exit 2, the message says what to type instead. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

/** The command ran and failed: exit 1. */
export class CommandFailed extends Error {
  override readonly name = "CommandFailed";
}
