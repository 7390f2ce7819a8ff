import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";

/** One message the receiver accepted: verified with `standardwebhooks`, answered 2xx. */
export interface ReceivedWebhook {
  readonly id: string;
  readonly timestamp: number;
  readonly payload: {
    type: string;
    data: { project_id: string; event_id: string } & Record<string, unknown>;
  };
}

/**
 * A Standard Webhooks receiver as a customer would write it: it verifies every request with the
 * `standardwebhooks` library (signature with its secret, timestamp within the library's 5-minute
 * tolerance), dedupes by `webhook-id`, and can be taken down (answers 503) and brought back.
 * `accepted` holds each first acceptance in arrival order; `duplicates` counts a `webhook-id`
 * accepted before and sent again; `refused` counts requests that failed verification.
 */
export class WebhookReceiver {
  readonly accepted: ReceivedWebhook[] = [];
  duplicates = 0;
  refused = 0;
  /** Requests answered 503 while down. */
  turnedAway = 0;
  up = true;
  #secret: string;
  readonly #server: Server;

  private constructor(secret: string) {
    this.#secret = secret;
    this.#server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        if (!this.up) {
          this.turnedAway += 1;
          res.writeHead(503).end();
          return;
        }
        const body = Buffer.concat(chunks).toString("utf8");
        const headers = Object.fromEntries(
          Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(",") : (v ?? "")]),
        );
        let payload: ReceivedWebhook["payload"];
        try {
          payload = new Webhook(this.#secret).verify(body, headers) as ReceivedWebhook["payload"];
        } catch {
          this.refused += 1;
          res.writeHead(400).end();
          return;
        }
        const id = String(headers["webhook-id"]);
        if (this.accepted.some((a) => a.id === id)) this.duplicates += 1;
        else this.accepted.push({ id, timestamp: Number(headers["webhook-timestamp"]), payload });
        res.writeHead(204).end();
      });
    });
  }

  static async start(secret: string): Promise<WebhookReceiver> {
    const receiver = new WebhookReceiver(secret);
    await new Promise<void>((resolve) => receiver.#server.listen(0, "127.0.0.1", resolve));
    return receiver;
  }

  /** The receiver now verifies with this secret only (after a rotation). */
  useSecret(secret: string): void {
    this.#secret = secret;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/hooks`;
  }

  /** The accepted messages of one project, in arrival order. */
  ofProject(projectId: string): ReceivedWebhook[] {
    return this.accepted.filter((a) => a.payload.data.project_id === projectId);
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }
}
