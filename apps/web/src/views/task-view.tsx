import { useState } from "preact/hooks";
import { client } from "../api/client.ts";
import type { ProjectEvent, RunSummary, Task } from "../api/types.ts";
import { StatusPill } from "../components/bits.tsx";
import { ConfirmButton } from "../components/confirm-button.tsx";
import { CommitDiffToggle } from "../components/diff-view.tsx";
import { ProjectMergePolicy, PullRequestLink } from "../components/pull-request-link.tsx";
import { Empty, Load } from "../components/states.tsx";
import { TaskTranscript } from "../components/transcript/task-transcript.tsx";
import { formatCount, formatDuration, formatTime } from "../lib/format.ts";
import { useLoad, useProjectEvents, useSession } from "../lib/hooks.ts";
import { href } from "../lib/router.ts";

type Entry =
  | { at: string; kind: "run"; run: RunSummary }
  | { at: string; kind: "event"; event: ProjectEvent };

/**
 * One task: its card, scope, controls, the timeline of its runs and transitions with diffs, and
 * what the agents did (the transcripts of its runs).
 */
export function TaskView({ projectId, taskId }: { projectId: string; taskId: string }) {
  const key = `${projectId}/${taskId}`;
  const task = useLoad(() => client.task(projectId, taskId), `task:${key}`);
  const runs = useLoad(() => client.runs(projectId, { task: taskId, limit: 200 }), `runs:${key}`);
  const events = useLoad(
    () => client.events(projectId, { task: taskId, after: "0", limit: 1000 }),
    `events:${key}`,
  );
  useProjectEvents(projectId, () => {
    task.reload();
    runs.reload();
    events.reload();
  });
  return (
    <section aria-labelledby="task-title">
      <p class="crumbs">
        <a href={href.fleet()}>Fleet</a> / <a href={href.project(projectId)}>{projectId}</a> /
      </p>
      <Load state={task} what={`task ${taskId}`}>
        {(t) => (
          <>
            <TaskCard task={t} projectId={projectId} onChange={task.reload} />
            <h2>Timeline</h2>
            <Load state={runs} what="runs">
              {(r) => (
                <>
                  <Load state={events} what="transitions">
                    {(e) => <Timeline runs={r.runs} events={e.events} />}
                  </Load>
                  <TaskTranscript projectId={projectId} taskId={taskId} runs={r.runs} />
                </>
              )}
            </Load>
          </>
        )}
      </Load>
    </section>
  );
}

function TaskCard({ task: t, projectId, onChange }: { task: Task; projectId: string; onChange: () => void }) {
  const session = useSession();
  const open = !["done", "cancelled"].includes(t.status);
  return (
    <article class="card">
      <h1 id="task-title">
        {t.id} <StatusPill status={t.status} /> <span class="pill">{t.kind}</span>
      </h1>
      <p>
        <strong>{t.title}</strong>
      </p>
      <TaskFacts task={t} projectId={projectId} />
      <TaskNotes task={t} />
      {session?.can_operate && open ? (
        <TaskControls task={t} projectId={projectId} onChange={onChange} />
      ) : null}
    </article>
  );
}

/** The task's facts: stage, role, scope, prerequisites, what it resolves or waits on, usage. */
function TaskFacts({ task: t, projectId }: { task: Task; projectId: string }) {
  return (
    <dl class="facts">
      <dt>Stage</dt>
      <dd>{t.stage}</dd>
      <dt>Role</dt>
      <dd>{t.role}</dd>
      <dt>Priority</dt>
      <dd>{t.priority}</dd>
      <dt>Scope</dt>
      <dd>
        {t.scope.map((s) => (
          <code key={s} class="pill">
            {s}
          </code>
        ))}
      </dd>
      <dt>Prerequisites</dt>
      <dd>
        {t.prerequisites.length === 0
          ? "none"
          : t.prerequisites.map((p) => (
              <a key={p} class="pill" href={href.task(projectId, p)}>
                {p}
              </a>
            ))}
      </dd>
      {t.parent_id ? (
        <>
          <dt>Resolves</dt>
          <dd>
            <a href={href.task(projectId, t.parent_id)}>{t.parent_id}</a>
          </dd>
        </>
      ) : null}
      {t.blocked_by ? (
        <>
          <dt>Blocked by</dt>
          <dd>
            <a href={href.task(projectId, t.blocked_by)}>{t.blocked_by}</a>
          </dd>
        </>
      ) : null}
      {t.status_reason ? (
        <>
          <dt>Reason</dt>
          <dd>{t.status_reason}</dd>
        </>
      ) : null}
      {t.pull_request ? (
        <>
          <dt>Pull request</dt>
          <dd>
            <PullRequestLink pr={t.pull_request} />
            <ProjectMergePolicy projectId={projectId} />
          </dd>
        </>
      ) : null}
      <dt>Attempts failed</dt>
      <dd>{t.failures}</dd>
      {t.usage ? (
        <>
          <dt>Usage</dt>
          <dd>
            {formatCount(t.usage.tokens_in)} in ({formatCount(t.usage.tokens_cached)} cached) ·{" "}
            {formatCount(t.usage.tokens_out)} out · {t.usage.cost} over {t.usage.runs} run
            {t.usage.runs === 1 ? "" : "s"}
          </dd>
        </>
      ) : null}
    </dl>
  );
}

