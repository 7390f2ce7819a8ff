export {
  type ResolvedCard,
  type SlackMessage,
  slackMessageOf,
  slackResolvedCardMessage,
} from "./slack-message.ts";
export {
  postSlackMessage,
  type SlackAttempt,
  type SlackOutcome,
  updateSlackMessage,
} from "./slack-sender.ts";
export { type OutboxNotification, webhookPayloadOf, webhookTestPayload } from "./webhook-payload.ts";
export {
  type AttemptOutcome,
  newWebhookSecret,
  postWebhook,
  signedHeaders,
  type WebhookAttempt,
} from "./webhook-sender.ts";
