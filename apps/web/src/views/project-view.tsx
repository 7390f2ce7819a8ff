import { useMemo, useState } from "preact/hooks";
import { client } from "../api/client.ts";
import { TASK_STATUS_ORDER, type Task } from "../api/types.ts";
import { ProgressBar, StatusPill } from "../components/bits.tsx";
import { MissionPanel } from "../components/mission-panel.tsx";
import { PrereqGraph } from "../components/prereq-graph.tsx";
import { ProjectControls } from "../components/project-controls.tsx";
import { MergePolicy, PullRequestLink } from "../components/pull-request-link.tsx";
import { Empty, Load } from "../components/states.tsx";
import { PoolWaitingNotice } from "../components/worker-pools.tsx";
import { formatCount, formatUsd, STATUS_LABEL } from "../lib/format.ts";
import { useLoad, useProjectEvents } from "../lib/hooks.ts";
import { href } from "../lib/router.ts";

/** Every task of a project: all pages of the task list (1000 a page). */
async function loadAllTasks(projectId: string, cap = 20_000): Promise<Task[]> {
  const out: Task[] = [];
  let cursor: string | null = null;
  do {
    const page = await client.tasks(projectId, cursor);
    out.push(...page.tasks);
    cursor = page.next_cursor;
  } while (cursor && out.length < cap);
  return out;
}

const COLUMN_PAGE = 50;

/** The project board: status and controls, tasks in columns by status, resolver chains, stages, prerequisites. */
export function ProjectView({ projectId }: { projectId: string }) {
  const status = useLoad(() => client.status(projectId), `status:${projectId}`);
  const project = useLoad(() => client.project(projectId), `project:${projectId}`);
  const tasks = useLoad(() => loadAllTasks(projectId), `tasks:${projectId}`);
  const live = useProjectEvents(projectId, () => {
    status.reload();
    project.reload();
    tasks.reload();
  });
  const [stage, setStage] = useState("all");
  const [tab, setTab] = useState<"board" | "graph">("board");
  return (
    <section aria-labelledby="project-title">
      <p class="crumbs">
        <a href={href.fleet()}>Fleet</a> /
      </p>
      <p class="crumbs">
        <a href={href.intake(projectId)} data-testid="project-intake">
          Intake sources and tracker updates
        </a>
      </p>
      <Load state={status} what={`project ${projectId}`}>
        {(s) => (
          <header class="view-head">
            <h1 id="project-title">
              {s.name} <StatusPill status={s.status} />
              {s.stage ? <span class="pill">stage {s.stage}</span> : null}
            </h1>
            <span class={`live live-${live}`} role="status">
              {live === "live" ? "● live" : live}
            </span>
            <ProjectControls
              projectId={projectId}
              status={s.status}
              onDone={() => {
                status.reload();
                project.reload();
              }}
            />
            {s.status_reason ? <p class="muted">{s.status_reason}</p> : null}
            <PoolWaitingNotice status={s} />
            {s.objective ? <p>{s.objective}</p> : null}
            <p class="muted" data-testid="landing">
              {s.pull_requests ? (
                <>
                  Approved work lands through pull requests into <code>{s.landing_branch}</code> on{" "}
                  <MergePolicy policy={s.pull_requests} /> · {s.open_pull_requests.length} open
                </>
              ) : (
                <>
                  Approved work lands on <code>{s.landing_branch}</code>
                </>
              )}
              {s.landing_hint ? (
                <>
                  {" "}
                  (a working copy, never written to): bring it into your branch with{" "}
                  <code>git merge {s.landing_branch}</code>
                </>
              ) : null}
            </p>
            <ProgressBar counts={s.counts} />
            <p class="muted">
              Sessions {s.sessions.used}/{s.sessions.limit ?? "∞"} ·{" "}
              {formatCount(s.usage.tokens_in + s.usage.tokens_out)} tokens (
              {formatCount(s.usage.tokens_cached)} cached) ·{" "}
              <span data-testid="project-cost">{s.usage.cost}</span>
              {s.usage.budget_usd === null ? "" : ` of ${formatUsd(s.usage.budget_usd)}`} · {s.running.length}{" "}
              running · {s.pending_count} need you{" "}
              {s.pending_count > 0 ? <a href={href.needs()}>(answer)</a> : null}
            </p>
            {s.usage.budget_usd !== null && s.usage.tokens_unpriced > 0 ? (
              <p class="warn" data-testid="unpriced-budget-warning">
                budget_usd cannot see {formatCount(s.usage.tokens_unpriced)} unpriced tokens: set{" "}
                <code>prices</code> for the model in the runner config, or a <code>budget_tokens</code>.
              </p>
            ) : null}
            {s.mission ? <MissionPanel mission={s.mission} /> : null}
          </header>
        )}
      </Load>
      <Load state={tasks} what="tasks">
        {(all) => {
          const stages = [...new Set(all.map((t) => t.stage))].sort();
          const shown = stage === "all" ? all : all.filter((t) => t.stage === stage);
          return (
            <>
              <div class="toolbar">
                <label>
                  Stage{" "}
                  <select
                    value={stage}
                    onChange={(e) => setStage((e.currentTarget as HTMLSelectElement).value)}
                  >
                    <option value="all">all stages ({all.length})</option>
                    {stages.map((st) => (
                      <option key={st} value={st}>
                        {st}
                      </option>
                    ))}
                  </select>
                </label>
                <div role="tablist" aria-label="Board or graph" class="tabs">
                  <button
                    type="button"
                    role="tab"
                    aria-selected={tab === "board"}
                    onClick={() => setTab("board")}
                  >
                    Board
                  </button>
                  <button
                    type="button"
                    role="tab"
                    aria-selected={tab === "graph"}
                    onClick={() => setTab("graph")}
                  >
                    Prerequisites graph
                  </button>
                </div>
              </div>
              {all.length === 0 ? (
                <Empty>
                  No task yet. Import a task file with{" "}
                  <code>overseer task import FILE --project {projectId}</code>.
                </Empty>
              ) : tab === "board" ? (
                <Board tasks={shown} all={all} projectId={projectId} />
              ) : (
                <PrereqGraph tasks={shown} projectId={projectId} />
              )}
            </>
          );
        }}
      </Load>
    </section>
  );
}

