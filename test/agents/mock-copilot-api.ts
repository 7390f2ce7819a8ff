/**
 * The model side of GitHub Copilot CLI's bring-your-own-key provider, for the real-CLI suite:
 * with `COPILOT_PROVIDER_BASE_URL` (what `overseer init --agent copilot --base-url URL` writes),
 * `COPILOT_PROVIDER_TYPE=openai` and `COPILOT_PROVIDER_WIRE_API=responses`, the CLI posts every
 * turn to `BASE/responses` (OpenAI Responses API, streamed) with the key as a bearer token, and
 * needs no GitHub sign-in (`COPILOT_OFFLINE=true` keeps it off GitHub entirely).
 *
 * Served under {@link COPILOT_BASE_PATH} by mock-model-server.ts, which passes its script and
 * usage in. A turn that offers Copilot's `bash` tool is answered with a call of it running the
 * script; the turn carrying its output is answered "Done."; anything else (no `bash` tool) is
 * auxiliary and answered "ok". Every response reports `usage`.
 */

type Answer = "tool-call" | "final" | "auxiliary";

export interface TurnUsage {
  input: number;
  cached: number;
  output: number;
}

/** Path prefix of the Copilot provider on the mock server (the base URL is ORIGIN + this). */
export const COPILOT_BASE_PATH = "/copilot/v1";

/** A key the gateway refuses: answered 401 with OpenAI's error body, as a real gateway does. */
export const COPILOT_REFUSED_KEY = "sk-refused-by-the-gateway-0123456789";

/** The 401 body for a request carrying {@link COPILOT_REFUSED_KEY}, else null. */
export function copilotRefusal(authorization: string | undefined): string | null {
  if (authorization !== `Bearer ${COPILOT_REFUSED_KEY}`) return null;
  return JSON.stringify({
    error: {
      message: "Incorrect API key provided.",
      type: "invalid_request_error",
      param: null,
      code: "invalid_api_key",
    },
  });
}

/** The streamed Responses events answering one Copilot turn, and what it was answered with. */
export function copilotTurn(
  body: Record<string, unknown>,
  script: string,
  turnUsage: TurnUsage,
): { answered: Answer; events: { event: string; data: unknown }[] } {
  const answered = copilotAnswer(body);
  return { answered, events: copilotEvents(answered, script, turnUsage) };
}

function copilotAnswer(body: Record<string, unknown>): Answer {
  const tools = Array.isArray(body.tools) ? (body.tools as { name?: string }[]) : [];
  const input = Array.isArray(body.input) ? (body.input as { type?: string }[]) : [];
  if (!tools.some((t) => t.name === "bash")) return "auxiliary";
  return input.some((item) => item.type === "function_call_output") ? "final" : "tool-call";
}

function copilotEvents(answered: Answer, script: string, turnUsage: TurnUsage) {
  const id = `resp_${Math.random().toString(16).slice(2)}`;
  const item =
    answered === "tool-call"
      ? {
          type: "function_call",
          id: `fc_${id}`,
          call_id: `call_${id}`,
          name: "bash",
          arguments: JSON.stringify({ command: script, description: "Do the task" }),
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
  const response = { id, object: "response", model: "mock-copilot", status: "completed" };
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
