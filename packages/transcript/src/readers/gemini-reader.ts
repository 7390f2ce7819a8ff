import {
  type AgentEvent,
  type EventReader,
  isoTime,
  nonEmpty,
  num,
  obj,
  type ReadEntry,
  str,
} from "../event-reader.ts";

/** Gemini's tools that write a file (`parameters.file_path`). */
const EDIT_TOOLS = new Set(["write_file", "replace", "edit"]);
const SHELL_TOOLS = new Set(["run_shell_command", "shell"]);

/**
 * The exit status of Gemini's shell tool when its output names one ("Exit Code: N"), 1 when the
 * tool failed, else null: its stream-json shows the command's output but not its status.
 */
function shellExit(output: string, ok: boolean): number | null {
  const code = /Exit Code: (-?\d+)/.exec(output);
  if (code) return Number(code[1]);
  return ok ? null : 1;
}

/** `gemini --output-format stream-json`: init, message (streamed deltas), tool_use, tool_result, error, result. */
export function geminiReader(): EventReader {
  const calls = new Map<string, { tool: string; path: string | null }>();
  let reply: { text: string; at: string | null } | null = null;

  /** The assistant's streamed message, once it is complete (another event came). */
  function flushReply(): ReadEntry[] {
    if (reply === null || reply.text.trim() === "") {
      reply = null;
      return [];
    }
    const done: ReadEntry = { at: reply.at, body: { kind: "message", role: "assistant", text: reply.text } };
    reply = null;
    return [done];
  }

  function toolUse(event: AgentEvent, at: string | null): ReadEntry[] {
    const tool = str(event.tool_name) ?? "tool";
    const parameters = obj(event.parameters);
    const callId = str(event.tool_id);
    if (callId !== null)
      calls.set(callId, { tool, path: EDIT_TOOLS.has(tool) ? nonEmpty(parameters?.file_path) : null });
    const command = SHELL_TOOLS.has(tool) ? str(parameters?.command) : null;
    return [{ at, body: { kind: "tool_call", callId, tool, command, args: event.parameters ?? null } }];
  }

  function toolResult(event: AgentEvent, at: string | null): ReadEntry[] {
    const callId = str(event.tool_id);
    const call = callId === null ? undefined : calls.get(callId);
    const ok = event.status === "success";
    const error = obj(event.error);
    const output = str(event.output) ?? str(error?.message) ?? "";
    const exitCode = call && SHELL_TOOLS.has(call.tool) ? shellExit(output, ok) : ok ? null : 1;
    const out: ReadEntry[] = [
      { at, body: { kind: "tool_result", callId, exitCode, output, truncated: false } },
    ];
    if (call?.path && ok) {
      const change = /created/i.test(output)
        ? "add"
        : /overwrote|modified|replaced/i.test(output)
          ? "update"
          : null;
      out.push({ at, body: { kind: "file_edit", path: call.path, change } });
    }
    return out;
  }

  function usage(event: AgentEvent, at: string | null): ReadEntry[] {
    const stats = obj(event.stats);
    if (stats === null) return [];
    const models = obj(stats.models);
    const perModel =
      models === null ? [] : Object.entries(models).map(([name, value]) => [name, obj(value)] as const);
    const rows = perModel.length > 0 ? perModel : [[null, stats] as const];
    return rows.flatMap(([model, s]) =>
      s === null
        ? []
        : [
            {
              at,
              body: {
                kind: "usage" as const,
                inputTokens: num(s.input_tokens) ?? 0,
                // Thinking tokens are billed as output; only total_tokens counts them.
                outputTokens: Math.max(
                  num(s.output_tokens) ?? 0,
                  (num(s.total_tokens) ?? 0) - (num(s.input_tokens) ?? 0),
                ),
                cachedInputTokens: num(s.cached),
                model,
                costUsd: null,
              },
            },
          ],
    );
  }

  function read(event: AgentEvent, at: string | null): ReadEntry[] | null {
    switch (event.type) {
      case "init":
        return [
          {
            at,
            body: {
              kind: "message",
              role: "system",
              text: `Gemini CLI started: model ${str(event.model) ?? "unknown"}.`,
            },
          },
        ];
      case "message":
        return [
          {
            at,
            body: {
              kind: "message",
              role: event.role === "user" ? "user" : "system",
              text: str(event.content) ?? "",
            },
          },
        ];
      case "tool_use":
        return toolUse(event, at);
      case "tool_result":
        return toolResult(event, at);
      case "error": {
        const message = str(event.message) ?? "Gemini reported an error.";
        return [
          {
            at,
            body:
              event.severity === "warning"
                ? { kind: "message", role: "system", text: message }
                : { kind: "error", message },
          },
        ];
      }
      case "result": {
        const error = obj(event.error);
        const failed = event.status !== undefined && event.status !== "success";
        const message = str(error?.message) ?? `Gemini ended with status ${String(event.status)}.`;
        return [...(failed ? [{ at, body: { kind: "error" as const, message } }] : []), ...usage(event, at)];
      }
      default:
        return null;
    }
  }

  return {
    event(event, line) {
      const at = isoTime(event.timestamp);
      if (event.type === "message" && event.role === "assistant") {
        const content = str(event.content) ?? "";
        if (event.delta === true && reply !== null) reply.text += content;
        else {
          const before = flushReply();
          reply = { text: content, at };
          return before;
        }
        return [];
      }
      const found = read(event, at) ?? [{ body: { kind: "raw" as const, text: line } }];
      return [...flushReply(), ...found];
    },
    text(line) {
      return [...flushReply(), { body: { kind: "raw", text: line } }];
    },
    finish: flushReply,
  };
}
