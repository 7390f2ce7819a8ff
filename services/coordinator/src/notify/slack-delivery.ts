import { type Db, type DeliveryWork, decisionCardOf } from "@overseer/db";
import {
  postSlackMessage,
  type SlackOutcome,
  slackMessageOf,
  slackResolvedCardMessage,
  updateSlackMessage,
  webhookPayloadOf,
} from "@overseer/notify";

export interface SlackDeliveryOptions {
  readonly token: string;
  readonly apiUrl: string;
  readonly timeoutMs: number;
  readonly dashboardUrl: string | null;
}

/**
 * One attempt of a Slack delivery. A `decision.resolved` whose card this subscription posted
 * updates that message (chat.update, by the channel and ts stored with the card's delivery) to
 * say who chose what, buttons gone, however the card was resolved (a click, the resolve route,
 * the CLI). Anything else, and a resolution whose card was never posted, is a new message
 * (chat.postMessage); its channel and ts come back to be stored with the delivery.
 */
export async function sendSlackDelivery(
  db: Db,
  work: DeliveryWork,
  channel: string,
  options: SlackDeliveryOptions,
): Promise<SlackOutcome> {
  const { outbox, delivery } = work;
  const attempt = { token: options.token, apiUrl: options.apiUrl, timeoutMs: options.timeoutMs };
  const payload = webhookPayloadOf(outbox, options.dashboardUrl);
  if (payload.type === "decision.resolved") {
    const card = await decisionCardOf(db, delivery, payload.data.decision_id);
    if (card?.message) {
      const opened = webhookPayloadOf(card.outbox, options.dashboardUrl);
      const asked = opened.type === "decision.opened" ? opened.data : null;
      const note = outbox.data.note;
      return updateSlackMessage({
        ...attempt,
        channel: card.message.channel,
        ts: card.message.ts,
        message: slackResolvedCardMessage({
          projectId: payload.data.project_id,
          taskId: payload.data.task_id,
          title: asked?.title ?? payload.data.decision_id,
          question: asked?.question ?? "",
          chosen:
            asked?.options.find((o) => o.id === payload.data.option_id)?.label ?? payload.data.option_id,
          by: payload.data.by,
          note: typeof note === "string" && note ? note : null,
          url: payload.data.url,
        }),
      });
    }
  }
  return postSlackMessage({ ...attempt, channel, message: slackMessageOf(payload) });
}
