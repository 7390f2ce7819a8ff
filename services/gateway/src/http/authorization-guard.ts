import {
  type Access,
  AUTHORIZATION_TABLE,
  type AuthorizationRule,
  type OperationId,
  projectStatusesAllowed,
  requiredAccess,
  scopeGrants,
} from "@overseer/api-contract";
import { type Db, getProject } from "@overseer/db";
import { PROJECT_ID_PATTERN, type ProjectStatus } from "@overseer/domain";
import type { MiddlewareHandler } from "hono";
import type { GatewayEnv } from "../gateway-env.ts";
import { ApiError } from "./api-error.ts";
import { unauthorized } from "./request-guards.ts";

/**
 * The one place the gateway decides scopes: every route's middleware is `authorize(id)` of its
 * operation id, and the decision is the authorization table's (`@overseer/api-contract`,
 * docs/http-api.md). It runs after authentication and before validation, so a token learns
 * nothing about the input rules of a route it may not call:
 *
 *   public row → next · no token → 401 · scope below the row's → 403
 *   · row with project states → the project's current state may raise the scope (403)
 *
 * For a row with project states the guard also leaves, in `projectStatuses`, the states this
 * token may act in; the handler passes them to its transition, which re-checks them inside its
 * own transaction (`projectStatusIn`), so a stop landing between this check and the write
 * cannot be undone by a lower scope either.
 */
export function authorizationGuard(db: Db): (operationId: OperationId) => MiddlewareHandler<GatewayEnv> {
  return (operationId) => {
    const rule: AuthorizationRule = AUTHORIZATION_TABLE[operationId];
    return async (c, next) => {
      c.set("projectStatuses", undefined);
      if (rule.scope === "public") return next();
      const token = c.get("token");
      if (!token) throw unauthorized("unauthorized", "This route needs a bearer token.");
      if (!scopeGrants(token.scope, rule.scope)) throw forbidden(rule.scope, token);
      if (rule.byProjectStatus) {
        const status = await projectStatusOf(db, c.req.param("id"));
        if (status !== undefined) {
          const needed = requiredAccess(rule, status);
          if (needed !== "public" && !scopeGrants(token.scope, needed))
            throw forbidden(needed, token, status);
        }
        c.set("projectStatuses", projectStatusesAllowed(rule, token.scope));
      }
      await next();
    };
  };
}

/** The project's status, or undefined when the id is malformed or unknown (the handler answers those). */
async function projectStatusOf(db: Db, id: string | undefined): Promise<ProjectStatus | undefined> {
  if (id === undefined || !PROJECT_ID_PATTERN.test(id)) return undefined;
  return (await getProject(db, id))?.status;
}

function forbidden(
  required: Access,
  token: { name: string; scope: string },
  status?: ProjectStatus,
): ApiError {
  const where = status ? ` while the project is ${status}` : "";
  return new ApiError(
    403,
    "forbidden",
    `This route needs a token with scope "${required}"${where}; this token (${token.name}) has "${token.scope}".`,
    { required_scope: required, token_scope: token.scope, ...(status ? { project_status: status } : {}) },
  );
}
