import { DeliverySchema } from "@overseer/api-contract";
import { h } from "preact";
import { renderToString } from "preact-render-to-string";
import { describe, expect, it } from "vitest";
import type { Delivery } from "../src/api/types.ts";
import { DeliveriesTable, lastAnswer } from "../src/views/deliveries-view.tsx";

/** A delivery as the gateway answers it (checked against the contract's schema). */
function delivery(id: string, fields: Partial<Delivery>): Delivery {
  return DeliverySchema.parse({
    id,
    webhook_id: `msg_${id}`,
    subscription_id: "sub_3f0a8b1f0c3e4c1e",
    project_id: "demo",
    task_id: null,
    event_id: "1042",
    type: "project.paused",
    severity: "warning",
    status: "pending",
    attempts: 0,
    last_status: null,
    last_error: null,
    last_attempt_at: null,
    delivered_at: null,
    created_at: "2026-01-01T12:00:00.000Z",
    ...fields,
  });
}

const rows = [
  delivery("3", {
    status: "dead",
    attempts: 12,
    last_status: 503,
    last_error: "the receiver answered HTTP 503",
  }),
  delivery("2", {
    status: "pending",
    attempts: 2,
    last_error: "POST http://hooks/x failed: fetch failed (ECONNREFUSED)",
  }),
  delivery("1", {
    status: "delivered",
    attempts: 1,
    last_status: 204,
    delivered_at: "2026-01-01T12:00:01.000Z",
    task_id: "S00-001",
  }),
];

function render(canRedeliver: boolean): string {
  return renderToString(h(DeliveriesTable, { deliveries: rows, canRedeliver, onRedeliver: async () => {} }));
}

/** The text of one row (tags dropped). */
function rowText(html: string, id: string): string {
  const row = new RegExp(`<tr data-testid="delivery-${id}">([\\s\\S]*?)</tr>`).exec(html)?.[1] ?? "";
  return row
    .replace(/<[^>]+>/g, " ")
    .replace(/\s+/g, " ")
    .trim();
}

describe("the deliveries page", () => {
  it("shows each delivery's status, attempts and the receiver's last answer", () => {
    const html = render(true);
    expect(rowText(html, "3")).toContain(
      "project.paused (warning) dead letter 12 the receiver answered HTTP 503",
    );
    expect(rowText(html, "2")).toContain("pending 2 POST http://hooks/x failed: fetch failed (ECONNREFUSED)");
    expect(rowText(html, "1")).toMatch(/demo · S00-001 project.paused \(warning\) delivered 1 HTTP 204 at /);
    expect(html).toContain('class="pill st-dead"');
  });

  it("offers Redeliver on dead letters only, and only to a token that may operate", () => {
    const operator = render(true);
    expect(operator).toContain('data-testid="redeliver-3"');
    expect(operator).not.toContain('data-testid="redeliver-2"');
    expect(operator).not.toContain('data-testid="redeliver-1"');
    expect(render(false)).not.toContain("Redeliver");
  });

  it("says what the last answer was for a delivery not tried yet or without an answer", () => {
    expect(lastAnswer(delivery("9", {}))).toBe("not tried yet");
    expect(lastAnswer(delivery("9", { status: "dead", attempts: 3 }))).toBe("no answer");
  });
});
