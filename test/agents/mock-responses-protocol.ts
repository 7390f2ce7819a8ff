/**
 * The OpenAI Responses API (`POST …/responses`, server-sent events) as the mock model speaks it,
 * shared by the two CLIs that use it: Codex (its `exec_command`/`shell` tools) and Copilot CLI's
 * bring-your-own-key provider (its `bash` tool). Each CLI differs only in the tool it offers and
 * the arguments that tool takes, given as a {@link ResponsesShellTool}.
 *
 * A turn that offers the CLI's shell tool is answered with a call of it running the script; the
 * turn carrying that call's output is answered "Done."; a request without the tool (a title or
 * summary call) is auxiliary and answered "ok". Every response reports `usage`.
 */

import { type EditStep, editCall, scriptedStep } from "./mock-edit-step.ts";

export type ResponsesAnswer = "edit-call" | "tool-call" | "final" | "auxiliary";

export interface TurnUsage {
  input: number;
  cached: number;
  output: number;
}

/** The shell tool a CLI offers: the names it may go by, and the arguments that run `script`. */
export interface ResponsesShellTool {
  cli: "codex" | "copilot";
  names: readonly string[];
  /** The name the call uses (one of `names`). */
  callName: string;
  argumentsFor(script: string): Record<string, unknown>;
  model: string;
}

export const CODEX_SHELL_TOOL: ResponsesShellTool = {
  cli: "codex",
  names: ["exec_command", "shell", "shell_command"],
  callName: "exec_command",
  argumentsFor: (script) => ({ cmd: script }),
  model: "mock-codex",
};

export const COPILOT_SHELL_TOOL: ResponsesShellTool = {
  cli: "copilot",
  names: ["bash"],
  callName: "bash",
  argumentsFor: (script) => ({ command: script, description: "Do the task" }),
  model: "mock-copilot",
};

/** The streamed Responses events answering one turn, and what it was answered with. */
export function responsesTurn(
  body: Record<string, unknown>,
  tool: ResponsesShellTool,
  script: string,
  turnUsage: TurnUsage,
  edit?: { step: EditStep; requestText: string },
): { answered: ResponsesAnswer; events: { event: string; data: unknown }[] } {
  const answered = responsesAnswer(body, tool, edit?.step);
  const call =
    answered === "edit-call" && edit
      ? editCall(tool.cli, edit.step, edit.requestText)
      : { name: tool.callName, args: tool.argumentsFor(script) };
  return { answered, events: responsesEvents(answered, tool, call, turnUsage) };
}

function responsesAnswer(
  body: Record<string, unknown>,
  tool: ResponsesShellTool,
  edit: EditStep | undefined,
): ResponsesAnswer {
  const tools = Array.isArray(body.tools) ? (body.tools as { name?: string }[]) : [];
  const input = Array.isArray(body.input) ? (body.input as { type?: string }[]) : [];
  if (!tools.some((t) => t.name !== undefined && tool.names.includes(t.name))) return "auxiliary";
  const results = input.filter(
    (item) => item.type === "function_call_output" || item.type === "custom_tool_call_output",
  ).length;
  return scriptedStep(results, edit);
}

function responsesEvents(
  answered: ResponsesAnswer,
  tool: ResponsesShellTool,
  call: { name: string; args: Record<string, unknown> },
  turnUsage: TurnUsage,
) {
  const id = `resp_${Math.random().toString(16).slice(2)}`;
  const item =
    answered === "tool-call" || answered === "edit-call"
      ? {
          type: "function_call",
          id: `fc_${id}`,
          call_id: `call_${id}`,
          name: call.name,
          arguments: JSON.stringify(call.args),
          status: "completed",
        }
      : {
          type: "message",
          id: `msg_${id}`,
          role: "assistant",
          status: "completed",
          content: [{ type: "output_text", text: answered === "final" ? "Done." : "ok", annotations: [] }],
        };
  const usage = {
    input_tokens: turnUsage.input,
    input_tokens_details: { cached_tokens: turnUsage.cached },
    output_tokens: turnUsage.output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: turnUsage.input + turnUsage.output,
  };
  const response = { id, object: "response", model: tool.model, status: "completed" };
  return [
    {
      event: "response.created",
      data: { type: "response.created", response: { ...response, status: "in_progress", output: [] } },
    },
    {
      event: "response.output_item.added",
      data: { type: "response.output_item.added", output_index: 0, item },
    },
    {
      event: "response.output_item.done",
      data: { type: "response.output_item.done", output_index: 0, item },
    },
    {
      event: "response.completed",
      data: { type: "response.completed", response: { ...response, output: [item], usage } },
    },
  ];
}
