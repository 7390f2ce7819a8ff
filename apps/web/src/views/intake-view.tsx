import { useState } from "preact/hooks";
import { client } from "../api/client.ts";
import type { IntakeSource, TrackerUpdate } from "../api/types.ts";
import { ConfirmButton } from "../components/confirm-button.tsx";
import {
  type DeliveryStatusFilter,
  DeliveryStatusPill,
  Notice,
  RedeliverButton,
  StatusFilter,
} from "../components/dead-letters.tsx";
import { Empty, Load } from "../components/states.tsx";
import { Table } from "../components/table.tsx";
import { formatTime } from "../lib/format.ts";
import { useLoad, useSession } from "../lib/hooks.ts";
import { href } from "../lib/router.ts";
import { useRedeliver } from "../lib/use-redeliver.ts";

/**
 * A project's tracker intake (README "Intake and notifications"): its sources (kind, query,
 * last poll, last webhook, items taken, last error; Remove for admin tokens) and its tracker
 * updates (what Overseer wrote back to the issues) with a Redeliver button on each dead letter
 * for operate tokens. Sources are added with `overseer intake add`.
 */
export function IntakeView({ projectId }: { projectId: string }) {
  const session = useSession();
  const sources = useLoad(() => client.intakeSources(projectId), `intake-sources-${projectId}`, 10_000);
  const [status, setStatus] = useState<DeliveryStatusFilter>("all");
  const updates = useLoad(
    () => client.trackerUpdates(projectId, status === "all" ? null : status),
    `tracker-updates-${projectId}-${status}`,
    10_000,
  );
  const { notice, redeliver } = useRedeliver({
    noun: "Tracker update",
    again: "it is written once more (its comment is not posted twice).",
    send: async (id) => {
      const r = await client.redeliverTrackerUpdate(id);
      return { redelivered: r.redelivered, status: r.update.status };
    },
    reload: updates.reload,
  });
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
      <StatusFilter status={status} onChange={setStatus} />
      <Notice text={notice} />
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
    <Table
      columns={["Source", "Kind", "Query", "Items taken", "Last poll", "Webhooks", "Last error"]}
      actions
    >
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
    </Table>
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
  return (
    <Table columns={["When", "Task", "Issue", "Moment", "Status", "Attempts", "Last error"]} actions>
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
            <DeliveryStatusPill status={u.status} />
          </td>
          <td>{u.attempts}</td>
          <td>
            {u.status === "delivered"
              ? `written at ${formatTime(u.delivered_at)}`
              : (u.last_error ?? (u.attempts === 0 ? "not tried yet" : ""))}
          </td>
          <td>
            {u.status === "dead" && canRedeliver ? (
              <RedeliverButton testId={`redeliver-update-${u.id}`} onRedeliver={() => onRedeliver(u.id)} />
            ) : null}
          </td>
        </tr>
      ))}
    </Table>
  );
}
