import {
  type AgentEvent,
  arr,
  type EventReader,
  nonEmpty,
  num,
  obj,
  type ReadEntry,
  str,
} from "../event-reader.ts";

/** Codex's notice when a custom provider's model is not in its catalogue: harmless, in every such run. */
const MODEL_METADATA = /^Model metadata for `([^`]+)` not found/;

const CHANGE_KINDS = { add: "add", update: "update", delete: "delete" } as const;

/** Codex items that are tool calls: their shell command (if any), tool name and arguments. */
function toolCall(item: AgentEvent): ReadEntry | null {
  const callId = str(item.id);
  switch (item.type) {
    case "command_execution":
      return {
        body: { kind: "tool_call", callId, tool: "shell", command: str(item.command), args: null },
      };
    case "mcp_tool_call":
      return {
        body: {
          kind: "tool_call",
          callId,
          tool: [str(item.server), str(item.tool)].filter(Boolean).join(".") || "mcp",
          command: null,
          args: item.arguments ?? null,
        },
      };
    case "web_search":
      return {
        body: { kind: "tool_call", callId, tool: "web_search", command: null, args: { query: item.query } },
      };
    default:
      return null;
  }
}

function toolResult(item: AgentEvent): ReadEntry | null {
  const callId = str(item.id);
  if (item.type === "command_execution") {
    return {
      body: {
        kind: "tool_result",
        callId,
        exitCode: num(item.exit_code),
        output: str(item.aggregated_output) ?? "",
        truncated: false,
      },
    };
  }
  if (item.type === "mcp_tool_call") {
    const error = str(obj(item.error)?.message);
    const result = item.result === undefined || item.result === null ? "" : JSON.stringify(item.result);
    return {
      body: {
        kind: "tool_result",
        callId,
        exitCode: error === null ? null : 1,
        output: error ?? result,
        truncated: false,
      },
    };
  }
  return null;
}

function completed(item: AgentEvent, started: Set<string>): ReadEntry[] | null {
  const call = toolCall(item);
  if (call !== null) {
    const id = str(item.id);
    const entries = id !== null && started.has(id) ? [] : [call];
    if (id !== null) started.delete(id);
    const result = toolResult(item);
    return result === null ? entries : [...entries, result];
  }
  switch (item.type) {
    case "agent_message":
      return [{ body: { kind: "message", role: "assistant", text: str(item.text) ?? "" } }];
    case "reasoning":
      return [{ body: { kind: "reasoning", text: str(item.text) ?? "" } }];
    case "file_change":
      return arr(item.changes).flatMap((change) => {
        const path = nonEmpty(obj(change)?.path);
        const kind = str(obj(change)?.kind);
        if (path === null) return [];
        const known = kind !== null && Object.hasOwn(CHANGE_KINDS, kind);
        return [
          {
            body: {
              kind: "file_edit" as const,
              path,
              change: known ? CHANGE_KINDS[kind as keyof typeof CHANGE_KINDS] : null,
            },
          },
        ];
      });
    case "todo_list": {
      const steps = arr(item.items).map((step) => {
        const entry = obj(step);
        return `${entry?.completed === true ? "[x]" : "[ ]"} ${str(entry?.text) ?? ""}`;
      });
      return [{ body: { kind: "message", role: "system", text: `Plan:\n${steps.join("\n")}` } }];
    }
    case "error": {
      const message = str(item.message) ?? "";
      const metadata = MODEL_METADATA.exec(message);
      if (metadata)
        return [
          {
            body: {
              kind: "message",
              role: "system",
              text: `Codex has no metadata for model ${metadata[1]} and uses its defaults (usual with a custom provider).`,
            },
          },
        ];
      return [{ body: { kind: "error", message } }];
    }
    default:
      return null;
  }
}

/** `codex exec --json`: thread/turn events and items (started, updated, completed). */
export function codexReader(): EventReader {
  const started = new Set<string>();
  return {
    event(event) {
      const item = obj(event.item);
      switch (event.type) {
        case "thread.started":
        case "turn.started":
          return [];
        case "item.started": {
          const call = item === null ? null : toolCall(item);
          if (call === null) return item === null ? null : [];
          if (call.body.kind === "tool_call" && call.body.callId !== null) started.add(call.body.callId);
          return [call];
        }
        case "item.updated":
          return item === null ? null : [];
        case "item.completed":
          return item === null ? null : completed(item, started);
        case "turn.completed": {
          const usage = obj(event.usage);
          if (usage === null) return [];
          return [
            {
              body: {
                kind: "usage",
                inputTokens: num(usage.input_tokens) ?? 0,
                outputTokens: num(usage.output_tokens) ?? 0,
                cachedInputTokens: num(usage.cached_input_tokens),
                model: null,
                costUsd: null,
              },
            },
          ];
        }
        case "turn.failed":
          return [{ body: { kind: "error", message: str(obj(event.error)?.message) ?? "The turn failed." } }];
        case "error":
          return [{ body: { kind: "error", message: str(event.message) ?? "Codex reported an error." } }];
        default:
          return null;
      }
    },
  };
}
