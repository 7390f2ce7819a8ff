import type { TokenScope } from "@overseer/db";
import type { ProjectStatus } from "@overseer/domain";

/** The verified caller of a request. The token's secret never leaves the auth middleware. */
export interface AuthenticatedToken {
  readonly id: string;
  readonly name: string;
  readonly scope: TokenScope;
}

/** Hono context variables set by the gateway middleware. */
export type GatewayEnv = {
  Variables: {
    /** `X-Request-Id` of the request (echoed when valid, generated otherwise). */
    requestId: string;
    /** Set by the auth middleware on every route except the public page shells. */
    token: AuthenticatedToken | undefined;
    /**
     * Set by the authorization guard on routes whose scope depends on the project's state: the
     * states this token may act in, for the handler's transition to re-check (`projectStatusIn`).
     */
    projectStatuses: readonly ProjectStatus[] | undefined;
  };
};

/** How operator actions are attributed in events and answers: the token's name. */
export function actorOf(token: AuthenticatedToken | undefined): string {
  return token ? `api:${token.name}` : "api:anonymous";
}
