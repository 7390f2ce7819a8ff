import { createHmac, randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type ResponseUrlMessage, ResponseUrlMessageSchema } from "./slack-block-kit.ts";
import { type PostedMessage, postMessageAnswer, updateMessageAnswer } from "./slack-web-api.ts";

/** A click as Slack would send it to the app's interactivity URL: form body and signed headers. */
export interface SlackRequest {
  readonly body: string;
  readonly headers: Record<string, string>;
}

/** What a message's response_url received (validated first; refused bodies are only counted). */
export interface ReceivedResponse {
  readonly path: string;
  readonly message: ResponseUrlMessage;
}

/**
 * The Slack side of interactivity, as Slack documents it: it builds `block_actions` payloads
 * ("Reference: interaction payloads"), sends them form-encoded as `payload=<JSON>` and signs
 * them ("Verifying requests from Slack": `v0=` HMAC-SHA256 of `v0:<timestamp>:<body>` with the
 * app's signing secret); it serves the Web API methods the app calls (chat.postMessage,
 * chat.update) and the response_urls (`/actions/<team>/<id>/<token>`) that
 * accept a message update, refusing bodies that are not valid Block Kit (400 `invalid_blocks`).
 */
export class SlackDouble {
  readonly responses: ReceivedResponse[] = [];
  /** Bodies a response_url refused (what Slack would answer 400 to). */
  readonly refusedResponses: { path: string; problem: string }[] = [];
  readonly signingSecret: string;
  readonly #server: Server;
  readonly team = { id: "T0OVERSEER", domain: "overseer-test" };
  /** The app's bot token the Web API accepts. */
  readonly botToken = `xoxb-${Date.now()}-${randomBytes(8).toString("hex")}`;
  /** Channels the bot is in (chat.postMessage elsewhere: `channel_not_found`). */
  readonly channels = new Set<string>(["C0DECISIONS"]);
  /** Messages chat.postMessage accepted, in order. */
  readonly posted: PostedMessage[] = [];
  /** chat.postMessage calls refused, with Slack's error code. */
  readonly refusedPosts: string[] = [];
  /** chat.update calls accepted, in order (each the message's new content). */
  readonly updates: PostedMessage[] = [];
  /** chat.update calls refused, with Slack's error code. */
  readonly refusedUpdates: string[] = [];

  private constructor(signingSecret: string) {
    this.signingSecret = signingSecret;
    this.#server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const path = req.url ?? "/";
        if (req.method === "POST" && path === "/api/chat.postMessage") {
          const answer = postMessageAnswer(this, req.headers, Buffer.concat(chunks).toString("utf8"));
          if (answer.ok) this.posted.push(answer.message);
          else this.refusedPosts.push(answer.error);
          res
            .writeHead(200, { "Content-Type": "application/json; charset=utf-8" })
            .end(JSON.stringify(answer));
          return;
        }
        if (req.method === "POST" && path === "/api/chat.update") {
          const answer = updateMessageAnswer(this, req.headers, Buffer.concat(chunks).toString("utf8"));
          if (answer.ok) this.updates.push(answer.message);
          else this.refusedUpdates.push(answer.error);
          res
            .writeHead(200, { "Content-Type": "application/json; charset=utf-8" })
            .end(JSON.stringify(answer));
          return;
        }
        if (req.method !== "POST" || !/^\/actions\/[A-Z0-9]+\/\d+\/[A-Za-z0-9]+$/.test(path)) {
          res.writeHead(404).end("no_service");
          return;
        }
        let json: unknown;
        try {
          json = JSON.parse(Buffer.concat(chunks).toString("utf8"));
        } catch {
          json = undefined;
        }
        const parsed = ResponseUrlMessageSchema.safeParse(json);
        if (!parsed.success) {
          this.refusedResponses.push({ path, problem: parsed.error.message });
          res.writeHead(400).end("invalid_blocks");
          return;
        }
        this.responses.push({ path, message: parsed.data });
        res.writeHead(200, { "Content-Type": "text/plain" }).end("ok");
      });
    });
  }

  static async start(signingSecret = randomBytes(16).toString("hex")): Promise<SlackDouble> {
    const double = new SlackDouble(signingSecret);
    await new Promise<void>((resolve) => double.#server.listen(0, "127.0.0.1", resolve));
    return double;
  }

  /** The Web API base to give `@slack/web-api` (`slackApiUrl`), like `https://slack.com/api/`. */
  get apiUrl(): string {
    return `${this.origin}/api/`;
  }

  /** `http://127.0.0.1:<port>`: the origin of every response_url this double hands out. */
  get origin(): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  /** A message's content now: its last chat.update, else what chat.postMessage posted. */
  messageAt(channel: string, ts: string): PostedMessage | undefined {
    const same = (m: PostedMessage) => m.channel === channel && m.ts === ts;
    return this.updates.findLast(same) ?? this.posted.find(same);
  }

  /** A fresh response_url of a message, as Slack puts one in each interaction payload. */
  responseUrl(): string {
    return `${this.origin}/actions/${this.team.id}/${Date.now()}${Math.floor(Math.random() * 1000)}/${randomBytes(12).toString("hex")}`;
  }

  /**
   * A `block_actions` click on a button (Slack's payload for a message button), form-encoded and
   * signed at `timestamp` (seconds; default now) with `secret` (default the app's).
   */
  click(input: {
    userId: string;
    actionId: string;
    value: string;
    label?: string;
    /** What the card's note field (`overseer_note`) holds at the click. */
    note?: string;
    responseUrl?: string;
    timestamp?: number;
    secret?: string;
  }): SlackRequest {
    const ts = String(input.timestamp ?? Math.floor(Date.now() / 1000));
    const messageTs = `${ts}.000100`;
    const payload = {
      type: "block_actions",
      user: {
        id: input.userId,
        username: input.userId.toLowerCase(),
        name: input.userId.toLowerCase(),
        team_id: this.team.id,
      },
      api_app_id: "A0OVERSEER",
      token: "deprecated-verification-token",
      container: { type: "message", message_ts: messageTs, channel_id: "C0DECISIONS", is_ephemeral: false },
      trigger_id: `${ts}.1234.${randomBytes(8).toString("hex")}`,
      team: this.team,
      enterprise: null,
      is_enterprise_install: false,
      channel: { id: "C0DECISIONS", name: "decisions" },
      message: { type: "message", ts: messageTs, text: "decision card", bot_id: "B0OVERSEER" },
      state: {
        values:
          input.note === undefined
            ? {}
            : { note: { overseer_note: { type: "plain_text_input", value: input.note } } },
      },
      response_url: input.responseUrl ?? this.responseUrl(),
      actions: [
        {
          action_id: input.actionId,
          block_id: "options",
          text: { type: "plain_text", text: input.label ?? "Option", emoji: true },
          value: input.value,
          type: "button",
          action_ts: `${ts}.222222`,
        },
      ],
    };
    const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
    return { body, headers: this.sign(body, ts, input.secret) };
  }

  /** Slack's request headers for `body`: content type, timestamp and `v0` signature. */
  sign(body: string, timestamp: string, secret = this.signingSecret): Record<string, string> {
    const signature = `v0=${createHmac("sha256", secret).update(`v0:${timestamp}:${body}`).digest("hex")}`;
    return {
      "Content-Type": "application/x-www-form-urlencoded",
      "X-Slack-Request-Timestamp": timestamp,
      "X-Slack-Signature": signature,
    };
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}
