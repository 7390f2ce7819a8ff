import { createRedactor, REDACTED } from "@overseer/input-errors";
import { parseRunnerConfig, redactRunnerConfig, runnerConfigSecretValues } from "@overseer/project-config";

/**
 * Secrets never leave the gateway: runner configs are answered with secret values (`secrets`
 * and `forge.token`) replaced,
 * and stored prompts and outputs pass through a redactor built from the project's secret
 * values (plus well-known token shapes). A stored config that no longer parses is still
 * redacted from its raw `secrets` object, so a bad row cannot leak through the error path.
 */
export function projectSecretValues(runnerConfig: unknown): string[] {
  try {
    return runnerConfigSecretValues(parseRunnerConfig(runnerConfig, "stored runner config"));
  } catch {
    const config = runnerConfig as {
      secrets?: unknown;
      forge?: { token?: unknown; app?: { private_key?: unknown } | null };
    } | null;
    const raw = config?.secrets;
    const values =
      raw !== null && typeof raw === "object"
        ? Object.values(raw).filter((v): v is string => typeof v === "string")
        : [];
    const forge = config?.forge !== null && typeof config?.forge === "object" ? config.forge : undefined;
    const forgeSecrets = [forge?.token, forge?.app?.private_key].filter(
      (v): v is string => typeof v === "string" && v !== "",
    );
    return [...values, ...forgeSecrets];
  }
}

export function projectRedactor(runnerConfig: unknown): (text: string) => string {
  return createRedactor(projectSecretValues(runnerConfig));
}

/** The effective config (defaults applied) with secrets redacted; the raw config, redacted, if it does not parse. */
export function redactedRunnerConfig(runnerConfig: unknown): Record<string, unknown> {
  try {
    return redactRunnerConfig(parseRunnerConfig(runnerConfig, "stored runner config")) as unknown as Record<
      string,
      unknown
    >;
  } catch {
    if (runnerConfig === null || typeof runnerConfig !== "object" || Array.isArray(runnerConfig)) return {};
    const copy: Record<string, unknown> = { ...(runnerConfig as Record<string, unknown>) };
    if (copy.secrets && typeof copy.secrets === "object") {
      copy.secrets = Object.fromEntries(Object.keys(copy.secrets).map((k) => [k, REDACTED]));
    }
    if (copy.forge && typeof copy.forge === "object" && !Array.isArray(copy.forge)) {
      const forge = copy.forge as Record<string, unknown>;
      const app = forge.app;
      copy.forge = {
        ...forge,
        token: REDACTED,
        ...(app && typeof app === "object" ? { app: { ...app, private_key: REDACTED } } : {}),
      };
    }
    return copy;
  }
}
