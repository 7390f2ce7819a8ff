import { useEffect, useState } from "preact/hooks";
import { client } from "../api/client.ts";
import type { Run } from "../api/types.ts";
import { StatusPill } from "../components/bits.tsx";
import { CommitDiffToggle } from "../components/diff-view.tsx";
import { PhaseTimeline } from "../components/phase-timeline.tsx";
import { Load } from "../components/states.tsx";
import { RunOutput } from "../components/transcript/run-output.tsx";
import { formatCount, formatDuration, formatTime } from "../lib/format.ts";
import { useLoad } from "../lib/hooks.ts";
import { href } from "../lib/router.ts";
import { openSse } from "../lib/sse.ts";

const MAX_LOG_CHARS = 2_000_000;

type LiveUsage = Pick<Run, "tokens_in" | "tokens_out" | "tokens_cached" | "cost">;

/**
 * One run: facts, prompt, the commit diff, and its output: the transcript (live over the
 * project stream, searchable, with a token and cost meter; file edits open the diff) and the
 * raw log (SSE) one click away.
 */
export function RunView({ runId }: { runId: string }) {
  const run = useLoad(() => client.run(runId), `run:${runId}`);
  const workers = useLoad(() => client.workers(), `workers:${runId}`);
  const [log, setLog] = useState("");
  const [streamState, setStreamState] = useState("connecting");
  /** The live token/cost counter: the stream's `usage` events (the run's recorded usage as it grows). */
  const [liveUsage, setLiveUsage] = useState<LiveUsage | null>(null);
  /** A file the operator asked to see in the commit diff (`n` makes each click count). */
  const [diffFocus, setDiffFocus] = useState<{ path: string; n: number } | null>(null);
  useEffect(() => {
    setLog("");
    setLiveUsage(null);
    const close = openSse(`/api/runs/${encodeURIComponent(runId)}/log/stream`, {
      lastEventId: "0",
      onMessage: (m) => {
        if (m.event === "log") {
          const { text } = JSON.parse(m.data) as { text: string };
          setLog((prev) => (prev + text).slice(-MAX_LOG_CHARS));
        } else if (m.event === "usage") {
          setLiveUsage(JSON.parse(m.data) as LiveUsage);
        } else if (m.event === "end") {
          run.reload();
        }
      },
      onState: (s, detail) =>
        setStreamState(
          s === "open"
            ? "live"
            : s === "closed"
              ? detail
                ? `closed: ${detail}`
                : "ended"
              : `retrying${detail ? `: ${detail}` : ""}`,
        ),
    });
    return close;
  }, [runId, run.reload]);
  return (
    <section aria-labelledby="run-title">
      <Load state={run} what={`run ${runId}`}>
        {(r) => {
          const worker = workers.data?.workers.find((w) => w.id === r.worker_id);
          const u = liveUsage ?? r;
          return (
            <>
              <p class="crumbs">
                <a href={href.fleet()}>Fleet</a> / <a href={href.project(r.project_id)}>{r.project_id}</a> /{" "}
                <a href={href.task(r.project_id, r.task_id)}>{r.task_id}</a> /
              </p>
              <h1 id="run-title">
                {r.action} #{r.number} <StatusPill status={r.status} />
                {r.transition ? <span class="pill">{r.transition}</span> : null}
              </h1>
              <dl class="facts">
                <dt>Agent</dt>
                <dd>
                  <code>{r.agent_id}</code>
                </dd>
                <dt>Worker</dt>
                <dd>{r.worker_id ?? "–"}</dd>
                <dt>Sandbox driver</dt>
                <dd data-testid="run-sandbox">
                  {r.sandbox_driver
                    ? `${r.sandbox_driver}${r.sandbox_driver === "none" ? " (UNSAFE: no sandbox)" : ""}`
                    : worker
                      ? `not recorded; its worker runs ${worker.sandbox}${worker.unsafe ? " (UNSAFE: no sandbox)" : ""}`
                      : "not recorded"}
                </dd>
                <dt>Run image</dt>
                <dd data-testid="run-image">
                  {r.image_digest ? <code>{r.image_digest}</code> : "the worker's own system"}
                  {r.environment?.image ? (
                    <>
                      {" "}
                      (<code>{r.environment.image}</code>, from{" "}
                      {r.environment.image_from === "environment_file"
                        ? ".overseer/environment.yml"
                        : "the runner config"}
                      )
                    </>
                  ) : null}
                </dd>
                <dt>Environment file</dt>
                <dd data-testid="run-environment">
                  {r.environment?.file
                    ? `${r.environment.file.path}: ${r.environment.setup_commands} setup command(s)${
                        r.environment.agent_package ? `, agent CLI ${r.environment.agent_package}` : ""
                      }${r.environment.ignored_image ? `; its image ${r.environment.ignored_image} overridden by sandbox.image` : ""}`
                    : "none"}
                </dd>
                <dt>Started</dt>
                <dd>{formatTime(r.started_at)}</dd>
                <dt>Duration</dt>
                <dd>{formatDuration(r.duration_ms)}</dd>
                <dt>Exit</dt>
                <dd>
                  {r.exit_code ?? "–"}
                  {r.signal ? ` (signal ${r.signal})` : ""}
                  {r.timed_out ? " (timed out)" : ""}
                </dd>
                <dt>Transition</dt>
                <dd>{r.transition ?? "none"}</dd>
                <dt>Scope</dt>
                <dd class={r.scope_violations.length ? "error" : ""}>
                  {r.scope_violations.length
                    ? `violations: ${r.scope_violations.join(", ")}`
                    : "every change within scope"}
                </dd>
                <dt>Usage{liveUsage && streamState === "live" ? " (live)" : ""}</dt>
                <dd data-testid="run-usage">
                  {formatCount(u.tokens_in)} in ({formatCount(u.tokens_cached)} cached) ·{" "}
                  {formatCount(u.tokens_out)} out · {u.cost}
                </dd>
                <dt>Usage read from</dt>
                <dd>{r.usage_source ?? "nothing reported"}</dd>
                {r.failure ? (
                  <>
                    <dt>Failure</dt>
                    <dd class="error">{r.failure}</dd>
                  </>
                ) : null}
              </dl>
              <PhaseTimeline phases={r.phases} />
              {r.commit_sha ? <CommitDiffToggle runId={r.id} sha={r.commit_sha} focus={diffFocus} /> : null}
              <PromptBox runId={r.id} chars={r.prompt_chars} />
              <RunOutput
                run={r}
                log={log}
                logState={streamState}
                onShowDiff={
                  r.commit_sha ? (path) => setDiffFocus((f) => ({ path, n: (f?.n ?? 0) + 1 })) : null
                }
              />
            </>
          );
        }}
      </Load>
    </section>
  );
}

function PromptBox({ runId, chars }: { runId: string; chars: number | null }) {
  const [prompt, setPrompt] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  return (
    <details
      onToggle={async (e) => {
        if ((e.currentTarget as HTMLDetailsElement).open && prompt === null) {
          try {
            setPrompt((await client.prompt(runId)).prompt ?? "(not reported yet)");
          } catch (err) {
            setError((err as Error).message);
          }
        }
      }}
    >
      <summary>Prompt{chars !== null ? ` (${formatCount(chars)} characters)` : ""}</summary>
      {error ? <p class="error">{error}</p> : <pre class="prompt">{prompt ?? "Loading…"}</pre>}
    </details>
  );
}
