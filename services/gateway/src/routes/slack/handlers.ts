import { randomUUID } from "node:crypto";
import {
  AUTHORIZATION_TABLE,
  type AuthorizationRule,
  type DecisionButtonValue,
  projectStatusesAllowed,
  requiredAccess,
  scopeGrants,
} from "@overseer/api-contract";
import { findActiveApiToken, getDecision } from "@overseer/db";
import { type Decision, isDomainError, normaliseOptionId } from "@overseer/domain";
import { ApiError } from "../../http/api-error.ts";
import { existingProject, type GatewayHandler, type RouteContext } from "../route-kit.ts";
import type { receiveSlackInteractionRoute } from "./definitions.ts";
import {
  type BlockActionsPayload,
  BlockActionsPayloadSchema,
  decisionAction,
  decisionNote,
  resolvedMessage,
} from "./slack-interaction.ts";
import { verifySlackSignature } from "./slack-signature.ts";

/** A click acts under the same authorization-table row as the HTTP resolve route. */
const RESOLVE_RULE: AuthorizationRule = AUTHORIZATION_TABLE.resolveDecision;
const FORM_TYPE = /^application\/x-www-form-urlencoded\s*(?:;.*)?$/i;
/** Bound on the POST that replaces the message through the click's response_url. */
const RESPONSE_URL_TIMEOUT_MS = 5000;

export function receiveSlackInteraction(
  ctx: RouteContext,
): GatewayHandler<typeof receiveSlackInteractionRoute> {
  return async (c) => {
    const type = c.req.header("content-type") ?? "(none)";
    if (!FORM_TYPE.test(type)) {
      throw new ApiError(
        415,
        "unsupported_media_type",
        `Content-Type: expected application/x-www-form-urlencoded (Slack's payload=<JSON>), received ${type.slice(0, 100)}.`,
        { expected: "application/x-www-form-urlencoded", received: type.slice(0, 100) },
      );
    }
    const secret = ctx.options.slackSigningSecret;
    if (!secret) {
      throw new ApiError(
        503,
        "slack_not_configured",
        "Slack interactivity is not configured on this gateway: set OVERSEER_SLACK_SIGNING_SECRET to the Slack app's signing secret.",
      );
    }
    const body = await c.req.text();
    verifySlackSignature({
      secret,
      body,
      timestamp: c.req.header("x-slack-request-timestamp"),
      signature: c.req.header("x-slack-signature"),
    });
    const payload = parsePayload(body);
    const action = decisionAction(payload);
    if (!action) {
      throw new ApiError(
        400,
        "invalid_interaction",
        "The click carries no decision button (action_id overseer_resolve:<option> with a JSON value of project_id, decision_id and option_id); nothing was done.",
      );
    }
    const operator = await operatorOf(ctx, payload.user.id, action.project_id);
    const decision = await getDecision(ctx.deps.db, action.project_id, action.decision_id);
    if (!decision) {
      throw new ApiError(
        404,
        "not_found",
        `Decision ${action.decision_id} does not exist in project ${action.project_id}; the card may have been deleted.`,
      );
    }
    let resolved: { decision: Decision; fresh: boolean };
    try {
      resolved = await resolveOnce(ctx, decision, action, decisionNote(payload), operator);
    } catch (error) {
      // A refused answer (an option that needs a note, one the card no longer offers) is told to
      // the clicker alone; the card stays as it is.
      if (isDomainError(error) && (error.code === "note_required" || error.code === "invalid_option"))
        await replaceMessage(ctx, payload.response_url, {
          response_type: "ephemeral",
          replace_original: false,
          text:
            error.code === "note_required"
              ? `${error.message} Write it in the note field, then click again.`
              : error.message,
        });
      throw error;
    }
    const updated = await replaceMessage(
      ctx,
      payload.response_url,
      resolvedMessage(resolved.decision, resolved.fresh),
    );
    return c.json(
      {
        outcome: resolved.fresh ? ("resolved" as const) : ("already_resolved" as const),
        project_id: action.project_id,
        decision_id: action.decision_id,
        selected_option: resolved.decision.selectedOption,
        resolved_by: resolved.decision.resolvedBy,
        message_updated: updated,
      },
      200,
    );
  };
}

function parsePayload(body: string): BlockActionsPayload {
  const raw = new URLSearchParams(body).get("payload");
  let json: unknown;
  try {
    json = raw === null ? undefined : JSON.parse(raw);
  } catch {
    json = undefined;
  }
  const parsed = BlockActionsPayloadSchema.safeParse(json);
  if (!parsed.success) {
    const problem = json === undefined ? "payload: expected Slack's JSON" : parsed.error.issues[0]?.message;
    throw new ApiError(
      400,
      "invalid_interaction",
      `The Slack request's form field payload is not a block_actions interaction (${problem}); nothing was done.`,
    );
  }
  return parsed.data;
}

