import {
  type AgentEvent,
  type EventReader,
  isoTime,
  nonEmpty,
  num,
  obj,
  outputText,
  type ReadEntry,
  str,
} from "../event-reader.ts";

/** Copilot's tools that write a file (`arguments.path`). */
const EDIT_TOOLS: Readonly<Record<string, "add" | "update" | null>> = {
  create: "add",
  edit: "update",
  str_replace: "update",
  write: null,
};
const SHELL_TOOLS = new Set(["bash", "shell", "powershell"]);

/** Events that carry nothing an operator reads (bookkeeping of the session). */
const QUIET = new Set([
  "session.permissions_changed",
  "session.info",
  "session.model_change",
  "session.context_changed",
  "session.truncation",
  "assistant.turn_start",
  "assistant.turn_end",
  "assistant.message_delta",
  "assistant.reasoning_delta",
  "assistant.intent",
  "tool.execution_partial_result",
  "tool.user_requested",
  "pending_messages.modified",
  "hook.start",
  "hook.end",
]);

/** Copilot's session file (`~/.copilot/session-state/ID/events.jsonl`): `{type, data, timestamp}` events. */
export function copilotReader(): EventReader {
  const calls = new Map<string, { tool: string; path: string | null }>();

  function toolStart(data: AgentEvent, at: string | null): ReadEntry[] {
    const tool = str(data.toolName) ?? "tool";
    const args = obj(data.arguments);
    const callId = str(data.toolCallId);
    const path = Object.hasOwn(EDIT_TOOLS, tool) ? nonEmpty(args?.path) : null;
    if (callId !== null) calls.set(callId, { tool, path });
    const command = SHELL_TOOLS.has(tool) ? str(args?.command) : null;
    return [{ at, body: { kind: "tool_call", callId, tool, command, args: data.arguments ?? null } }];
  }

  function toolComplete(data: AgentEvent, at: string | null): ReadEntry[] {
    const callId = str(data.toolCallId);
    const call = callId === null ? undefined : calls.get(callId);
    const ok = data.success !== false;
    const result = obj(data.result);
    const error = obj(data.error);
    const output = outputText(result?.detailedContent ?? result?.content ?? error?.message ?? "");
    const exit = num(obj(data.shellExecution)?.exitCode);
    const exitCode = exit !== null ? exit : ok ? (call && SHELL_TOOLS.has(call.tool) ? 0 : null) : 1;
    const out: ReadEntry[] = [
      { at, body: { kind: "tool_result", callId, exitCode, output, truncated: false } },
    ];
    if (call?.path && ok)
      out.push({ at, body: { kind: "file_edit", path: call.path, change: EDIT_TOOLS[call.tool] ?? null } });
    return out;
  }

  function read(type: string, data: AgentEvent, at: string | null): ReadEntry[] | null {
    switch (type) {
      case "session.start": {
        const version = str(data.copilotVersion);
        return [
          {
            at,
            body: {
              kind: "message",
              role: "system",
              text: `Copilot CLI${version ? ` ${version}` : ""} started: model ${str(data.selectedModel) ?? "unknown"}.`,
            },
          },
        ];
      }
      case "system.message": {
        const text = str(data.content) ?? "";
        return [
          {
            at,
            body: {
              kind: "message",
              role: "system",
              text: `Copilot's system prompt (${text.length} characters).`,
            },
          },
        ];
      }
      case "user.message":
        return [{ at, body: { kind: "message", role: "user", text: str(data.content) ?? "" } }];
      case "assistant.message": {
        const out: ReadEntry[] = [];
        const reasoning = nonEmpty(data.reasoningText);
        if (reasoning !== null) out.push({ at, body: { kind: "reasoning", text: reasoning } });
        const text = nonEmpty(data.content);
        if (text !== null) out.push({ at, body: { kind: "message", role: "assistant", text } });
        return out;
      }
      case "assistant.reasoning":
        return [{ at, body: { kind: "reasoning", text: str(data.content) ?? "" } }];
      case "tool.execution_start":
        return toolStart(data, at);
      case "tool.execution_complete":
        return toolComplete(data, at);
      case "session.usage_record": {
        const usage = obj(data.usage) ?? {};
        const cached = num(usage.cacheReadTokens) ?? 0;
        return [
          {
            at,
            body: {
              kind: "usage",
              inputTokens: num(usage.inputTokens) ?? 0,
              outputTokens: (num(usage.outputTokens) ?? 0) + (num(usage.reasoningTokens) ?? 0),
              cachedInputTokens: cached,
              model: str(usage.model),
              costUsd: null,
            },
          },
        ];
      }
      case "session.error":
        return [{ at, body: { kind: "error", message: str(data.message) ?? "Copilot reported an error." } }];
      case "session.warning":
        return [{ at, body: { kind: "message", role: "system", text: str(data.message) ?? "" } }];
      case "session.shutdown":
        return [];
      default:
        return QUIET.has(type) ? [] : null;
    }
  }

  return {
    event(event) {
      const type = str(event.type);
      if (type === null) return null;
      return read(type, obj(event.data) ?? {}, isoTime(event.timestamp));
    },
  };
}
