/**
 * The few error classes the sandbox package throws. Each sets `name` so callers (worker, `doctor`)
 * can branch on the class without string matching, and each message says what to do next.
 */

/** Base class for every error raised by `@overseer/sandbox`. */
export class SandboxError extends Error {
  override name = "SandboxError";
}

/**
 * The `none` driver was requested without the explicit unsafe switch. Running an agent with no
 * sandbox gives it the worker's privileges (root on a typical worker host), so it is refused by
 * default.
 */
export class UnsafeSandboxRefusedError extends SandboxError {
  override name = "UnsafeSandboxRefusedError";
  constructor() {
    super(
      'sandbox driver "none" runs agents with the worker\'s own privileges and is refused by default; ' +
        "set OVERSEER_SANDBOX_UNSAFE_NONE=1 in the worker environment (or pass the option allowUnsafeNone: true " +
        'to createSandboxDriver) to accept that risk, or use the "bwrap" driver',
    );
  }
}

/** A `SandboxSpec` (or driver option) failed validation: the message names the field, expected and received. */
export class SandboxSpecError extends SandboxError {
  override name = "SandboxSpecError";
}

/** The driver's backend is missing on this host (no bwrap binary, unsupported platform). */
export class SandboxUnavailableError extends SandboxError {
  override name = "SandboxUnavailableError";
}

/** Host-side preparation failed (cgroup creation, runtime directory, egress proxy start). */
export class SandboxSetupError extends SandboxError {
  override name = "SandboxSetupError";
}
