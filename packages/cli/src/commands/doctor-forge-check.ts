/**
 * `doctor`'s forge check: for a project with a `forge` (required in `landing.mode:
 * pull_request`), asks the forge through the project's adapter (`checkTokenRights()` of
 * `@overseer/forge`) which rights its token has on the repository, and names every missing one
 * with what to grant. A missing right, a refused token or a forge that does not answer fails
 * the check (doctor exits 1); each failure says what to do.
 *
 * The token is the stored `forge.token` (or a GitHub App's `forge.app`, whose installation
 * token the adapter mints). Through the gateway it comes redacted (the gateway never serves
 * secrets): then the init environment's token (OVERSEER_FORGE_TOKEN, or the forge's own
 * variable; GITHUB_APP_PRIVATE_KEY for an App) is used when set, else the check says where to run it.
 */
import { createForgeAdapter, ForgeError, type TokenRights } from "@overseer/forge";
import { REDACTED } from "@overseer/input-errors";
import type { ForgeAuth, RunnerConfig } from "@overseer/project-config";
import { FORGE_TOKEN_ENV, FORGE_TOKEN_OVERRIDE_ENV, GITHUB_APP_KEY_ENV } from "./init-forge.ts";

/** One doctor line (the shape of doctor-command's DoctorCheck). */
export interface ForgeCheck {
  name: string;
  status: "ok" | "warn" | "fail";
  detail: string;
  required: boolean;
  fix?: string;
}

/** Retries of doctor's forge calls: one quick retry, so an unreachable forge answers in seconds. */
const DOCTOR_FORGE_RETRY = Object.freeze({ retries: 1, baseDelayMs: 250, maxDelayMs: 5_000 });

/**
 * The project's forge checks; `githubWriteIntervalMs` paces GitHub writes as the coordinator
 * does (`OVERSEER_GITHUB_WRITE_INTERVAL_MS`, default 1000).
 */
export async function forgeRightsChecks(
  projectId: string,
  config: RunnerConfig,
  env: Readonly<Record<string, string | undefined>>,
  timeoutMs: number,
  githubWriteIntervalMs?: number,
): Promise<ForgeCheck[]> {
  const forge = config.forge;
  if (!forge) return [];
  const name = `${projectId}: forge ${forge.kind}`;
  const where = `${forge.url} (${forge.repository})`;
  // Pull requests are how work lands: without the rights nothing lands. In push mode the forge
  // is informational, so its problems only warn.
  const required = config.landing.mode === "pull_request";
  const failed = (detail: string, fix: string): ForgeCheck => ({
    name,
    status: required ? "fail" : "warn",
    detail,
    required,
    fix,
  });
  const auth = doctorAuth(forge, env);
  if (auth === null)
    return [
      failed(
        `the gateway never serves ${forge.app ? "forge.app.private_key" : "forge.token"}, so its rights on ${where} cannot be checked from here`,
        `run \`overseer doctor\` on the coordinator's host with DATABASE_URL set, or set ${forge.app ? GITHUB_APP_KEY_ENV : `${FORGE_TOKEN_ENV[forge.kind]} (or ${FORGE_TOKEN_OVERRIDE_ENV})`} here to the project's ${forge.app ? "App key" : "token"}`,
      ),
    ];
  let rights: TokenRights;
  try {
    const adapter = createForgeAdapter({
      forge: forge.kind,
      url: forge.url,
      repository: forge.repository,
      auth,
      retry: DOCTOR_FORGE_RETRY,
      githubWriteIntervalMs,
    });
    rights = await withTimeout(adapter.checkTokenRights(), timeoutMs, forge.url);
  } catch (error) {
    return [failed(`${where}: ${describeFailure(error)}`, failureFix(error, forge.kind, forge.url))];
  }
  if (rights.missing.length === 0)
    return [
      {
        name,
        status: "ok",
        detail: `${forge.app ? `GitHub App installation ${forge.app.installation_id}` : "token"} of ${rights.login} has ${rights.granted.join(", ")} on ${where}`,
        required,
      },
    ];
  return [
    failed(
      `token of ${rights.login} on ${where} lacks ${rights.missing.join(", ")}${rights.granted.length > 0 ? ` (has ${rights.granted.join(", ")})` : ""}`,
      `${rights.advice.join(" ")} Then update the token: set it in ${FORGE_TOKEN_ENV[forge.kind]} and run \`overseer init --project ${projectId} --update --forge ${forge.kind} --forge-url ${forge.url} --forge-repo ${forge.repository}\``,
    ),
  ];
}

/** The stored credentials, or (redacted by the gateway) the ones this environment holds; null when neither. */
function doctorAuth(
  forge: NonNullable<RunnerConfig["forge"]>,
  env: Readonly<Record<string, string | undefined>>,
): ForgeAuth | null {
  if (forge.app) {
    const privateKey =
      forge.app.private_key === REDACTED ? env[GITHUB_APP_KEY_ENV]?.trim() || null : forge.app.private_key;
    return privateKey === null
      ? null
      : { kind: "app", appId: forge.app.id, installationId: forge.app.installation_id, privateKey };
  }
  const token =
    forge.token === REDACTED || forge.token === undefined ? environmentToken(forge.kind, env) : forge.token;
  return token === null ? null : { kind: "token", token };
}

function environmentToken(
  kind: keyof typeof FORGE_TOKEN_ENV,
  env: Readonly<Record<string, string | undefined>>,
): string | null {
  return env[FORGE_TOKEN_OVERRIDE_ENV]?.trim() || env[FORGE_TOKEN_ENV[kind]]?.trim() || null;
}

class ForgeTimeout extends Error {}

async function withTimeout<T>(promise: Promise<T>, ms: number, url: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ForgeTimeout(`no answer from ${url} within ${ms / 1000} s`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function describeFailure(error: unknown): string {
  if (error instanceof ForgeTimeout) return error.message;
  if (error instanceof ForgeError)
    return `${error.code}${error.status ? ` (HTTP ${error.status})` : ""}: ${error.message}`;
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const detail = cause?.code ?? cause?.message;
  return `unreachable: ${(error as Error).message}${detail ? ` (${detail})` : ""}`;
}

function failureFix(error: unknown, kind: keyof typeof FORGE_TOKEN_ENV, url: string): string {
  if (error instanceof ForgeError && error.code === "unauthorized")
    return `the forge refused the token (expired, revoked or mistyped): create a new one with the rights README "Land through pull requests" lists, set ${FORGE_TOKEN_ENV[kind]} and rerun \`overseer init --update --forge ${kind} --forge-url ${url}\``;
  if (error instanceof ForgeError && error.code === "rate_limited")
    return "the forge rate-limits this token: wait for its reset and run doctor again";
  if (error instanceof ForgeError && error.code === "invalid_response")
    return `check forge.url: ${url} answered something that is not ${kind}'s API (for GitHub Enterprise Server give the web URL; its API is under /api/v3)`;
  return `check that ${url} is the forge's web URL and reachable from this host (proxy, DNS, firewall), then run doctor again`;
}
