import { createHash, randomBytes, randomUUID, timingSafeEqual } from "node:crypto";
import { sql } from "kysely";
import type { Db } from "./connection.ts";
import type { ApiTokenRow } from "./database-schema.ts";

export const TOKEN_SCOPES = ["read", "operate", "admin"] as const;
export type TokenScope = (typeof TOKEN_SCOPES)[number];

function hashToken(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("hex");
}

/** Creates a token; the plaintext is returned once and only its SHA-256 is stored. */
export async function createApiToken(
  db: Db,
  input: { name: string; scope: TokenScope },
): Promise<{ id: string; token: string; scope: TokenScope }> {
  const token = `ovr_${randomBytes(32).toString("base64url")}`;
  const id = randomUUID();
  await db
    .insertInto("api_tokens")
    .values({ id, name: input.name, scope: input.scope, token_hash: hashToken(token) })
    .execute();
  return { id, token, scope: input.scope };
}

/** The token's row if it is valid and not revoked. The hash comparison is constant-time. */
export async function verifyApiToken(db: Db, token: string): Promise<ApiTokenRow | null> {
  if (!/^ovr_[A-Za-z0-9_-]{20,100}$/.test(token)) return null;
  const hash = hashToken(token);
  const row = await db.selectFrom("api_tokens").selectAll().where("token_hash", "=", hash).executeTakeFirst();
  if (!row || row.revoked_at !== null) return null;
  if (!timingSafeEqual(Buffer.from(row.token_hash, "hex"), Buffer.from(hash, "hex"))) return null;
  return row;
}

/** The token of this id while it is not revoked (what a session bound to it may still do), else null. */
export async function findActiveApiToken(
  db: Db,
  id: string,
): Promise<{ id: string; name: string; scope: TokenScope } | null> {
  const row = await db
    .selectFrom("api_tokens")
    .select(["id", "name", "scope"])
    .where("id", "=", id)
    .where("revoked_at", "is", null)
    .executeTakeFirst();
  return row ?? null;
}

export async function touchApiToken(db: Db, id: string): Promise<void> {
  await db.updateTable("api_tokens").set({ last_used_at: sql`now()` }).where("id", "=", id).execute();
}

export async function revokeApiToken(db: Db, id: string): Promise<boolean> {
  const r = await db
    .updateTable("api_tokens")
    .set({ revoked_at: sql`now()` })
    .where("id", "=", id)
    .where("revoked_at", "is", null)
    .executeTakeFirst();
  return r.numUpdatedRows > 0n;
}

export async function listApiTokens(db: Db) {
  return db
    .selectFrom("api_tokens")
    .select(["id", "name", "scope", "created_at", "revoked_at", "last_used_at"])
    .orderBy("created_at")
    .execute();
}