interface Operator {
  readonly tokenName: string;
  readonly projectStatusIn: ReturnType<typeof projectStatusesAllowed>;
}

/**
 * The API token the Slack user acts as (`OVERSEER_SLACK_OPERATORS`): it must be mapped, active,
 * and its scope must allow resolving decisions in the project's current state (403 otherwise).
 */
async function operatorOf(ctx: RouteContext, slackUserId: string, projectId: string): Promise<Operator> {
  const tokenId = ctx.options.slackOperators[slackUserId];
  const token = tokenId ? await findActiveApiToken(ctx.deps.db, tokenId) : null;
  if (!token) {
    throw new ApiError(
      403,
      "unknown_slack_user",
      tokenId
        ? `Slack user ${slackUserId} is mapped to API token ${tokenId}, which is revoked or gone; map them to an active token in OVERSEER_SLACK_OPERATORS. Nothing was done.`
        : `Slack user ${slackUserId} is not an Overseer operator: add ${slackUserId}=<API token id> to OVERSEER_SLACK_OPERATORS. Nothing was done.`,
      { slack_user_id: slackUserId },
    );
  }
  const project = await existingProject(ctx.deps.db, projectId);
  const needed = requiredAccess(RESOLVE_RULE, project.status);
  if (needed !== "public" && !scopeGrants(token.scope, needed)) {
    throw new ApiError(
      403,
      "forbidden",
      `Slack user ${slackUserId} acts as token ${token.name} with scope "${token.scope}"; resolving a decision while the project is ${project.status} needs "${needed}". Nothing was done.`,
      { slack_user_id: slackUserId, required_scope: needed, token_scope: token.scope },
    );
  }
  return { tokenName: token.name, projectStatusIn: projectStatusesAllowed(RESOLVE_RULE, token.scope) };
}

/**
 * Resolves the card with the button's option through the resolve route's command, once: a card
 * already resolved (before, or by a concurrent click with another option: `stale`) is answered
 * as it stands, with `fresh: false`.
 */
async function resolveOnce(
  ctx: RouteContext,
  decision: Decision,
  action: DecisionButtonValue,
  note: string | undefined,
  operator: Operator,
): Promise<{ decision: Decision; fresh: boolean }> {
  if (decision.status === "resolved") return { decision, fresh: false };
  let fresh = false;
  try {
    const result = await ctx.transitions.apply(
      action.project_id,
      {
        kind: "resolve-decision",
        decisionId: action.decision_id,
        optionId: normaliseOptionId(action.option_id),
        note,
        by: `slack:${operator.tokenName}`,
        resolutionId: randomUUID(),
      },
      { projectStatusIn: operator.projectStatusIn },
    );
    fresh = result.outcome === "applied";
  } catch (error) {
    if (!(isDomainError(error) && error.code === "stale")) throw error;
  }
  const now = await getDecision(ctx.deps.db, action.project_id, action.decision_id);
  if (!now) throw new Error(`decision ${action.decision_id} vanished after resolution`);
  return { decision: now, fresh };
}

/**
 * Replaces the clicked message (or, ephemeral, answers the clicker alone) through the click's
 * `response_url` (Slack's way of answering an interaction, no bot token needed). Only a URL of
 * `OVERSEER_SLACK_RESPONSE_ORIGIN` is called; a failure is logged, the resolution stands.
 */
async function replaceMessage(ctx: RouteContext, responseUrl: string, message: object): Promise<boolean> {
  const origin = ctx.options.slackResponseOrigin;
  let url: URL;
  try {
    url = new URL(responseUrl);
  } catch {
    return false;
  }
  if (url.origin !== origin) {
    ctx.deps.logger.warn(
      { response_origin: url.origin, allowed_origin: origin },
      "Slack response_url is not on OVERSEER_SLACK_RESPONSE_ORIGIN; the message was not updated",
    );
    return false;
  }
  try {
    const response = await fetch(url, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(message),
      signal: AbortSignal.timeout(RESPONSE_URL_TIMEOUT_MS),
    });
    if (!response.ok) {
      ctx.deps.logger.warn({ status: response.status }, "Slack refused the message update at response_url");
    }
    return response.ok;
  } catch (error) {
    ctx.deps.logger.warn({ err: error }, "Slack message update at response_url failed");
    return false;
  }
}
