import type { TranscriptEntry } from "../../api/types.ts";
import { formatCount } from "../../lib/format.ts";
import type { ToolCall, ToolResult, TranscriptRow } from "../../lib/transcript-model.ts";

/**
 * One row of a transcript: a message, a reasoning summary, a tool call with its collapsible
 * output and exit code, a file edit (linked to the run's commit diff), usage, an error or a raw
 * line. Every text is a text node: nothing the agent printed becomes markup.
 */
export function TranscriptRowView({
  row,
  onShowDiff,
}: {
  row: TranscriptRow;
  /** Opens the run's commit diff at this path; absent while there is no commit to show. */
  onShowDiff?: ((path: string, runId: string | undefined) => void) | undefined;
}) {
  const e = row.entry;
  return (
    <li class={`tr kind-${e.kind}`} data-kind={e.kind} data-seq={e.seq}>
      <time class="tr-at" dateTime={e.at ?? undefined}>
        {e.at ? new Date(e.at).toLocaleTimeString() : ""}
      </time>
      <div class="tr-body">
        {e.kind === "tool_call" ? (
          <ToolCallView call={e} result={row.result ?? null} />
        ) : (
          <EntryBody entry={e} onShowDiff={onShowDiff} />
        )}
      </div>
    </li>
  );
}

function EntryBody({
  entry: e,
  onShowDiff,
}: {
  entry: Exclude<TranscriptEntry, ToolCall>;
  onShowDiff?: ((path: string, runId: string | undefined) => void) | undefined;
}) {
  switch (e.kind) {
    case "message":
      return (
        <>
          <span class="tr-label">
            {e.role === "assistant" ? "Agent" : e.role === "user" ? "User" : "System"}
          </span>
          <p class="tr-text">{e.text}</p>
        </>
      );
    case "reasoning":
      return (
        <>
          <span class="tr-label">Thinking</span>
          <p class="tr-text tr-reasoning">{e.text}</p>
        </>
      );
    case "tool_result":
      return <OutputDetails result={e} title="Tool output" />;
    case "file_edit":
      return (
        <>
          <span class="tr-label">
            {e.change === "add" ? "Added" : e.change === "delete" ? "Deleted" : "Edited"}
          </span>{" "}
          <code>{e.path}</code>{" "}
          {onShowDiff ? (
            <button type="button" class="link" onClick={() => onShowDiff(e.path, e.runId)}>
              Show in diff
            </button>
          ) : (
            <span class="muted">(in the diff once the run commits)</span>
          )}
        </>
      );
    case "usage":
      return <p class="tr-usage muted">{usageText(e)}</p>;
    case "error":
      return (
        <>
          <span class="tr-label error">Error</span>
          <p class="tr-text error">{e.message}</p>
        </>
      );
    case "raw":
      return <pre class="tr-raw-text">{e.text}</pre>;
  }
}

function usageText(e: Extract<TranscriptEntry, { kind: "usage" }>): string {
  const cached = e.cachedInputTokens ? ` (${formatCount(e.cachedInputTokens)} cached)` : "";
  const parts = [`${formatCount(e.inputTokens)} in${cached}`, `${formatCount(e.outputTokens)} out`];
  if (e.model) parts.push(e.model);
  if (e.costUsd !== null) parts.push(`$${e.costUsd.toFixed(4)}`);
  return `Tokens: ${parts.join(" · ")}`;
}

function ExitBadge({ result }: { result: ToolResult | null }) {
  if (!result) return <span class="pill tr-running">running…</span>;
  if (result.exitCode === null) return <span class="pill">done</span>;
  return (
    <span class={`pill ${result.exitCode === 0 ? "tr-ok" : "tr-fail"}`} data-testid="exit-code">
      exit {result.exitCode}
    </span>
  );
}

function ToolCallView({ call, result }: { call: ToolCall; result: ToolResult | null }) {
  const args =
    call.command === null && call.args !== null && call.args !== undefined ? argsText(call.args) : "";
  return (
    <>
      <span class="tr-label">{call.command !== null ? `Ran (${call.tool})` : `Tool ${call.tool}`}</span>{" "}
      <ExitBadge result={result} />
      {call.command !== null ? <pre class="tr-command">$ {call.command}</pre> : null}
      {args ? <pre class="tr-command">{args}</pre> : null}
      {result ? <OutputDetails result={result} title="Output" /> : null}
    </>
  );
}

/** A tool's output, collapsed unless the call failed. */
function OutputDetails({ result, title }: { result: ToolResult; title: string }) {
  const lines = result.output === "" ? 0 : result.output.split("\n").length;
  return (
    <details class="tr-output" open={result.exitCode !== null && result.exitCode !== 0}>
      <summary>
        {title} ({lines === 0 ? "empty" : `${lines} line${lines === 1 ? "" : "s"}`}
        {result.truncated ? ", cut" : ""})
      </summary>
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard */}
      <pre tabIndex={0}>{result.output === "" ? "(no output)" : result.output}</pre>
      {result.truncated ? <p class="muted">The output was cut to its head and tail.</p> : null}
    </details>
  );
}

function argsText(args: unknown): string {
  const json = typeof args === "string" ? args : JSON.stringify(args, null, 2);
  return json.length > 2000 ? `${json.slice(0, 1999)}…` : json;
}
