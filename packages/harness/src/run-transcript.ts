import { lastLines } from "./failure-classifier.ts";

/**
 * What a run's output says in the operator's words: the model's last message and the last
 * command it ran, read from each preset CLI's machine-readable stream (codex `exec --json`,
 * claude `stream-json`, opencode `run --format json`, gemini `stream-json`) or Copilot's text.
 * Incident and decision bodies show this instead of the raw tail of JSON events.
 */
export interface LastWords {
  /** The model's last message to the user, or null. */
  message: string | null;
  /** The last shell command it ran, with its exit status when the CLI reports it, or null. */
  command: string | null;
}

/** Characters kept of a message or a command. */
const MAX_TEXT = 600;

type Event = Record<string, unknown>;

function events(output: string): Event[] {
  const out: Event[] = [];
  for (const line of output.split("\n")) {
    const trimmed = line.trim();
    if (!trimmed.startsWith("{")) continue;
    try {
      const parsed: unknown = JSON.parse(trimmed);
      if (typeof parsed === "object" && parsed !== null) out.push(parsed as Event);
    } catch {
      // not an event: a CLI's plain line
    }
  }
  return out;
}

const text = (value: unknown): string | null =>
  typeof value === "string" && value.trim() !== "" ? value.trim() : null;

function withExit(command: string, exit: unknown): string {
  return typeof exit === "number" ? `${command} (exit ${exit})` : command;
}

function codexWords(list: readonly Event[]): LastWords {
  const words: LastWords = { message: null, command: null };
  for (const e of list) {
    const item = e.item as Event | undefined;
    if (e.type !== "item.completed" || !item) continue;
    if (item.type === "agent_message") words.message = text(item.text) ?? words.message;
    if (item.type === "command_execution" && text(item.command))
      words.command = withExit(text(item.command) as string, item.exit_code);
  }
  return words;
}

function claudeWords(list: readonly Event[]): LastWords {
  const words: LastWords = { message: null, command: null };
  for (const e of list) {
    const content = (e.message as { content?: unknown } | undefined)?.content;
    if (e.type === "assistant" && Array.isArray(content)) {
      for (const c of content as Event[]) {
        if (c.type === "text") words.message = text(c.text) ?? words.message;
        const input = c.input as Event | undefined;
        if (c.type === "tool_use" && c.name === "Bash" && text(input?.command))
          words.command = text(input?.command);
      }
    }
    if (e.type === "result" && e.is_error !== true) words.message = text(e.result) ?? words.message;
  }
  return words;
}

function opencodeWords(list: readonly Event[]): LastWords {
  const words: LastWords = { message: null, command: null };
  for (const e of list) {
    const part = e.part as Event | undefined;
    if (!part) continue;
    if (e.type === "text") words.message = text(part.text) ?? words.message;
    const state = part.state as Event | undefined;
    const input = state?.input as Event | undefined;
    if (e.type === "tool_use" && part.tool === "bash" && text(input?.command)) {
      const metadata = state?.metadata as Event | undefined;
      words.command = withExit(text(input?.command) as string, metadata?.exit);
    }
  }
  return words;
}

function geminiWords(list: readonly Event[]): LastWords {
  const words: LastWords = { message: null, command: null };
  let reply = "";
  for (const e of list) {
    if (e.type === "message" && e.role === "assistant" && typeof e.content === "string") {
      reply = e.delta === true ? reply + e.content : e.content;
      words.message = text(reply) ?? words.message;
    } else if (e.type !== "message") {
      reply = "";
    }
    const parameters = e.parameters as Event | undefined;
    if (e.type === "tool_use" && e.tool_name === "run_shell_command" && text(parameters?.command))
      words.command = text(parameters?.command);
  }
  return words;
}

/** Copilot's text: `● Title (shell)` then `│ command` lines; its reply is plain text before the footer. */
function copilotWords(output: string): LastWords {
  const lines = output.split("\n");
  const footer = lines.findIndex((line) => /^Changes\s+[+-]/.test(line));
  const body = footer === -1 ? lines : lines.slice(0, footer);
  let command: string[] | null = null;
  let message: string[] = [];
  let inCommand = false;
  for (const line of body) {
    if (/^● .*\(shell\)\s*$/.test(line)) {
      command = [];
      inCommand = true;
      message = [];
      continue;
    }
    const piped = /^\s+[│└] ?(.*)$/.exec(line);
    if (piped) {
      if (inCommand && line.trimStart().startsWith("│")) command?.push(piped[1] ?? "");
      continue;
    }
    inCommand = false;
    if (line.startsWith("● ")) continue;
    if (line.trim() === "") {
      if (message.length > 0 && message.at(-1) !== "") message.push("");
      continue;
    }
    message.push(line.trim());
  }
  const said = message.join("\n").trim();
  return {
    message: said === "" ? null : said,
    command: command && command.length > 0 ? command.join("\n") : null,
  };
}

const bounded = (value: string | null): string | null =>
  value === null ? null : value.length > MAX_TEXT ? `${value.slice(0, MAX_TEXT - 1)}…` : value;

/** How each preset CLI's output is read. */
const READERS: Readonly<Record<string, (output: string) => LastWords>> = {
  codex: (output) => codexWords(events(output)),
  claude: (output) => claudeWords(events(output)),
  opencode: (output) => opencodeWords(events(output)),
  gemini: (output) => geminiWords(events(output)),
  copilot: copilotWords,
};

/** The model's last message and command in a run's output, read the way its CLI prints them. */
export function lastWords(output: string, agent: string | null | undefined): LastWords {
  const read = agent && Object.hasOwn(READERS, agent) ? READERS[agent] : undefined;
  const words = read ? read(output) : { message: null, command: null };
  return { message: bounded(words.message), command: bounded(words.command) };
}

/** Plain lines of the output kept when the CLI's stream says nothing readable. */
const PLAIN_TAIL_LINES = 8;

/**
 * The part of a run's output an incident or decision card shows: the model's last message and
 * its last command when the CLI's stream has them, else the last plain (non-JSON) lines.
 */
export function describeRunOutput(output: string, agent: string | null | undefined): string {
  const words = lastWords(output, agent);
  const parts: string[] = [];
  if (words.message !== null) parts.push(`The model's last message: ${words.message}`);
  if (words.command !== null) parts.push(`Its last command: ${words.command}`);
  if (parts.length > 0) return parts.join("\n");
  const plain = output
    .split("\n")
    .filter((line) => !line.trim().startsWith("{"))
    .join("\n");
  const tail = lastLines(plain, PLAIN_TAIL_LINES);
  return tail === "" ? "The run printed nothing readable." : `Last lines of the run:\n${tail}`;
}