function Board({ tasks, all, projectId }: { tasks: Task[]; all: Task[]; projectId: string }) {
  const resolversOf = useMemo(() => {
    const m = new Map<string, Task[]>();
    for (const t of all) {
      if (t.kind === "resolver" && t.parent_id) {
        const list = m.get(t.parent_id) ?? [];
        list.push(t);
        m.set(t.parent_id, list);
      }
    }
    return m;
  }, [all]);
  return (
    <div class="board">
      {TASK_STATUS_ORDER.map((status) => (
        <Column
          key={status}
          status={status}
          tasks={tasks.filter((t) => t.status === status)}
          resolversOf={resolversOf}
          projectId={projectId}
        />
      ))}
    </div>
  );
}

function Column({
  status,
  tasks,
  resolversOf,
  projectId,
}: {
  status: string;
  tasks: Task[];
  resolversOf: Map<string, Task[]>;
  projectId: string;
}) {
  const [limit, setLimit] = useState(COLUMN_PAGE);
  return (
    <section class={`column col-${status}`} aria-label={`${STATUS_LABEL[status]}: ${tasks.length}`}>
      <h2>
        {STATUS_LABEL[status]} <span class="muted">{tasks.length}</span>
      </h2>
      {tasks.length === 0 ? <p class="muted small">None</p> : null}
      <ul>
        {tasks.slice(0, limit).map((t) => (
          <li key={t.id} class={`task-card kind-${t.kind}`} data-testid={`task-${t.id}`}>
            <a href={href.task(projectId, t.id)}>
              <strong>{t.id}</strong> {t.title}
            </a>
            <div class="muted small">
              {t.stage} · {t.role}
              {t.kind === "resolver" && t.parent_id ? ` · resolves ${t.parent_id}` : ""}
            </div>
            {t.blocked_by ? (
              <div class="chain small">
                blocked → <a href={href.task(projectId, t.blocked_by)}>{t.blocked_by}</a>
              </div>
            ) : null}
            {(resolversOf.get(t.id) ?? []).map((r) => (
              <div key={r.id} class="chain small">
                ↳ resolver <a href={href.task(projectId, r.id)}>{r.id}</a> <StatusPill status={r.status} />
              </div>
            ))}
            {t.awaiting_reason ? <div class="small warn">{t.awaiting_reason}</div> : null}
            {t.pull_request ? (
              <div class="small">
                <PullRequestLink pr={t.pull_request} />
              </div>
            ) : null}
          </li>
        ))}
      </ul>
      {tasks.length > limit ? (
        <button type="button" onClick={() => setLimit(limit + COLUMN_PAGE * 4)}>
          Show more ({tasks.length - limit} left)
        </button>
      ) : null}
    </section>
  );
}
