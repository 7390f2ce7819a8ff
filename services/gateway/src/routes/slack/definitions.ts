import { SlackInteractionResultSchema } from "@overseer/api-contract";
import { errorResponses, jsonResponse, tableRoute } from "../route-kit.ts";

/**
 * Slack interactivity: a click on a decision card's button. The request is Slack's (its `v0`
 * signature with `OVERSEER_SLACK_SIGNING_SECRET`, at most 5 minutes old); the clicker acts as
 * the API token `OVERSEER_SLACK_OPERATORS` maps them to, and the card is resolved through the
 * same command as `POST /api/projects/{id}/decisions/{decision_id}/resolve`.
 */
export const receiveSlackInteractionRoute = tableRoute("receiveSlackInteraction", {
  method: "post",
  path: "/api/v1/slack/interactions",
  tags: ["Slack"],
  summary: "Receive a Slack button click on a decision card",
  description:
    "Body: `application/x-www-form-urlencoded` with `payload`, Slack's `block_actions` JSON, as Slack sends it; headers `X-Slack-Request-Timestamp` and `X-Slack-Signature`. A missing or wrong signature, or a timestamp more than 5 minutes away (a replay), is 401 and changes nothing. The clicking Slack user must be mapped in `OVERSEER_SLACK_OPERATORS` to an active API token whose scope may resolve decisions in the project (403 otherwise). The button's option, with the card's note field (`overseer_note` in the payload's `state`) as its note, resolves the card once: a second click answers `already_resolved` with who chose what (told to the clicker alone through `response_url`); an option that needs a note, without one, is 422 and the clicker alone is told through `response_url`. On `resolved` the message is replaced through the click's `response_url` to say who chose what, buttons gone; the coordinator's outbox then updates it with chat.update too, as it does for a card resolved anywhere else.",
  security: [],
  responses: {
    200: jsonResponse(SlackInteractionResultSchema, "Resolved now, or resolved before."),
    ...errorResponses(400, 401, 403, 404, 413, 415, 422, 503),
  },
});
