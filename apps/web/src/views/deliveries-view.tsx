import { useState } from "preact/hooks";
import { client } from "../api/client.ts";
import type { Delivery } from "../api/types.ts";
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
 * Notification deliveries (README "Intake and notifications"), newest first: status, attempts,
 * the receiver's last answer, and a Redeliver button on each dead letter for operate tokens.
 */
export function DeliveriesView() {
  const [status, setStatus] = useState<DeliveryStatusFilter>("all");
  const deliveries = useLoad(
    () => client.deliveries(status === "all" ? null : status),
    `deliveries-${status}`,
    10_000,
  );
  const session = useSession();
  const { notice, redeliver } = useRedeliver({
    noun: "Delivery",
    again: "it is sent once more with the same webhook-id.",
    send: async (id) => {
      const r = await client.redeliver(id);
      return { redelivered: r.redelivered, status: r.delivery.status };
    },
    reload: deliveries.reload,
  });
  return (
    <section aria-labelledby="deliveries-title">
      <h1 id="deliveries-title">Notifications</h1>
      <StatusFilter status={status} onChange={setStatus} />
      <Notice text={notice} />
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
  return (
    <Table columns={["When", "Project", "Type", "Status", "Attempts", "Last answer", "Subscription"]} actions>
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
            <DeliveryStatusPill status={d.status} />
          </td>
          <td>{d.attempts}</td>
          <td>{lastAnswer(d)}</td>
          <td>
            <code>{d.subscription_id}</code>
          </td>
          <td>
            {d.status === "dead" && canRedeliver ? (
              <RedeliverButton testId={`redeliver-${d.id}`} onRedeliver={() => onRedeliver(d.id)} />
            ) : null}
          </td>
        </tr>
      ))}
    </Table>
  );
}

/** What the receiver last said: delivered with a status, or the error of the last attempt. */
export function lastAnswer(d: Delivery): string {
  if (d.status === "delivered") return `HTTP ${d.last_status ?? "2xx"} at ${formatTime(d.delivered_at)}`;
  if (d.attempts === 0) return "not tried yet";
  return d.last_error ?? (d.last_status === null ? "no answer" : `HTTP ${d.last_status}`);
}
