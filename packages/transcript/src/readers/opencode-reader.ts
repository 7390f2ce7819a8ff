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

/** opencode's tools that write a file (`input.filePath`). */
const EDIT_TOOLS: Readonly<Record<string, "add" | "update" | null>> = { write: null, edit: "update" };

function tool(part: AgentEvent, at: string | null): ReadEntry[] {
  const name = str(part.tool) ?? "tool";
  const callId = str(part.callID);
  const state = obj(part.state) ?? {};
  const input = obj(state.input);
  const metadata = obj(state.metadata);
  const command = name === "bash" ? str(input?.command) : null;
  const out: ReadEntry[] = [
    { at, body: { kind: "tool_call", callId, tool: name, command, args: state.input ?? null } },
  ];
  const status = str(state.status);
  if (status === "completed" || status === "error") {
    const failed = status === "error";
    const output = str(state.output) ?? str(state.error) ?? str(metadata?.output) ?? "";
    const exit = num(metadata?.exit);
    const exitCode = exit !== null ? exit : failed ? 1 : name === "bash" ? 0 : null;
    out.push({
      at,
      body: { kind: "tool_result", callId, exitCode, output, truncated: metadata?.truncated === true },
    });
    const path = Object.hasOwn(EDIT_TOOLS, name) ? nonEmpty(input?.filePath) : null;
    if (path !== null && !failed) {
      const existed = metadata?.exists;
      const change = typeof existed === "boolean" ? (existed ? "update" : "add") : (EDIT_TOOLS[name] ?? null);
      out.push({ at, body: { kind: "file_edit", path, change } });
    }
  }
  return out;
}

function usage(part: AgentEvent, at: string | null): ReadEntry[] {
  const tokens = obj(part.tokens);
  if (tokens === null) return [];
  const cache = obj(tokens.cache);
  const read = num(cache?.read) ?? 0;
  return [
    {
      at,
      body: {
        kind: "usage",
        // `input` leaves out the cache reads and writes.
        inputTokens: (num(tokens.input) ?? 0) + read + (num(cache?.write) ?? 0),
        outputTokens: (num(tokens.output) ?? 0) + (num(tokens.reasoning) ?? 0),
        cachedInputTokens: read,
        model: null,
        costUsd: num(part.cost),
      },
    },
  ];
}

/** `opencode run --format json`: step_start, text, reasoning, tool_use, step_finish, error. */
export function opencodeReader(): EventReader {
  return {
    event(event) {
      const at = isoTime(event.timestamp);
      const part = obj(event.part);
      switch (event.type) {
        case "step_start":
          return [];
        case "text":
          return [{ at, body: { kind: "message", role: "assistant", text: str(part?.text) ?? "" } }];
        case "reasoning":
          return [{ at, body: { kind: "reasoning", text: str(part?.text) ?? "" } }];
        case "tool_use":
          return part === null ? null : tool(part, at);
        case "step_finish":
          return part === null ? null : usage(part, at);
        case "error": {
          const error = obj(event.error);
          const message =
            str(obj(error?.data)?.message) ??
            str(error?.message) ??
            str(error?.name) ??
            "opencode reported an error.";
          return [{ at, body: { kind: "error", message } }];
        }
        default:
          return null;
      }
    },
  };
}
