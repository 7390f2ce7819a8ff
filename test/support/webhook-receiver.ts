/** The Standard Webhooks receiver of the end-to-end tests: the one `@overseer/test-support` keeps for every test. */
export { type ReceivedWebhook, WebhookReceiver } from "@overseer/test-support";
