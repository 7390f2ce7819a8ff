/**
 * Forge webhook deliveries (migration 0009): the gateway records each one once by
 * (forge, delivery id); the coordinator lists what is left to apply, oldest first, and marks
 * each applied in the transaction that applies it.
 */
import { sql } from "kysely";
import { type Db, json } from "./connection.ts";
import type { ForgeDeliveryRow } from "./database-schema.ts";
import { POSTGRES_NOTIFY_CHANNEL } from "./transition-events.ts";

export interface NewForgeDelivery {
  readonly forge: ForgeDeliveryRow["forge"];
  readonly deliveryId: string;
  readonly projectId: string;
  readonly event: string;
  readonly action: string | null;
  readonly payload: unknown;
}

/** Stores a delivery; `false` when this (forge, delivery id) was stored before (a redelivery). */
export async function recordForgeDelivery(db: Db, delivery: NewForgeDelivery): Promise<boolean> {
  const inserted = await db
    .insertInto("forge_webhook_deliveries")
    .values({
      forge: delivery.forge,
      delivery_id: delivery.deliveryId,
      project_id: delivery.projectId,
      event: delivery.event,
      action: delivery.action,
      payload: json(delivery.payload),
    })
    .onConflict((oc) => oc.columns(["forge", "delivery_id"]).doNothing())
    .returning("delivery_id")
    .executeTakeFirst();
  // The coordinator holding the project's lease applies it on its next pass: wake it now.
  if (inserted !== undefined)
    await sql`SELECT pg_notify(${POSTGRES_NOTIFY_CHANNEL}, ${delivery.projectId})`.execute(db);
  return inserted !== undefined;
}

/** A project's deliveries not applied yet, oldest first. */
export function listUnappliedForgeDeliveries(
  db: Db,
  projectId: string,
  limit: number,
): Promise<ForgeDeliveryRow[]> {
  return db
    .selectFrom("forge_webhook_deliveries")
    .selectAll()
    .where("project_id", "=", projectId)
    .where("applied_at", "is", null)
    .orderBy("received_at")
    .limit(limit)
    .execute();
}

/** Marks a delivery applied (call inside the transaction that applies it); `false` if it already was. */
export async function markForgeDeliveryApplied(
  db: Db,
  forge: ForgeDeliveryRow["forge"],
  deliveryId: string,
): Promise<boolean> {
  const result = await db
    .updateTable("forge_webhook_deliveries")
    .set({ applied_at: new Date() })
    .where("forge", "=", forge)
    .where("delivery_id", "=", deliveryId)
    .where("applied_at", "is", null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}
