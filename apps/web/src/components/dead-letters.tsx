import { useState } from "preact/hooks";

/** The statuses a list of deliveries (notifications, tracker updates) is filtered by. */
export const DELIVERY_STATUSES = ["all", "dead", "pending", "delivered"] as const;
export type DeliveryStatusFilter = (typeof DELIVERY_STATUSES)[number];

/** The Status select above a list of deliveries; "dead" reads "dead letters". */
export function StatusFilter({
  status,
  onChange,
}: {
  status: DeliveryStatusFilter;
  onChange: (status: DeliveryStatusFilter) => void;
}) {
  return (
    <div class="toolbar">
      <label>
        Status{" "}
        <select
          value={status}
          onChange={(e) => onChange((e.currentTarget as HTMLSelectElement).value as DeliveryStatusFilter)}
        >
          {DELIVERY_STATUSES.map((s) => (
            <option key={s} value={s}>
              {s === "dead" ? "dead letters" : s}
            </option>
          ))}
        </select>
      </label>
    </div>
  );
}

/** A delivery's status as a pill; "dead" reads "dead letter". */
export function DeliveryStatusPill({ status }: { status: string }) {
  return <span class={`pill st-${status}`}>{status === "dead" ? "dead letter" : status}</span>;
}

/** The Redeliver button of a dead letter, disabled while its request is under way. */
export function RedeliverButton({
  testId,
  onRedeliver,
}: {
  testId: string;
  onRedeliver: () => Promise<void>;
}) {
  const [busy, setBusy] = useState(false);
  return (
    <button
      type="button"
      disabled={busy}
      data-testid={testId}
      onClick={async () => {
        setBusy(true);
        await onRedeliver();
        setBusy(false);
      }}
    >
      Redeliver
    </button>
  );
}

/** The outcome of the last action on a page, announced to screen readers; nothing when null. */
export function Notice({ text }: { text: string | null }) {
  return text ? (
    <p class="state" role="status">
      {text}
    </p>
  ) : null;
}
