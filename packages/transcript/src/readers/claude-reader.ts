import {
  type AgentEvent,
  arr,
  type EventReader,
  isoTime,
  nonEmpty,
  num,
  obj,
  outputText,
  type ReadEntry,
  str,
} from "../event-reader.ts";

/** Claude's tools that write a file (`input.file_path`); the edit is recorded once the call succeeded. */
const EDIT_TOOLS = new Set(["Write", "Edit", "MultiEdit", "NotebookEdit"]);

interface Tokens {
  input: number;
  output: number;
  cached: number;
}

function tokensOf(usage: AgentEvent): Tokens {
  const cached = num(usage.cache_read_input_tokens) ?? 0;
  return {
    input: (num(usage.input_tokens) ?? 0) + cached + (num(usage.cache_creation_input_tokens) ?? 0),
    output: num(usage.output_tokens) ?? 0,
    cached,
  };
}

/** The big `init` event in one line: version, model, how many tools and servers. */
function initSummary(event: AgentEvent): string {
  const servers = arr(event.mcp_servers).length;
  const parts = [
    `model ${str(event.model) ?? "unknown"}`,
    `${arr(event.tools).length} tools`,
    ...(servers > 0 ? [`${servers} MCP servers`] : []),
    ...(str(event.permissionMode) ? [`permission mode ${str(event.permissionMode)}`] : []),
  ];
  const version = str(event.claude_code_version);
  return `Claude Code${version ? ` ${version}` : ""} started: ${parts.join(", ")}.`;
}

/** The exit status Claude's Bash tool reports: "Exit code N" on failure, else 0. */
function bashExit(content: string, isError: boolean): number {
  const code = /^Exit code (\d+)/.exec(content.trimStart());
  if (code) return Number(code[1]);
  return isError ? 1 : 0;
}

/** Claude's `api_retry` event: the model API call that failed, and which retry comes next. */
function apiRetry(event: Record<string, unknown>): string {
  const status = typeof event.error_status === "number" ? `HTTP ${event.error_status}` : null;
  const why = [status, str(event.error)].filter(Boolean).join(", ");
  const retry =
    typeof event.attempt === "number" && typeof event.max_retries === "number"
      ? `; retry ${event.attempt} of ${event.max_retries}`
      : "";
  return `API call failed${why ? ` (${why})` : ""}${retry}`;
}

/** `claude -p --output-format stream-json --verbose`: system, assistant, user and result events. */
export function claudeReader(): EventReader {
  const calls = new Map<string, { tool: string; path: string | null }>();
  const seenUsage = new Set<string>();
  const summed: Tokens = { input: 0, output: 0, cached: 0 };
  let lastText: string | null = null;

  function assistant(event: AgentEvent, at: string | null): ReadEntry[] {
    const message = obj(event.message) ?? {};
    const out: ReadEntry[] = [];
    for (const block of arr(message.content).map(obj)) {
      if (block === null) continue;
      if (block.type === "text" && nonEmpty(block.text)) {
        lastText = str(block.text);
        out.push({ at, body: { kind: "message", role: "assistant", text: lastText ?? "" } });
      } else if (block.type === "thinking" && nonEmpty(block.thinking)) {
        out.push({ at, body: { kind: "reasoning", text: str(block.thinking) ?? "" } });
      } else if (block.type === "tool_use") {
        const tool = str(block.name) ?? "tool";
        const input = obj(block.input);
        const callId = str(block.id);
        if (callId !== null)
          calls.set(callId, { tool, path: EDIT_TOOLS.has(tool) ? nonEmpty(input?.file_path) : null });
        const command = tool === "Bash" ? str(input?.command) : null;
        out.push({ at, body: { kind: "tool_call", callId, tool, command, args: block.input ?? null } });
      }
    }
    const id = str(message.id);
    const usage = obj(message.usage);
    if (usage !== null && (id === null || !seenUsage.has(id))) {
      if (id !== null) seenUsage.add(id);
      const tokens = tokensOf(usage);
      summed.input += tokens.input;
      summed.output += tokens.output;
      summed.cached += tokens.cached;
      out.push({
        at,
        body: {
          kind: "usage",
          inputTokens: tokens.input,
          outputTokens: tokens.output,
          cachedInputTokens: tokens.cached,
          model: str(message.model),
          costUsd: null,
        },
      });
    }
    return out;
  }

  function user(event: AgentEvent, at: string | null): ReadEntry[] {
    const message = obj(event.message) ?? {};
    if (typeof message.content === "string")
      return [{ at, body: { kind: "message", role: "user", text: message.content } }];
    const out: ReadEntry[] = [];
    const detail = obj(event.tool_use_result);
    for (const block of arr(message.content).map(obj)) {
      if (block === null) continue;
      if (block.type === "text" && nonEmpty(block.text)) {
        out.push({ at, body: { kind: "message", role: "user", text: str(block.text) ?? "" } });
        continue;
      }
      if (block.type !== "tool_result") continue;
      const callId = str(block.tool_use_id);
      const call = callId === null ? undefined : calls.get(callId);
      const isError = block.is_error === true;
      const output = outputText(block.content);
      const exitCode = call?.tool === "Bash" ? bashExit(output, isError) : isError ? 1 : null;
      out.push({ at, body: { kind: "tool_result", callId, exitCode, output, truncated: false } });
      if (call?.path && !isError) {
        const kind = str(detail?.type);
        const change = kind === "create" ? "add" : call.tool === "Write" && kind === null ? null : "update";
        out.push({ at, body: { kind: "file_edit", path: call.path, change } });
      }
    }
    return out;
  }

  /** The run's totals: what the per-message usage left out (Claude streams partial counts) and the cost. */
  function result(event: AgentEvent, at: string | null): ReadEntry[] {
    const out: ReadEntry[] = [];
    const text = str(event.result);
    if (event.is_error === true || (str(event.subtype) ?? "success") !== "success") {
      const errors = arr(event.errors).map(str).filter(Boolean).join("; ");
      out.push({
        at,
        body: { kind: "error", message: text || errors || `Claude ended with ${str(event.subtype)}.` },
      });
    } else if (nonEmpty(text) && text?.trim() !== lastText?.trim()) {
      out.push({ at, body: { kind: "message", role: "assistant", text: text ?? "" } });
    }
    const usage = obj(event.usage);
    const total = usage === null ? summed : tokensOf(usage);
    const cost = num(event.total_cost_usd);
    const rest = {
      input: Math.max(0, total.input - summed.input),
      output: Math.max(0, total.output - summed.output),
      cached: Math.max(0, total.cached - summed.cached),
    };
    if (cost !== null || rest.input + rest.output + rest.cached > 0)
      out.push({
        at,
        body: {
          kind: "usage",
          inputTokens: rest.input,
          outputTokens: rest.output,
          cachedInputTokens: rest.cached,
          model: null,
          costUsd: cost,
        },
      });
    return out;
  }

  return {
    event(event) {
      const at = isoTime(event.timestamp);
      switch (event.type) {
        case "system":
          if (event.subtype === "init")
            return [{ at, body: { kind: "message", role: "system", text: initSummary(event) } }];
          if (event.subtype === "api_retry")
            return [{ at, body: { kind: "error", message: apiRetry(event) } }];
          return null;
        case "assistant":
          return assistant(event, at);
        case "user":
          return user(event, at);
        case "result":
          return result(event, at);
        case "stream_event":
          return [];
        default:
          return null;
      }
    },
  };
}
