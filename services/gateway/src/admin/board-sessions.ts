import { createHash, randomBytes } from "node:crypto";
import type { Redis } from "@overseer/queue";

/** What a Bull Board session remembers: the admin token that opened it (never its secret). */
export interface BoardSession {
  readonly tokenId: string;
  readonly tokenName: string;
}

/**
 * Server-side sessions of the Bull Board page, in Redis (disposable: losing them only means
 * opening the board again). The browser holds an opaque random id; Redis holds it hashed
 * (SHA-256), so a Redis dump gives no usable cookie, and the key expires with the session.
 *
 * A session is bound to its token: each token has at most one (opening again ends the previous
 * one, so repeated calls do not pile sessions up), and `endForToken` ends it when the token is
 * revoked. The board's middleware also checks the token itself on every request
 * (`routes/queue-board-routes.ts`), which covers revocations made elsewhere.
 */
export class BoardSessions {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly ttlMs: number,
  ) {}

  /** Opens a session for an admin token, ending its previous one; returns the id for the cookie. */
  async open(session: BoardSession): Promise<string> {
    const id = randomBytes(32).toString("base64url");
    const previous = await this.redis.get(this.tokenKey(session.tokenId));
    const tx = this.redis.multi();
    if (previous !== null) tx.del(this.sessionKey(previous));
    tx.set(this.sessionKey(digest(id)), JSON.stringify(session), "PX", this.ttlMs);
    tx.set(this.tokenKey(session.tokenId), digest(id), "PX", this.ttlMs);
    await tx.exec();
    return id;
  }

  /** The session behind an id, or null when unknown, expired or malformed. */
  async find(id: string): Promise<BoardSession | null> {
    if (!/^[A-Za-z0-9_-]{43}$/.test(id)) return null;
    const raw = await this.redis.get(this.sessionKey(digest(id)));
    if (raw === null) return null;
    try {
      const parsed = JSON.parse(raw) as Partial<BoardSession>;
      if (typeof parsed.tokenId !== "string" || typeof parsed.tokenName !== "string") return null;
      return { tokenId: parsed.tokenId, tokenName: parsed.tokenName };
    } catch {
      return null;
    }
  }

  /** Ends the session behind an id (logout). */
  async end(id: string, session: BoardSession): Promise<void> {
    const hashed = digest(id);
    const tx = this.redis.multi().del(this.sessionKey(hashed));
    // The token's pointer goes only if it still names this session.
    if ((await this.redis.get(this.tokenKey(session.tokenId))) === hashed)
      tx.del(this.tokenKey(session.tokenId));
    await tx.exec();
  }

  /** Ends the session of a token (on revocation). */
  async endForToken(tokenId: string): Promise<void> {
    const hashed = await this.redis.get(this.tokenKey(tokenId));
    const tx = this.redis.multi().del(this.tokenKey(tokenId));
    if (hashed !== null) tx.del(this.sessionKey(hashed));
    await tx.exec();
  }

  get ttlSeconds(): number {
    return Math.max(1, Math.floor(this.ttlMs / 1000));
  }

  // One hash tag ({board}) for both kinds: a MULTI over a session and its token's pointer stays
  // in one Redis Cluster slot.
  private sessionKey(hashedId: string): string {
    return `${this.prefix}:board-session:{board}:${hashedId}`;
  }

  private tokenKey(tokenId: string): string {
    return `${this.prefix}:board-session-of:{board}:${tokenId}`;
  }
}

function digest(id: string): string {
  return createHash("sha256").update(id, "utf8").digest("hex");
}
