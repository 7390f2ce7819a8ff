import type { ConfigIssue } from "@overseer/input-errors";
import { ConfigError, describeReceived, expectedErrorMap } from "@overseer/input-errors";
import type { ServiceSettings } from "./service-settings.ts";
import { type SettingSpec, SPECS } from "./service-settings-schema.ts";
import { MIN_TASK_BYTES } from "./setting-value-schemas.ts";

/**
 * Reads and validates every setting from `env`. Throws `ConfigError` (source `environment`)
 * listing every invalid variable at once.
 */
export function loadSettings(env: NodeJS.ProcessEnv = process.env): ServiceSettings {
  const values: Record<string, unknown> = {};
  const issues: ConfigIssue[] = [];
  for (const [key, spec] of Object.entries(SPECS) as [keyof ServiceSettings, SettingSpec<unknown>][]) {
    const raw = normalizeRaw(env[spec.name]);
    const input = raw ?? (typeof spec.fallback === "function" ? spec.fallback() : spec.fallback);
    if (input === undefined) {
      values[key] = undefined;
      continue;
    }
    const result = spec.schema.safeParse(input, { error: expectedErrorMap });
    if (result.success) values[key] = result.data;
    else
      issues.push({
        path: spec.name,
        expected: result.error.issues[0]?.message ?? "a valid value",
        received: describeSetting(spec, input),
      });
  }
  issues.push(...crossCheck(values, env));
  if (issues.length > 0)
    throw new ConfigError(
      "environment",
      issues,
      "Fix or unset these variables; the configuration reference lists every variable and its default.",
    );
  values.overseerUrl ??= defaultOverseerUrl(values.gatewayHost as string, values.gatewayPort as number);
  return Object.freeze(values) as unknown as ServiceSettings;
}

/** Relationships between variables, checked only when both sides parsed. */
function crossCheck(values: Record<string, unknown>, env: NodeJS.ProcessEnv): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const { sandbox, sandboxUnsafeNone } = values;
  issues.push(
    ...intervalBelow(
      values,
      "heartbeatIntervalMs",
      "leaseTtlMs",
      "so a live owner renews before its lease expires",
    ),
  );
  const { coordinatorIdleTxMs, leaseTtlMs } = values;
  if (
    typeof coordinatorIdleTxMs === "number" &&
    typeof leaseTtlMs === "number" &&
    coordinatorIdleTxMs > leaseTtlMs
  ) {
    issues.push({
      path: SPECS.coordinatorIdleTxMs.name,
      expected: `at most OVERSEER_LEASE_TTL_MS (${leaseTtlMs}), so a lease a cut-off coordinator's claim holds is taken over within the TTL`,
      received: String(coordinatorIdleTxMs),
    });
  }
  const { maxOutputBytes, liveLogEntries } = values;
  if (
    typeof maxOutputBytes === "number" &&
    typeof liveLogEntries === "number" &&
    maxOutputBytes / liveLogEntries < 16
  ) {
    issues.push({
      path: SPECS.liveLogEntries.name,
      expected: `at most ${Math.floor(maxOutputBytes / 16)} entries (16 bytes each within OVERSEER_MAX_OUTPUT_BYTES, ${maxOutputBytes})`,
      received: String(liveLogEntries),
    });
  }
  issues.push(
    ...intervalBelow(
      values,
      "workerLockRenewMs",
      "workerLockMs",
      "so a live worker renews its job locks before they lapse",
    ),
  );
  const { maxImportTasks, maxBodyBytes } = values;
  if (
    typeof maxImportTasks === "number" &&
    typeof maxBodyBytes === "number" &&
    maxImportTasks * MIN_TASK_BYTES > maxBodyBytes
  ) {
    issues.push({
      path: SPECS.maxImportTasks.name,
      expected: `at most ${Math.floor(maxBodyBytes / MIN_TASK_BYTES)} tasks (${MIN_TASK_BYTES} bytes each must fit in OVERSEER_MAX_BODY_BYTES, ${maxBodyBytes}), or a larger body limit`,
      received: String(maxImportTasks),
    });
  }
  const { redisClusterNodes, redisSentinels } = values;
  if (
    Array.isArray(redisClusterNodes) &&
    redisClusterNodes.length > 0 &&
    Array.isArray(redisSentinels) &&
    redisSentinels.length > 0
  ) {
    issues.push({
      path: SPECS.redisSentinels.name,
      expected: `unset while ${SPECS.redisClusterNodes.name} is set: a Redis Cluster fails over by itself, Sentinel watches a single primary`,
      received: describeReceived(normalizeRaw(env[SPECS.redisSentinels.name])),
    });
  }
  if (sandbox === "none" && sandboxUnsafeNone === false) {
    issues.push({
      path: SPECS.sandbox.name,
      expected: "bwrap, or none together with OVERSEER_SANDBOX_UNSAFE_NONE=true",
      received: describeReceived(normalizeRaw(env[SPECS.sandbox.name])),
      hint: "the none driver runs agents without isolation",
    });
  }
  return issues;
}

/** A renewal interval (`shorter`) must stay below the lifetime it renews (`longer`). */
function intervalBelow(
  values: Record<string, unknown>,
  shorter: keyof ServiceSettings,
  longer: keyof ServiceSettings,
  why: string,
): ConfigIssue[] {
  const interval = values[shorter];
  const lifetime = values[longer];
  if (typeof interval !== "number" || typeof lifetime !== "number" || interval < lifetime) return [];
  return [
    {
      path: SPECS[shorter].name,
      expected: `an interval below ${SPECS[longer].name} (${lifetime}) ${why}`,
      received: String(interval),
    },
  ];
}

function normalizeRaw(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed === undefined || trimmed === "" ? undefined : trimmed;
}

/** Received text for a setting: secrets hidden, URL passwords masked. */
function describeSetting(spec: SettingSpec<unknown>, raw: string): string {
  if (spec.secret) return `a value of ${raw.length} characters (secret, hidden)`;
  return describeReceived(raw.replace(/(\/\/[^/:@]*:)[^@/]*@/, "$1[REDACTED]@"));
}

function defaultOverseerUrl(host: string, port: number): string {
  const reachable = host === "0.0.0.0" || host === "::" || host === "[::]" ? "127.0.0.1" : host;
  const bracketed = reachable.includes(":") && !reachable.startsWith("[") ? `[${reachable}]` : reachable;
  return `http://${bracketed}:${port}`;
}

/**
 * For service entry points: the settings, or — on a bad value — every problem on stderr and
 * exit code 2 (configuration error), before anything starts.
 */
export function loadSettingsOrExit(service: string, env: NodeJS.ProcessEnv = process.env): ServiceSettings {
  try {
    return loadSettings(env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${service}: refusing to start: ${error.message}\n`);
    process.exit(2);
  }
}
