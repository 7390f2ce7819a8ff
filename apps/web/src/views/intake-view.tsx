import { useState } from "preact/hooks";
import { client } from "../api/client.ts";
import type { IntakeSource, TrackerUpdate } from "../api/types.ts";
import { ConfirmButton } from "../components/confirm-button.tsx";
import { Empty, Load } from "../components/states.tsx";
import { formatTime } from "../lib/format.ts";
import { useLoad, useSession } from "../lib/hooks.ts";
import { href } from "../lib/router.ts";

const STATUSES = ["all", "dead", "pending", "delivered"] as const;

/**
 * A project's tracker intake (README "Intake and notifications"): its sources (kind, query,
 * last poll, last webhook, items taken, last error; Remove for admin tokens) and its tracker
 * updates (what Overseer wrote back to the issues) with a Redeliver button on each dead letter
 * for operate tokens. Sources are added with `overseer intake add`.
 */
export function IntakeView({ projectId }: { projectId: string }) {
  const session = useSession();
  const sources = useLoad(() => client.intakeSources(projectId), `intake-sources-${projectId}`, 10_000);
  const [status, setStatus] = useState<(typeof STATUSES)[number]>("all");
  const updates = useLoad(
    () => client.trackerUpdates(projectId, status === "all" ? null : status),
    `tracker-updates-${projectId}-${status}`,
    10_000,
  );
  const [notice, setNotice] = useState<string | null>(null);
  const redeliver = async (id: string) => {
    try {
      const r = await client.redeliverTrackerUpdate(id);
      setNotice(
        r.redelivered
          ? `Tracker update ${id} is pending again; it is written once more (its comment is not posted twice).`
          : `Tracker update ${id} is ${r.update.status}, not a dead letter; nothing changed.`,
      );
    } catch (error) {
      setNotice(`Tracker update ${id} was not redelivered: ${(error as Error).message}`);
    }
    updates.reload();
  };
  return (
    <section aria-labelledby="intake-title">
      <p class="crumbs">
        <a href={href.fleet()}>Fleet</a> / <a href={href.project(projectId)}>{projectId}</a> /
      </p>
      <h1 id="intake-title">Intake of {projectId}</h1>
      <h2>Sources</h2>
      <Load state={sources} what="intake sources">
        {(data) =>
          data.sources.length === 0 ? (
            <Empty>No intake source. Subscribe the project to a tracker with overseer intake add.</Empty>
          ) : (
            <SourcesTable
              sources={data.sources}
              canRemove={session?.can_admin === true}
              onRemove={async (sourceId) => {
                await client.removeIntakeSource(projectId, sourceId);
                sources.reload();
              }}
            />
          )
        }
      </Load>
      <h2>Tracker updates</h2>
      <div class="toolbar">
        <label>
          Status{" "}
          <select
            value={status}
            onChange={(e) => setStatus((e.currentTarget as HTMLSelectElement).value as typeof status)}
          >
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s === "dead" ? "dead letters" : s}
              </option>
            ))}
          </select>
        </label>
      </div>
      {notice ? (
        <p class="state" role="status">
          {notice}
        </p>
      ) : null}
      <Load state={updates} what="tracker updates">
        {(data) =>
          data.updates.length === 0 ? (
            <Empty>No tracker update{status === "all" ? "" : ` ${status}`}.</Empty>
          ) : (
            <UpdatesTable
              projectId={projectId}
              updates={data.updates}
              canRedeliver={session?.can_operate === true}
              onRedeliver={redeliver}
            />
          )
        }
      </Load>
    </section>
  );
}

/** What a source subscribes to, in one line: container, labels, assignee, states. */
function queryText(s: IntakeSource): string {
  const q = s.query as { container?: string; labels?: string[]; assignee?: string; states?: string[] };
  return [
    q.container ?? "",
    ...(q.labels ?? []).map((l) => `label ${l}`),
    ...(q.assignee ? [`assignee ${q.assignee}`] : []),
    ...(q.states?.length ? [`states ${q.states.join(", ")}`] : []),
  ].join(" · ");
}

function SourcesTable({
  sources,
  canRemove,
  onRemove,
}: {
  sources: readonly IntakeSource[];
  canRemove: boolean;
  onRemove: (sourceId: string) => Promise<void>;
}) {
  return (
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            <th scope="col">Source</th>
            <th scope="col">Kind</th>
            <th scope="col">Query</th>
            <th scope="col">Items taken</th>
            <th scope="col">Last poll</th>
            <th scope="col">Webhooks</th>
            <th scope="col">Last error</th>
            <th scope="col">
              <span class="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {sources.map((s) => (
            <tr key={s.id} data-testid={`source-${s.id}`}>
              <td>
                <code>{s.id}</code>
                {s.enabled ? null : <span class="muted"> (disabled)</span>}
              </td>
              <td>{s.kind}</td>
              <td>{queryText(s)}</td>
              <td>{s.items_taken}</td>
              <td>{s.polled_at ? formatTime(s.polled_at) : "not yet"}</td>
              <td>
                {s.webhook_secret_env === null
                  ? "off (polling only)"
                  : `${s.webhooks_received}${s.last_webhook_at ? `, last ${formatTime(s.last_webhook_at)}` : ""}`}
              </td>
              <td>{s.last_error ?? <span class="muted">none</span>}</td>
              <td>
                {canRemove ? (
                  <ConfirmButton
                    label="Remove"
                    title={`Remove intake source ${s.id}?`}
                    consequence="Its items, webhook deliveries and tracker updates go with it; the tasks it made stay."
                    danger
                    testId={`remove-source-${s.id}`}
                    onConfirm={() => onRemove(s.id)}
                  />
                ) : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function UpdatesTable({
  projectId,
  updates,
  canRedeliver,
  onRedeliver,
}: {
  projectId: string;
  updates: readonly TrackerUpdate[];
  canRedeliver: boolean;
  onRedeliver: (id: string) => Promise<void>;
}) {
  const [busy, setBusy] = useState<string | null>(null);
  return (
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">Task</th>
            <th scope="col">Issue</th>
            <th scope="col">Moment</th>
            <th scope="col">Status</th>
            <th scope="col">Attempts</th>
            <th scope="col">Last error</th>
            <th scope="col">
              <span class="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {updates.map((u) => (
            <tr key={u.id} data-testid={`tracker-update-${u.id}`}>
              <td>{formatTime(u.created_at)}</td>
              <td>
                <a href={href.task(projectId, u.task_id)}>{u.task_id}</a>
              </td>
              <td>
                {u.kind ?? "tracker"} {u.issue_id}
              </td>
              <td>{u.moment}</td>
              <td>
                <span class={`pill st-${u.status}`}>{u.status === "dead" ? "dead letter" : u.status}</span>
              </td>
              <td>{u.attempts}</td>
              <td>
                {u.status === "delivered"
                  ? `written at ${formatTime(u.delivered_at)}`
                  : (u.last_error ?? (u.attempts === 0 ? "not tried yet" : ""))}
              </td>
              <td>
                {u.status === "dead" && canRedeliver ? (
                  <button
                    type="button"
                    disabled={busy === u.id}
                    data-testid={`redeliver-update-${u.id}`}
                    onClick={async () => {
                      setBusy(u.id);
                      await onRedeliver(u.id);
                      setBusy(null);
                    }}
                  >
                    Redeliver
                  </button>
                ) : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
