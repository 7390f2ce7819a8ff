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
 */
export class BoardSessions {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly ttlMs: number,
  ) {}

  /** Opens a session for an admin token; returns the id for the cookie. */
  async open(session: BoardSession): Promise<string> {
    const id = randomBytes(32).toString("base64url");
    await this.redis.set(this.key(id), JSON.stringify(session), "PX", this.ttlMs);
    return id;
  }

  /** The session behind an id, or null when unknown, expired or malformed. */
  async find(id: string): Promise<BoardSession | null> {
    if (!/^[A-Za-z0-9_-]{43}$/.test(id)) return null;
    const raw = await this.redis.get(this.key(id));
    if (raw === null) return null;
    try {
      const parsed = JSON.parse(raw) as Partial<BoardSession>;
      if (typeof parsed.tokenId !== "string" || typeof parsed.tokenName !== "string") return null;
      return { tokenId: parsed.tokenId, tokenName: parsed.tokenName };
    } catch {
      return null;
    }
  }

  get ttlSeconds(): number {
    return Math.max(1, Math.floor(this.ttlMs / 1000));
  }

  private key(id: string): string {
    return `${this.prefix}:board-session:${createHash("sha256").update(id, "utf8").digest("hex")}`;
  }
}
