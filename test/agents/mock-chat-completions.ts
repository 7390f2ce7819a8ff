import type { ServerResponse } from "node:http";
import { type EditStep, editCall, scriptedStep } from "./mock-edit-step.ts";

/**
 * OpenAI Chat Completions (`POST …/chat/completions`, streamed as `data:` server-sent events
 * ending with `data: [DONE]`) for the scripted model of the real-CLI suite: the protocol of
 * opencode's `@ai-sdk/openai-compatible` provider, which its preset points at the base URL.
 *
 * Same script as the other protocols (mock-model-server.ts passes its script and usage): a
 * request offering the `bash` tool is answered with a call running the script, the request
 * carrying its result with "Done.", any other
 * request (opencode's title generator has no tools) with a short text. Every answer ends with a
 * usage chunk (`stream_options.include_usage`), so the suite can check what Overseer harvested.
 */

/** Shell tools the CLIs using this protocol offer, by name. */
const SHELL_TOOLS = new Set(["bash"]);

type Turn = "edit-call" | "tool-call" | "final" | "auxiliary";

export interface ScriptedAnswer {
  /** Shell script the tool call runs. */
  script: string;
  /** Usage every answer reports (`input` includes `cached`). */
  usage: { input: number; cached: number; output: number };
  /** The file edit made first with opencode's `write` tool (mock-edit-step.ts). */
  edit?: { step: EditStep; requestText: string } | undefined;
}

export function chatCompletionsTurn(body: Record<string, unknown>, edit?: EditStep): Turn {
  const tools = Array.isArray(body.tools) ? (body.tools as { function?: { name?: string } }[]) : [];
  if (!tools.some((t) => SHELL_TOOLS.has(t.function?.name ?? ""))) return "auxiliary";
  const messages = Array.isArray(body.messages) ? (body.messages as { role?: string }[]) : [];
  return scriptedStep(messages.filter((m) => m.role === "tool").length, edit);
}

export function sendChatCompletions(
  res: ServerResponse,
  body: Record<string, unknown>,
  answered: Turn,
  { script, usage: reported, edit }: ScriptedAnswer,
): void {
  const id = `chatcmpl-${Math.random().toString(16).slice(2)}`;
  const model = typeof body.model === "string" ? body.model : "mock";
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) => ({
    id,
    object: "chat.completion.chunk",
    created: Math.floor(Date.now() / 1000),
    model,
    choices,
    ...extra,
  });
  const call =
    answered === "edit-call" && edit
      ? editCall("opencode", edit.step, edit.requestText)
      : { name: "bash", args: { command: script } };
  const delta =
    answered === "tool-call" || answered === "edit-call"
      ? {
          role: "assistant",
          content: null,
          tool_calls: [
            {
              index: 0,
              id: `call_${id}`,
              type: "function",
              function: { name: call.name, arguments: JSON.stringify(call.args) },
            },
          ],
        }
      : { role: "assistant", content: answered === "final" ? "Done." : "Add hello.txt" };
  const usage = {
    prompt_tokens: reported.input,
    completion_tokens: reported.output,
    total_tokens: reported.input + reported.output,
    prompt_tokens_details: { cached_tokens: reported.cached },
  };
  const events = [
    chunk([{ index: 0, delta, finish_reason: null }]),
    chunk([
      {
        index: 0,
        delta: {},
        finish_reason: answered === "final" || answered === "auxiliary" ? "stop" : "tool_calls",
      },
    ]),
    chunk([], { usage }),
  ];
  res.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    connection: "close",
  });
  for (const event of events) res.write(`data: ${JSON.stringify(event)}\n\n`);
  res.end("data: [DONE]\n\n");
}
