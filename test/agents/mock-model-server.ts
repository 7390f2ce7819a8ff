import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { setTimeout as delay } from "node:timers/promises";
import { chatCompletionsTurn, sendChatCompletions } from "./mock-chat-completions.ts";
import { COPILOT_BASE_PATH, copilotRefusal } from "./mock-copilot-api.ts";
import { type EditStep, editCall, scriptedStep } from "./mock-edit-step.ts";
import { answerGemini, geminiMethod } from "./mock-gemini-protocol.ts";
import { CODEX_SHELL_TOOL, COPILOT_SHELL_TOOL, responsesTurn } from "./mock-responses-protocol.ts";

/**
 * A scripted MODEL for the real-CLI suite: the only test double in it. It speaks the wire
 * protocols the CLIs use, streaming as they require:
 * - OpenAI Responses API (`POST /v1/responses`, server-sent events) for Codex;
 * - Anthropic Messages API (`POST /v1/messages`, server-sent events) for Claude Code;
 * - OpenAI Chat Completions (`POST /v1/chat/completions`, server-sent events) for opencode
 *   (mock-chat-completions.ts);
 * - Gemini API (`POST /v1beta/models/MODEL:streamGenerateContent`, server-sent events) for the
 *   Gemini CLI (mock-gemini-protocol.ts);
 * - Copilot CLI's bring-your-own-key provider (Responses API under `/copilot/v1`), in
 *   mock-copilot-api.ts.
 *
 * Every conversation goes the same way: the first turn calls the CLI's shell tool with the
 * script ({@link AGENT_SCRIPT} unless {@link MockModelOptions.script} says otherwise: work +
 * `overseer-agent`), the turn after the tool result answers "Done." Each response reports fixed
 * usage, so the suite can check what Overseer harvested. Over the streamed Responses and
 * Messages protocols the model can also think aloud ({@link MockModelOptions.pauseMs}) or hang
 * ({@link MockModelOptions.hangAfter}), as real models and gateways do.
 */

/** What the "model" runs: an executor writes a file and submits; a reviewer approves. */
export const AGENT_SCRIPT = [
  'if [ "$OVERSEER_ACTION" = review ]; then',
  '  overseer-agent approve --feedback "hello.txt is there and says hello."',
  "else",
  '  echo "hello from a real agent CLI" > hello.txt &&',
  "  printf 'Add hello.txt\\n' > /tmp/overseer-msg &&",
  "  overseer-agent submit --message-file /tmp/overseer-msg",
  "fi",
].join("\n");

/** Usage each model response reports. */
export const RESPONSE_USAGE = { input: 1000, cached: 200, output: 50 } as const;

export interface MockModelRequest {
  path: string;
  /** `edit-call`, `tool-call`, `final` or `auxiliary` (a request without the shell tool). */
  answered: "edit-call" | "tool-call" | "final" | "auxiliary" | "other";
  authorization: string | undefined;
  /** Answered by hanging ({@link MockModelOptions.hangAfter}). */
  hung: boolean;
  /** The tools the request offered, by name (every protocol's shape). */
  tools: string[];
}

export interface MockModelOptions {
  /** What the model's tool call runs (default {@link AGENT_SCRIPT}). */
  script?: string;
  /**
   * A streamed turn that calls the tool sends its first event, then nothing for this long, then
   * the rest: a model thinking before it answers (Responses and Messages protocols). Default 0.
   */
  pauseMs?: number;
  /**
   * A turn whose request carries this text (in the tool output the script printed) sends its
   * first event, then nothing until the client goes away: a hung model (Responses and Messages).
   */
  hangAfter?: string;
  /**
   * Before the shell call, write this file with the CLI's own file tool (mock-edit-step.ts), so
   * a run shows a tool edit as well as a command. Default: no edit step.
   */
  edit?: EditStep;
}

export class MockModelServer {
  readonly requests: MockModelRequest[] = [];
  private server: Server | null = null;
  private readonly script: string;
  port = 0;

