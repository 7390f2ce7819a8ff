import { ProjectListSchema } from "@overseer/api-contract";
import { settingsFrom } from "./cli-context.ts";
import type { CliIo } from "./cli-io.ts";
import { onlyProject } from "./commands/project-selector.ts";
import { GatewayClient, toCliError } from "./gateway-client.ts";

/**
 * Which path a verb that reads or changes project state takes (docs/http-api.md "CLI"):
 *
 * - **gateway** when `OVERSEER_URL` or `OVERSEER_TOKEN` is set: every request is authenticated
 *   with the token, decided by its scope and recorded by the API, against the cluster that
 *   gateway serves. `DATABASE_URL` is then never used, even when it is set too, so a terminal
 *   configured for a gateway can never write to another (or the default) database. A gateway
 *   without a token is a usage error, never a fallback to the database.
 * - **local** otherwise: Postgres at `DATABASE_URL` (default postgres://…/overseer), the path of
 *   the cluster host (`up`, `migrate`, a first `init` before any gateway runs).
 *
 * Each verb says on stderr which one it used (`describeTarget`).
 */
export type CommandTarget =
  | { readonly kind: "gateway"; readonly client: GatewayClient }
  | { readonly kind: "local"; readonly database: string };

export function gatewayConfigured(env: NodeJS.ProcessEnv): boolean {
  return Boolean(env.OVERSEER_URL?.trim() || env.OVERSEER_TOKEN?.trim());
}

export function commandTarget(io: CliIo): CommandTarget {
  if (gatewayConfigured(io.env)) return { kind: "gateway", client: GatewayClient.fromIo(io) };
  return { kind: "local", database: databaseLabel(settingsFrom(io).databaseUrl) };
}

/** `host:port/db` of a Postgres URL, without credentials. */
export function databaseLabel(databaseUrl: string): string {
  const url = new URL(databaseUrl);
  return `${url.host}${url.pathname}`;
}

/** The line that names the path a verb took (printed on stderr, so scripts' stdout stays clean). */
export function describeTarget(target: CommandTarget): string {
  return target.kind === "gateway"
    ? `via the gateway at ${target.client.baseUrl} (OVERSEER_URL)`
    : `via the local database ${target.database} (DATABASE_URL; set OVERSEER_URL and OVERSEER_TOKEN to go through a gateway)`;
}

/** Runs a verb body that talks to the gateway, mapping its errors to exit codes. */
export async function withGateway<T>(body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (error) {
    throw toCliError(error);
  }
}

/** `--project P`, or the only project the gateway knows. */
export async function selectGatewayProject(
  client: GatewayClient,
  requested: string | undefined,
): Promise<string> {
  if (requested) return requested;
  const { projects } = await client.get("/api/v1/projects", ProjectListSchema);
  return onlyProject(projects);
}
