import { useState } from "preact/hooks";
import { client } from "../api/client.ts";
import type { Delivery } from "../api/types.ts";
import { Empty, Load } from "../components/states.tsx";
import { formatTime } from "../lib/format.ts";
import { useLoad, useSession } from "../lib/hooks.ts";
import { href } from "../lib/router.ts";

const STATUSES = ["all", "dead", "pending", "delivered"] as const;

/**
 * Notification deliveries (README "Intake and notifications"), newest first: status, attempts,
 * the receiver's last answer, and a Redeliver button on each dead letter for operate tokens.
 */
export function DeliveriesView() {
  const [status, setStatus] = useState<(typeof STATUSES)[number]>("all");
  const deliveries = useLoad(
    () => client.deliveries(status === "all" ? null : status),
    `deliveries-${status}`,
    10_000,
  );
  const session = useSession();
  const [notice, setNotice] = useState<string | null>(null);
  const redeliver = async (id: string) => {
    try {
      const r = await client.redeliver(id);
      setNotice(
        r.redelivered
          ? `Delivery ${id} is pending again; it is sent once more with the same webhook-id.`
          : `Delivery ${id} is ${r.delivery.status}, not a dead letter; nothing changed.`,
      );
    } catch (error) {
      setNotice(`Delivery ${id} was not redelivered: ${(error as Error).message}`);
    }
    deliveries.reload();
  };
  return (
    <section aria-labelledby="deliveries-title">
      <h1 id="deliveries-title">Notifications</h1>
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
      <Load state={deliveries} what="deliveries">
        {(data) =>
          data.deliveries.length === 0 ? (
            <Empty>
              No delivery{status === "all" ? "" : ` ${status}`}. Subscribe a receiver with overseer notify add
              URL.
            </Empty>
          ) : (
            <DeliveriesTable
              deliveries={data.deliveries}
              canRedeliver={session?.can_operate === true}
              onRedeliver={redeliver}
            />
          )
        }
      </Load>
    </section>
  );
}

/** The deliveries as a table; a dead letter gets a Redeliver button when `canRedeliver`. */
export function DeliveriesTable({
  deliveries,
  canRedeliver,
  onRedeliver,
}: {
  deliveries: readonly Delivery[];
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
            <th scope="col">Project</th>
            <th scope="col">Type</th>
            <th scope="col">Status</th>
            <th scope="col">Attempts</th>
            <th scope="col">Last answer</th>
            <th scope="col">Subscription</th>
            <th scope="col">
              <span class="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {deliveries.map((d) => (
            <tr key={d.id} data-testid={`delivery-${d.id}`}>
              <td>{formatTime(d.created_at)}</td>
              <td>
                <a href={href.project(d.project_id)}>{d.project_id}</a>
                {d.task_id ? (
                  <>
                    {" "}
                    · <a href={href.task(d.project_id, d.task_id)}>{d.task_id}</a>
                  </>
                ) : null}
              </td>
              <td>
                {d.type} <span class="muted">({d.severity})</span>
              </td>
              <td>
                <span class={`pill st-${d.status}`}>{d.status === "dead" ? "dead letter" : d.status}</span>
              </td>
              <td>{d.attempts}</td>
              <td>{lastAnswer(d)}</td>
              <td>
                <code>{d.subscription_id}</code>
              </td>
              <td>
                {d.status === "dead" && canRedeliver ? (
                  <button
                    type="button"
                    disabled={busy === d.id}
                    data-testid={`redeliver-${d.id}`}
                    onClick={async () => {
                      setBusy(d.id);
                      await onRedeliver(d.id);
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

/** What the receiver last said: delivered with a status, or the error of the last attempt. */
export function lastAnswer(d: Delivery): string {
  if (d.status === "delivered") return `HTTP ${d.last_status ?? "2xx"} at ${formatTime(d.delivered_at)}`;
  if (d.attempts === 0) return "not tried yet";
  return d.last_error ?? (d.last_status === null ? "no answer" : `HTTP ${d.last_status}`);
}
