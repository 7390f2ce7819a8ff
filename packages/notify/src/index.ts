export { type OutboxNotification, webhookPayloadOf, webhookTestPayload } from "./webhook-payload.ts";
export {
  type AttemptOutcome,
  newWebhookSecret,
  postWebhook,
  signedHeaders,
  type WebhookAttempt,
} from "./webhook-sender.ts";
