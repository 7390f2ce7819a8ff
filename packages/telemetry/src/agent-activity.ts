import { createTranscriptFeed, type TranscriptEntry, type TranscriptFeed } from "@overseer/transcript";

/**
 * One model call or tool call of an agent, as a child span of the run's `agent` phase, named
 * and attributed after the OpenTelemetry GenAI conventions (`chat {model}`, `execute_tool {tool}`,
 * `gen_ai.*`). Times are epoch milliseconds.
 */
export interface ActivitySpan {
  kind: "model" | "tool";
  name: string;
  start: number;
  end: number;
  attributes: Record<string, string | number>;
}

/** The most characters of a tool's command kept on its span. */
const COMMAND_CHARS = 1024;

const KEPT_KINDS = new Set<TranscriptEntry["kind"]>([
  "message",
  "reasoning",
  "tool_call",
  "tool_result",
  "usage",
]);

/**
 * Reads an agent's output as it streams (the transcript parser of its CLI, run-contract `agent`)
 * and keeps, stamped with the time each line arrived, what the spans need: model output, tool
 * calls and results, usage. Texts are dropped (spans carry no conversation); at most
 * `maxEntries` entries are kept.
 */
export class AgentActivityRecorder {
  private readonly feed: TranscriptFeed;
  private readonly entries: TranscriptEntry[] = [];
  private dropped = 0;

  constructor(
    agent: string | null | undefined,
    private readonly maxEntries: number,
    now: () => string = () => new Date().toISOString(),
  ) {
    this.feed = createTranscriptFeed(agent, { now });
  }

  write(chunk: string): void {
    this.keep(this.feed.write(chunk));
  }

  /** The entries kept, once the output ended. */
  end(): { entries: TranscriptEntry[]; dropped: number } {
    this.keep(this.feed.end());
    return { entries: this.entries, dropped: this.dropped };
  }

  private keep(found: readonly TranscriptEntry[]): void {
    for (const entry of found) {
      if (!KEPT_KINDS.has(entry.kind)) continue;
      if (this.entries.length >= this.maxEntries) {
        this.dropped++;
        continue;
      }
      this.entries.push(stripped(entry));
    }
  }
}

function stripped(entry: TranscriptEntry): TranscriptEntry {
  switch (entry.kind) {
    case "message":
    case "reasoning":
      return { ...entry, text: "" };
    case "tool_result":
      return { ...entry, output: "" };
    case "tool_call":
      return { ...entry, args: null };
    default:
      return entry;
  }
}

/**
 * The model and tool calls of one agent phase (`window`, epoch ms) from its transcript entries:
 * a model call runs from the agent's start or the last tool result to the model's output that
 * follows (messages, reasoning, the tool call it ends with); a tool call from its call to its
 * result (matched by call id, else the oldest open one), or to the agent's end when no result
 * came. Usage counts on the model call it follows. Entries without a time take the last time
 * seen; every time is held inside the window and never runs backwards. At most `maxSpans`.
 */
export function agentActivitySpans(
  entries: readonly TranscriptEntry[],
  window: { start: number; end: number },
  maxSpans: number,
): { spans: ActivitySpan[]; dropped: number } {
  const spans: ActivitySpan[] = [];
  let dropped = 0;
  let last = window.start;
  let boundary = window.start;
  let model: ActivitySpan | null = null;
  let lastModel: ActivitySpan | null = null;
  const openTools: { callId: string | null; span: ActivitySpan }[] = [];

  const add = (span: ActivitySpan): ActivitySpan | null => {
    if (spans.length >= maxSpans) {
      dropped++;
      return null;
    }
    spans.push(span);
    return span;
  };
  const modelOutput = (t: number): ActivitySpan | null => {
    model ??= add({
      kind: "model",
      name: "chat",
      start: boundary,
      end: t,
      attributes: { "gen_ai.operation.name": "chat" },
    });
    if (model) {
      model.end = t;
      lastModel = model;
    }
    return model;
  };

  for (const entry of entries) {
    const parsed = entry.at === null ? Number.NaN : Date.parse(entry.at);
    const t = Number.isNaN(parsed) ? last : Math.min(window.end, Math.max(last, parsed));
    last = t;
    switch (entry.kind) {
      case "message":
        if (entry.role === "assistant") modelOutput(t);
        break;
      case "reasoning":
        modelOutput(t);
        break;
      case "tool_call": {
        modelOutput(t);
        model = null;
        const span = add({
          kind: "tool",
          name: `execute_tool ${entry.tool}`,
          start: t,
          end: window.end,
          attributes: {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": entry.tool,
            ...(entry.callId !== null ? { "gen_ai.tool.call.id": entry.callId } : {}),
            ...(entry.command !== null
              ? { "overseer.tool.command": entry.command.slice(0, COMMAND_CHARS) }
              : {}),
          },
        });
        if (span) openTools.push({ callId: entry.callId, span });
        boundary = t;
        break;
      }
      case "tool_result": {
        const index = entry.callId !== null ? openTools.findIndex((open) => open.callId === entry.callId) : 0;
        const open = index >= 0 ? openTools.splice(index, 1)[0] : undefined;
        if (open) {
          open.span.end = t;
          if (entry.exitCode !== null) open.span.attributes["overseer.tool.exit_code"] = entry.exitCode;
        }
        model = null;
        boundary = t;
        break;
      }
      case "usage": {
        const target: ActivitySpan | null = model ?? lastModel ?? modelOutput(t);
        if (target) countUsage(target, entry);
        break;
      }
      default:
        break;
    }
  }
  return { spans, dropped };
}

function countUsage(span: ActivitySpan, usage: Extract<TranscriptEntry, { kind: "usage" }>): void {
  const add = (key: string, value: number) => {
    span.attributes[key] = (Number(span.attributes[key]) || 0) + value;
  };
  add("gen_ai.usage.input_tokens", usage.inputTokens);
  add("gen_ai.usage.output_tokens", usage.outputTokens);
  if (usage.cachedInputTokens !== null) add("gen_ai.usage.cache_read.input_tokens", usage.cachedInputTokens);
  if (usage.costUsd !== null) add("overseer.usage.cost_usd", usage.costUsd);
  if (usage.model !== null) {
    span.attributes["gen_ai.request.model"] = usage.model;
    span.name = `chat ${usage.model}`;
  }
}