  constructor(private readonly options: MockModelOptions = {}) {
    this.script = options.script ?? AGENT_SCRIPT;
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server?.listen(0, "127.0.0.1", resolve));
    const address = this.server.address();
    this.port = typeof address === "object" && address !== null ? address.port : 0;
    return this;
  }

  get origin(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  /** The edit step with the request it answers (the CLI's prompt names the working directory). */
  private edit(requestText: string): { step: EditStep; requestText: string } | undefined {
    return this.options.edit === undefined ? undefined : { step: this.options.edit, requestText };
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString("utf8");
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(text || "{}") as Record<string, unknown>;
    } catch {
      // not JSON: answered below as "other"
    }
    const path = (req.url ?? "").split("?")[0] ?? "";
    const authorization = (req.headers.authorization ??
      req.headers["x-api-key"] ??
      req.headers["x-goog-api-key"]) as string | undefined;
    const record = (answered: MockModelRequest["answered"]) =>
      this.requests.push({ path, answered, authorization, hung: false, tools: offeredTools(body) });
    const stream = (answered: MockModelRequest["answered"], events: readonly SseEvent[]) => {
      const hang = this.options.hangAfter !== undefined && text.includes(this.options.hangAfter);
      const request = this.requests.at(-1);
      if (request) request.hung = hang;
      const pauseMs = answered === "tool-call" ? (this.options.pauseMs ?? 0) : 0;
      return sendSse(res, events, { pauseMs, hang });
    };
    if (req.method === "POST" && path === `${COPILOT_BASE_PATH}/responses`) {
      const refusal = copilotRefusal(authorization);
      if (refusal !== null) {
        record("other");
        res.writeHead(401, { "content-type": "application/json" }).end(refusal);
        return;
      }
      const turn = responsesTurn(body, COPILOT_SHELL_TOOL, this.script, RESPONSE_USAGE, this.edit(text));
      record(turn.answered);
      return stream(turn.answered, turn.events);
    }
    if (req.method === "POST" && path.endsWith("/responses")) {
      const turn = responsesTurn(body, CODEX_SHELL_TOOL, this.script, RESPONSE_USAGE, this.edit(text));
      record(turn.answered);
      return stream(turn.answered, turn.events);
    }
    if (req.method === "POST" && path.endsWith("/chat/completions")) {
      const answered = chatCompletionsTurn(body, this.options.edit);
      record(answered);
      return sendChatCompletions(res, body, answered, {
        script: this.script,
        usage: RESPONSE_USAGE,
        edit: this.edit(text),
      });
    }
    if (req.method === "POST" && path.endsWith("/messages/count_tokens")) {
      record("other");
      res.writeHead(200, { "content-type": "application/json" }).end('{"input_tokens":10}');
      return;
    }
    if (req.method === "POST" && path.endsWith("/messages")) {
      const answered = messagesTurn(body, this.options.edit);
      record(answered);
      const content = messagesContent(answered, this.script, this.edit(text));
      if (body.stream !== true) {
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(messagesJson(content)));
        return;
      }
      return stream(answered, messagesEvents(content));
    }
    const gemini = req.method === "POST" ? geminiMethod(path) : null;
    if (gemini) {
      record(answerGemini(res, gemini, path, body, this.script, RESPONSE_USAGE, this.options.edit));
      return;
    }
    record("other");
    res.writeHead(404, { "content-type": "application/json" }).end('{"error":{"message":"not mocked"}}');
  }
}

/** Tool names a request offers: Responses/Messages `tools[].name`, Chat `tools[].function.name`, Gemini `functionDeclarations`. */
export function offeredTools(body: Record<string, unknown>): string[] {
  const tools = Array.isArray(body.tools) ? (body.tools as Record<string, unknown>[]) : [];
  return tools.flatMap((tool) => {
    const fn = tool.function as { name?: unknown } | undefined;
    const declared = Array.isArray(tool.functionDeclarations)
      ? (tool.functionDeclarations as { name?: unknown }[]).map((f) => f.name)
      : [];
    return [tool.name, fn?.name, ...declared].filter((name): name is string => typeof name === "string");
  });
}

