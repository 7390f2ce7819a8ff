import { createHash } from "node:crypto";
import { type Db, touchApiToken, verifyApiToken } from "@overseer/db";
import type { Logger } from "@overseer/runtime";
import type { AuthenticatedToken } from "../gateway-env.ts";

interface CacheEntry {
  readonly token: AuthenticatedToken;
  readonly expiresAt: number;
}

/**
 * Verifies bearer tokens against Postgres (hashed, constant-time compare in `verifyApiToken`)
 * and remembers successful verifications for `ttlMs`, so a polling operator or a dashboard
 * costs no token query per request.
 *
 * Security reasoning:
 * - The cache is keyed by the SHA-256 of the token, never the plaintext.
 * - Only successes are cached: a token created a moment ago works at once, and an unknown
 *   token is always checked against Postgres.
 * - A revocation through this gateway evicts the token immediately (`evictTokenId`); one made
 *   elsewhere (CLI against Postgres, another replica) takes effect within `ttlMs`.
 * - `last_used_at` is refreshed on each cache miss, i.e. at most once per `ttlMs` per token.
 */
export class TokenVerifier {
  private readonly cache = new Map<string, CacheEntry>();
  /** `last_used_at` updates still running; awaited on shutdown so no query outlives the pool. */
  private readonly pendingTouches = new Set<Promise<void>>();

  constructor(
    private readonly db: Db,
    private readonly logger: Logger,
    private readonly ttlMs: number,
    private readonly maxEntries: number,
  ) {}

  async verify(secret: string, now = Date.now()): Promise<AuthenticatedToken | null> {
    const key = createHash("sha256").update(secret, "utf8").digest("hex");
    const cached = this.cache.get(key);
    if (cached && cached.expiresAt > now) return cached.token;
    if (cached) this.cache.delete(key);
    const row = await verifyApiToken(this.db, secret);
    if (!row) return null;
    const token: AuthenticatedToken = { id: row.id, name: row.name, scope: row.scope };
    if (this.ttlMs > 0) {
      if (this.cache.size >= this.maxEntries) this.evictOldest(now);
      this.cache.set(key, { token, expiresAt: now + this.ttlMs });
    }
    const touch = touchApiToken(this.db, row.id)
      .catch((error) => this.logger.warn({ err: error, tokenId: row.id }, "cannot record token use"))
      .finally(() => this.pendingTouches.delete(touch));
    this.pendingTouches.add(touch);
    return token;
  }

  /** Waits for background `last_used_at` updates (before the caller closes the database). */
  async drain(): Promise<void> {
    await Promise.all([...this.pendingTouches]);
  }

  /** Forgets every cached verification of this token (after a revocation). */
  evictTokenId(tokenId: string): void {
    for (const [key, entry] of this.cache) if (entry.token.id === tokenId) this.cache.delete(key);
  }

  private evictOldest(now: number): void {
    for (const [key, entry] of this.cache) if (entry.expiresAt <= now) this.cache.delete(key);
    // Map iteration follows insertion order: the first entries are the oldest.
    while (this.cache.size >= this.maxEntries) {
      const first = this.cache.keys().next();
      if (first.done) break;
      this.cache.delete(first.value);
    }
  }
}
