import { SANDBOX_DRIVER_NAMES, type SandboxDriverName } from "@overseer/run-contract";
import { BwrapDriver, type BwrapDriverOptions } from "./bwrap-driver.ts";
import { GvisorDriver, type GvisorDriverOptions } from "./gvisor-driver.ts";
import { RUNSC_INSTALL_FIX } from "./gvisor-runsc.ts";
import { NoneDriver } from "./none-driver.ts";
import type { SandboxDriver } from "./sandbox-driver.ts";
import { SandboxSpecError, UnsafeSandboxRefusedError } from "./sandbox-errors.ts";

/**
 * Choosing a driver. `none` is refused unless the operator opted in explicitly, either with the
 * worker environment switch `OVERSEER_SANDBOX_UNSAFE_NONE=1` or the option `allowUnsafeNone`.
 */

/** Environment switch that allows the unsafe `none` driver. */
export const UNSAFE_NONE_ENV = "OVERSEER_SANDBOX_UNSAFE_NONE";

export interface CreateSandboxDriverOptions {
  /** Allow the unsafe `none` driver. Default false (also allowed by `OVERSEER_SANDBOX_UNSAFE_NONE=1`). */
  allowUnsafeNone?: boolean;
  /** Environment the unsafe switch is read from. Default `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
  bwrap?: BwrapDriverOptions;
  gvisor?: GvisorDriverOptions;
}

/** Whether `none` is allowed by the option or the environment switch. */
export function isUnsafeNoneAllowed(options: CreateSandboxDriverOptions = {}): boolean {
  const env = options.env ?? process.env;
  return options.allowUnsafeNone === true || env[UNSAFE_NONE_ENV] === "1";
}

export function createSandboxDriver(
  name: SandboxDriverName,
  options: CreateSandboxDriverOptions = {},
): SandboxDriver {
  switch (name) {
    case "bwrap":
      return new BwrapDriver(options.bwrap);
    case "gvisor":
      return new GvisorDriver(options.gvisor);
    case "none":
      if (!isUnsafeNoneAllowed(options)) throw new UnsafeSandboxRefusedError();
      return new NoneDriver();
    default:
      throw new SandboxSpecError(
        `sandbox driver: expected one of ${SANDBOX_DRIVER_NAMES.join(", ")}, received ${JSON.stringify(name)}`,
      );
  }
}

/** `bwrap`: the one real driver (Linux only; elsewhere nothing confines runs). */
export function defaultDriverName(): SandboxDriverName {
  return "bwrap";
}

export interface DriverAvailability {
  available: boolean;
  version: string | null;
  /** Why it is unavailable or refused, or what to know about it. */
  detail: string;
}

export interface DriverDetection {
  /** The platform default (`defaultDriverName()`). */
  defaultDriver: SandboxDriverName;
  /** The default when it is available; null otherwise. */
  recommended: SandboxDriverName | null;
  drivers: Record<SandboxDriverName, DriverAvailability>;
}

/** Reports which drivers are installed on this host (runs `bwrap --version`, `runsc --version`). */
export async function detectDriver(options: CreateSandboxDriverOptions = {}): Promise<DriverDetection> {
  const bwrapVersion = await new BwrapDriver(options.bwrap).version();
  const gvisor = new GvisorDriver(options.gvisor);
  const [runscVersion, platform] = await Promise.all([gvisor.version(), gvisor.platform()]);
  const unsafeAllowed = isUnsafeNoneAllowed(options);
  const drivers: Record<SandboxDriverName, DriverAvailability> = {
    bwrap: {
      available: bwrapVersion !== null,
      version: bwrapVersion,
      detail:
        bwrapVersion !== null
          ? "bubblewrap found"
          : process.platform !== "linux"
            ? "bwrap needs Linux"
            : "bubblewrap not found (install the bubblewrap package)",
    },
    gvisor: {
      available: runscVersion !== null,
      version: runscVersion,
      detail:
        runscVersion !== null
          ? `runsc found (platform ${platform}${process.getuid?.() === 0 ? "" : ", rootless"})`
          : `runsc not found (${RUNSC_INSTALL_FIX})`,
    },
    none: {
      available: unsafeAllowed,
      version: null,
      detail: unsafeAllowed
        ? "UNSAFE: allowed by the operator; agents run with the worker's privileges"
        : `refused unless ${UNSAFE_NONE_ENV}=1 or allowUnsafeNone is set`,
    },
  };
  const defaultDriver = defaultDriverName();
  return { defaultDriver, recommended: drivers[defaultDriver].available ? defaultDriver : null, drivers };
}
