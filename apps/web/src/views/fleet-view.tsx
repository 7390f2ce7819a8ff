import { useMemo, useState } from "preact/hooks";
import { client } from "../api/client.ts";
import type { FleetProject } from "../api/types.ts";
import { Legend, ProgressBar, Sparkline, StatusPill } from "../components/bits.tsx";
import { Empty, Load } from "../components/states.tsx";
import { VirtualList } from "../components/virtual-list.tsx";
import { formatCount } from "../lib/format.ts";
import { useLoad } from "../lib/hooks.ts";
import { href } from "../lib/router.ts";

type SortKey = "id" | "pending" | "running" | "cost" | "progress" | "throughput";

const SORTS: Record<SortKey, (a: FleetProject, b: FleetProject) => number> = {
  id: (a, b) => a.id.localeCompare(b.id),
  pending: (a, b) => b.pending_decisions - a.pending_decisions || a.id.localeCompare(b.id),
  running: (a, b) => b.running - a.running || a.id.localeCompare(b.id),
  cost: (a, b) => b.cost_usd - a.cost_usd || a.id.localeCompare(b.id),
  progress: (a, b) => done(a) - done(b) || a.id.localeCompare(b.id),
  throughput: (a, b) => sum(b.throughput) - sum(a.throughput) || a.id.localeCompare(b.id),
};

function done(p: FleetProject): number {
  const total = p.counts.total ?? 0;
  return total === 0 ? 1 : (p.counts.done ?? 0) / total;
}
const sum = (v: readonly number[]) => v.reduce((a, b) => a + b, 0);

/** Every project: status, tasks by status, runs, "Needs you", spend and last-hour throughput. */
export function FleetView() {
  const fleet = useLoad(() => client.fleet(), "fleet", 5000);
  const [text, setText] = useState("");
  const [status, setStatus] = useState("all");
  const [sort, setSort] = useState<SortKey>("pending");
  return (
    <section aria-labelledby="fleet-title">
      <h1 id="fleet-title">Fleet</h1>
      <Load state={fleet} what="the fleet">
        {(data) => (
          <FleetTable
            projects={data.projects}
            text={text}
            status={status}
            sort={sort}
            controls={
              <div class="toolbar">
                <label>
                  Filter{" "}
                  <input
                    type="search"
                    value={text}
                    placeholder="project id or name"
                    onInput={(e) => setText((e.currentTarget as HTMLInputElement).value)}
                  />
                </label>
                <label>
                  Status{" "}
                  <select
                    value={status}
                    onChange={(e) => setStatus((e.currentTarget as HTMLSelectElement).value)}
                  >
                    <option value="all">all</option>
                    <option value="active">active</option>
                    <option value="paused">paused</option>
                    <option value="stopped">stopped</option>
                    <option value="needs">needs you</option>
                  </select>
                </label>
                <label>
                  Sort by{" "}
                  <select
                    value={sort}
                    onChange={(e) => setSort((e.currentTarget as HTMLSelectElement).value as SortKey)}
                  >
                    <option value="pending">pending decisions</option>
                    <option value="running">running runs</option>
                    <option value="cost">cost</option>
                    <option value="progress">least done</option>
                    <option value="throughput">throughput</option>
                    <option value="id">id</option>
                  </select>
                </label>
                <span class="muted">
                  {data.projects.length} project(s) ·{" "}
                  {data.projects.reduce((a, p) => a + (p.counts.total ?? 0), 0)} tasks
                </span>
              </div>
            }
          />
        )}
      </Load>
    </section>
  );
}

function FleetTable({
  projects,
  text,
  status,
  sort,
  controls,
}: {
  projects: FleetProject[];
  text: string;
  status: string;
  sort: SortKey;
  controls: preact.ComponentChildren;
}) {
  const shown = useMemo(() => {
    const needle = text.trim().toLowerCase();
    return projects
      .filter((p) => !needle || p.id.includes(needle) || p.name.toLowerCase().includes(needle))
      .filter((p) =>
        status === "all" ? true : status === "needs" ? p.pending_decisions > 0 : p.status === status,
      )
      .sort(SORTS[sort]);
  }, [projects, text, status, sort]);
  return (
    <>
      {controls}
      <Legend />
      {projects.length === 0 ? (
        <Empty>
          No project yet. Register one with <code>overseer init --project ID --repo PATH</code>.
        </Empty>
      ) : shown.length === 0 ? (
        <Empty>No project matches this filter.</Empty>
      ) : (
        <>
          <div class="fleet-head" aria-hidden="true">
            <span>Project</span>
            <span>Tasks</span>
            <span>Running</span>
            <span>Needs you</span>
            <span>Tokens · cost</span>
            <span>Last hour</span>
          </div>
          <VirtualList
            items={shown}
            rowHeight={64}
            height={`min(70vh, ${shown.length * 64 + 2}px)`}
            label="Projects"
            render={(p) => <FleetRow p={p} />}
          />
        </>
      )}
    </>
  );
}

function FleetRow({ p }: { p: FleetProject }) {
  return (
    <div class="fleet-row" data-testid={`fleet-${p.id}`}>
      <span class="fleet-name">
        <a href={href.project(p.id)}>{p.name}</a> <StatusPill status={p.status} />
        {p.stage ? <span class="pill">stage {p.stage}</span> : null}
      </span>
      <span class="fleet-progress">
        <ProgressBar counts={p.counts} />
        <small class="muted">
          {p.counts.done ?? 0}/{p.counts.total ?? 0} done
        </small>
      </span>
      <span>
        <span class="label-sm">Running </span>
        {p.running}
      </span>
      <span>
        <span class="label-sm">Needs you </span>
        {p.pending_decisions > 0 ? (
          <a class="needs-count" href={href.needs()}>
            {p.pending_decisions}
          </a>
        ) : (
          "0"
        )}
      </span>
      <span>
        {formatCount(p.tokens_in + p.tokens_out)} · <span data-testid="fleet-cost">{p.cost}</span>
      </span>
      <span>
        <Sparkline values={p.throughput} label={`Runs ended in the last hour for ${p.id}`} />
      </span>
    </div>
  );
}