interface SseEvent {
  event: string;
  data: unknown;
}

/** Streams `events`; after the first one, pauses `pauseMs`, or stops for good when `hang`. */
async function sendSse(
  res: ServerResponse,
  events: readonly SseEvent[],
  timing: { pauseMs: number; hang: boolean },
): Promise<void> {
  res.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    connection: "close",
  });
  const write = (e: SseEvent) => res.write(`event: ${e.event}\ndata: ${JSON.stringify(e.data)}\n\n`);
  const [first, ...rest] = events;
  if (first) write(first);
  // A hung model: the connection stays open, silent, until the client (or close()) ends it.
  if (timing.hang) return;
  if (timing.pauseMs > 0) await delay(timing.pauseMs);
  for (const e of rest) write(e);
  res.end();
}

// --- Anthropic Messages (Claude Code) -------------------------------------------------------

function messagesTurn(
  body: Record<string, unknown>,
  edit: EditStep | undefined,
): MockModelRequest["answered"] {
  const tools = Array.isArray(body.tools) ? (body.tools as { name?: string }[]) : [];
  if (!tools.some((t) => t.name === "Bash")) return "auxiliary";
  const messages = Array.isArray(body.messages)
    ? (body.messages as { role?: string; content?: unknown }[])
    : [];
  const results = messages.flatMap((m) =>
    Array.isArray(m.content)
      ? (m.content as { type?: string }[]).filter((c) => c.type === "tool_result")
      : [],
  );
  return scriptedStep(results.length, edit);
}

type MessagesContent =
  | { type: "tool_use"; id: string; name: string; input: unknown }
  | { type: "text"; text: string };

function messagesContent(
  answered: MockModelRequest["answered"],
  script: string,
  edit: { step: EditStep; requestText: string } | undefined,
): MessagesContent {
  const id = `toolu_${Math.random().toString(16).slice(2)}`;
  if (answered === "edit-call" && edit) {
    const call = editCall("claude", edit.step, edit.requestText);
    return { type: "tool_use", id, name: call.name, input: call.args };
  }
  return answered === "tool-call"
    ? { type: "tool_use", id, name: "Bash", input: { command: script } }
    : { type: "text", text: answered === "final" ? "Done." : "ok" };
}

function messagesJson(content: MessagesContent) {
  return {
    id: `msg_${Math.random().toString(16).slice(2)}`,
    type: "message",
    role: "assistant",
    model: "mock-claude",
    content: [content],
    stop_reason: content.type === "tool_use" ? "tool_use" : "end_turn",
    stop_sequence: null,
    usage: {
      input_tokens: RESPONSE_USAGE.input - RESPONSE_USAGE.cached,
      cache_read_input_tokens: RESPONSE_USAGE.cached,
      cache_creation_input_tokens: 0,
      output_tokens: RESPONSE_USAGE.output,
    },
  };
}

function messagesEvents(content: MessagesContent) {
  const message = messagesJson(content);
  const start = content.type === "tool_use" ? { ...content, input: {} } : { ...content, text: "" };
  const delta =
    content.type === "tool_use"
      ? { type: "input_json_delta", partial_json: JSON.stringify(content.input) }
      : { type: "text_delta", text: content.text };
  return [
    {
      event: "message_start",
      data: {
        type: "message_start",
        message: {
          ...message,
          content: [],
          stop_reason: null,
          usage: { ...message.usage, output_tokens: 1 },
        },
      },
    },
    { event: "content_block_start", data: { type: "content_block_start", index: 0, content_block: start } },
    { event: "content_block_delta", data: { type: "content_block_delta", index: 0, delta } },
    { event: "content_block_stop", data: { type: "content_block_stop", index: 0 } },
    {
      event: "message_delta",
      data: {
        type: "message_delta",
        delta: { stop_reason: message.stop_reason, stop_sequence: null },
        usage: { output_tokens: RESPONSE_USAGE.output },
      },
    },
    { event: "message_stop", data: { type: "message_stop" } },
  ];
}
