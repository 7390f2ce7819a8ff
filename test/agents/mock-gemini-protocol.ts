import type { ServerResponse } from "node:http";
import { type EditStep, editCall, scriptedStep } from "./mock-edit-step.ts";

/**
 * The Gemini API (`generativelanguage.googleapis.com`) as the Gemini CLI calls it through
 * `@google/genai`, for the mock model of the real-CLI suite (mock-model-server.ts):
 * - `POST /v1beta/models/MODEL:streamGenerateContent?alt=sse`: server-sent `data:` chunks, each a
 *   GenerateContentResponse (`candidates[0].content.parts`, `usageMetadata` on the last one);
 * - `POST /v1beta/models/MODEL:generateContent`: the same response as one JSON body;
 * - `POST /v1beta/models/MODEL:countTokens`: `{"totalTokens"}`.
 * The key arrives in the `x-goog-api-key` header.
 *
 * A conversation goes like the other protocols': a request that declares the CLI's shell tool
 * (`run_shell_command`) and carries no tool result yet gets a `functionCall` running the
 * script; once a `functionResponse` is in the contents, the answer is "Done.".
 */

/**
 * Thinking tokens each response reports besides `usage`: a thinking model's are billed as output
 * but the CLI's stream-json only shows them in `total_tokens`, which the harvester has to read.
 */
export const GEMINI_THOUGHTS_TOKENS = 30;

export type GeminiAnswer = "edit-call" | "tool-call" | "final" | "auxiliary" | "other";

/** Usage each response reports, in the Gemini API's own terms. */
export interface GeminiUsage {
  /** Whole prompt, cached tokens included (`promptTokenCount`). */
  input: number;
  cached: number;
  output: number;
}

interface Part {
  text?: string;
  functionCall?: unknown;
  functionResponse?: unknown;
}

interface Content {
  role?: string;
  parts?: Part[];
}

const METHOD = /\/models\/[^/:]+:(streamGenerateContent|generateContent|countTokens)$/;

/** The Gemini API method a path names (`streamGenerateContent`…), or null. */
export function geminiMethod(path: string): string | null {
  return METHOD.exec(path)?.[1] ?? null;
}

function declaresShellTool(body: Record<string, unknown>): boolean {
  const tools = Array.isArray(body.tools) ? (body.tools as { functionDeclarations?: unknown }[]) : [];
  return tools.some(
    (tool) =>
      Array.isArray(tool.functionDeclarations) &&
      (tool.functionDeclarations as { name?: string }[]).some((f) => f.name === "run_shell_command"),
  );
}

/** What a generateContent request is answered with. */
export function geminiTurn(body: Record<string, unknown>, edit?: EditStep): GeminiAnswer {
  if (!declaresShellTool(body)) return "auxiliary";
  const contents = Array.isArray(body.contents) ? (body.contents as Content[]) : [];
  const results = contents.flatMap((c) => c.parts ?? []).filter((p) => p.functionResponse !== undefined);
  return scriptedStep(results.length, edit);
}

function responseOf(
  answered: GeminiAnswer,
  script: string,
  usage: GeminiUsage,
  model: string,
  edit: EditStep | undefined,
) {
  const edited = answered === "edit-call" && edit ? editCall("gemini", edit, "") : null;
  const part: Part =
    edited !== null
      ? { functionCall: edited }
      : answered === "tool-call"
        ? { functionCall: { name: "run_shell_command", args: { command: script } } }
        : { text: answered === "final" ? "Done." : "ok" };
  return {
    candidates: [{ content: { role: "model", parts: [part] }, finishReason: "STOP", index: 0 }],
    usageMetadata: {
      promptTokenCount: usage.input,
      cachedContentTokenCount: usage.cached,
      candidatesTokenCount: usage.output,
      thoughtsTokenCount: GEMINI_THOUGHTS_TOKENS,
      totalTokenCount: usage.input + usage.output + GEMINI_THOUGHTS_TOKENS,
    },
    modelVersion: model,
    responseId: `gemini_${Math.random().toString(16).slice(2)}`,
  };
}

/**
 * Answers one Gemini API request (`method` from {@link geminiMethod}) and says how: the shell
 * tool call running `script`, the final text, or an auxiliary answer.
 */
export function answerGemini(
  res: ServerResponse,
  method: string,
  path: string,
  body: Record<string, unknown>,
  script: string,
  usage: GeminiUsage,
  edit?: EditStep,
): GeminiAnswer {
  if (method === "countTokens") {
    res.writeHead(200, { "content-type": "application/json" }).end('{"totalTokens":10}');
    return "other";
  }
  const model = /\/models\/([^/:]+):/.exec(path)?.[1] ?? "mock-gemini";
  const answered = geminiTurn(body, edit);
  const response = responseOf(answered, script, usage, model, edit);
  if (method === "generateContent") {
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(response));
    return answered;
  }
  res.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    connection: "close",
  });
  res.write(`data: ${JSON.stringify(response)}\r\n\r\n`);
  res.end();
  return answered;
}