/** What the task says and what was said about it: acceptance, body, reviewer feedback, answers. */
function TaskNotes({ task: t }: { task: Task }) {
  return (
    <>
      {t.acceptance.length ? (
        <>
          <h3>Acceptance</h3>
          <ul>
            {t.acceptance.map((a) => (
              <li key={a}>{a}</li>
            ))}
          </ul>
        </>
      ) : null}
      {t.body ? (
        <details>
          <summary>Body</summary>
          <pre class="body">{t.body}</pre>
        </details>
      ) : null}
      {t.feedback ? (
        <div class="feedback">
          <h3>Reviewer feedback</h3>
          <p>{t.feedback}</p>
        </div>
      ) : null}
      {t.answers.length ? (
        <>
          <h3>Answers</h3>
          <ul>
            {t.answers.map((a) => (
              <li key={a.at}>
                {a.question} → <strong>{a.answer}</strong> <span class="muted">({a.by})</span>
              </li>
            ))}
          </ul>
        </>
      ) : null}
    </>
  );
}

/** Cancel, and release of an external resolver, for an operator while the task is open. */
function TaskControls({
  task: t,
  projectId,
  onChange,
}: {
  task: Task;
  projectId: string;
  onChange: () => void;
}) {
  const [reason, setReason] = useState("");
  return (
    <fieldset class="controls">
      <legend class="sr-only">Task controls</legend>
      <ConfirmButton
        label="Cancel task"
        danger
        testId="cancel-task"
        title={`Cancel ${t.id}?`}
        consequence="Its runs are cancelled and the task will not be scheduled again."
        onConfirm={async () => {
          await client.cancelTask(projectId, t.id, "cancelled from the web app");
          onChange();
        }}
      />
      {t.kind === "resolver" && t.status === "awaiting_input" ? (
        <ConfirmButton
          label="Release external"
          testId="release-external"
          title={`Release ${t.id}?`}
          consequence="Records that the external action is done; the blocked task continues."
          fields={
            <label>
              Reason (required){" "}
              <input
                value={reason}
                required
                onInput={(e) => setReason((e.currentTarget as HTMLInputElement).value)}
              />
            </label>
          }
          onConfirm={async () => {
            await client.releaseExternal(projectId, t.id, reason);
            onChange();
          }}
        />
      ) : null}
    </fieldset>
  );
}

function Timeline({ runs, events }: { runs: RunSummary[]; events: ProjectEvent[] }) {
  const entries: Entry[] = [
    ...runs.map((run): Entry => ({ at: run.created_at, kind: "run", run })),
    ...events
      .filter((e) => !e.type.startsWith("run."))
      .map((event): Entry => ({ at: event.created_at, kind: "event", event })),
  ].sort((a, b) => a.at.localeCompare(b.at));
  if (entries.length === 0) return <Empty>No run or transition yet.</Empty>;
  return (
    <ol class="timeline">
      {entries.map((e) =>
        e.kind === "run" ? (
          <li key={`r-${e.run.id}`} class="tl-run">
            <div>
              <a href={href.run(e.run.id)}>
                <strong>{e.run.action}</strong> #{e.run.number}
              </a>{" "}
              <StatusPill status={e.run.status} />
              {e.run.transition ? <span class="pill">{e.run.transition}</span> : null}
              <span class="muted small">
                {" "}
                {formatTime(e.run.created_at)} · {formatDuration(e.run.duration_ms)} · {e.run.cost} ·{" "}
                <code>{e.run.agent_id}</code>
              </span>
            </div>
            {e.run.failure ? <p class="error small">{e.run.failure}</p> : null}
            {e.run.scope_violations.length ? (
              <p class="error small">Scope violations: {e.run.scope_violations.join(", ")}</p>
            ) : null}
            {e.run.commit_sha ? <CommitDiffToggle runId={e.run.id} sha={e.run.commit_sha} /> : null}
          </li>
        ) : (
          <li key={`e-${e.event.id}`} class="tl-event">
            <span class="pill">{e.event.type}</span>{" "}
            <span class="muted small">{formatTime(e.event.created_at)}</span> <EventDetail event={e.event} />
          </li>
        ),
      )}
    </ol>
  );
}

function EventDetail({ event }: { event: ProjectEvent }) {
  const d = event.data as Record<string, unknown>;
  // A failed landing names its conflicting files (task.landing_failed).
  const files =
    Array.isArray(d.files) && d.files.length > 0
      ? `files: ${d.files.filter((f) => typeof f === "string").join(", ")}`
      : "";
  const text = [d.feedback, d.reason, files, d.message, d.summary, d.question, d.selectedOption, d.note]
    .filter((v): v is string => typeof v === "string" && v !== "")
    .join(" · ");
  const flagged = event.type === "task.rejected" || event.type === "task.landing_failed";
  return text ? <span class={flagged ? "feedback-inline" : ""}>{text}</span> : null;
}
