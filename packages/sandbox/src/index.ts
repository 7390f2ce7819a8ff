/**
 * @overseer/sandbox — runs an untrusted agent CLI confined to its checkout.
 *
 * Drivers: `bwrap` (the default; Linux), `none` (unsafe, refused by default). Callers
 * `prepare()` a command, spawn it detached (own process group) with exactly the returned
 * file/args/env/cwd, `stop()` it on timeout and `cleanup()` after exit; see `PreparedCommand`.
 */

export { SANDBOX_CONTROL_MOUNT, SANDBOX_HOME, SANDBOX_RUNTIME_MOUNT } from "./bwrap-argv-builder.ts";
export {
  BWRAP_DEFAULT_GID,
  BWRAP_DEFAULT_UID,
  BwrapDriver,
  type BwrapDriverOptions,
} from "./bwrap-driver.ts";
export {
  type CreateSandboxDriverOptions,
  createSandboxDriver,
  type DriverAvailability,
  type DriverDetection,
  defaultDriverName,
  detectDriver,
  isUnsafeNoneAllowed,
  UNSAFE_NONE_ENV,
} from "./driver-factory.ts";
export { EgressProxy } from "./egress-proxy.ts";
export {
  type EgressDecision,
  type EgressProxyOptions,
  type ResolvedEgressProxyOptions,
  resolveEgressProxyOptions,
} from "./egress-proxy-options.ts";
export { isForbiddenAddress } from "./forbidden-address.ts";
export { GvisorDriver, type GvisorDriverOptions } from "./gvisor-driver.ts";
export { type CachedImage, ImageCache, type ImageCacheOptions } from "./image-cache.ts";
export {
  ImagePullError,
  type ImageRuntimeConfig,
  type ImageToolOptions,
  resolveImageDigest,
} from "./image-pull.ts";
export { LAUNCHER_SETUP_FAILED_EXIT } from "./launcher-script.ts";
export { NoneDriver } from "./none-driver.ts";
export { type RunSandboxInput, runSandboxSpec } from "./run-sandbox-spec.ts";
export type {
  LimitEnforcement,
  PreparedCommand,
  ProbeCheck,
  ProbeReport,
  SandboxCapabilities,
  SandboxDriver,
  StopOptions,
} from "./sandbox-driver.ts";
export {
  SandboxError,
  SandboxSetupError,
  SandboxSpecError,
  SandboxUnavailableError,
  UnsafeSandboxRefusedError,
} from "./sandbox-errors.ts";
export {
  CONTAINER_DETECTION_DEFAULTS,
  type ContainerDetection,
  detectContainer,
  detectSandboxHost,
  type SandboxHost,
} from "./sandbox-host.ts";
export {
  RUN_PREPARED_DEFAULTS,
  type RunPreparedOptions,
  type RunPreparedResult,
  runPreparedCommand,
} from "./sandbox-runner.ts";
export {
  type NetworkPolicy,
  parseSandboxSpec,
  type ResolvedSandboxSpec,
  type SandboxLimits,
  type SandboxSpec,
  sandboxSpecSchema,
} from "./sandbox-spec-schema.ts";
export {
  measureSpawnOverhead,
  percentile,
  type SpawnOverheadOptions,
  type SpawnOverheadResult,
} from "./spawn-overhead-benchmark.ts";
