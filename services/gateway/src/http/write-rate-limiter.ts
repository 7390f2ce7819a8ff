/**
 * Per-token limit on write requests: a fixed one-minute window per token, in memory. Each
 * gateway replica counts on its own, so N replicas allow up to N × limit; the limit protects
 * the database from a runaway script, it is not a quota.
 */
export class WriteRateLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>();

  constructor(
    private readonly limit: number,
    private readonly windowMs = 60_000,
    /** Entries kept before expired windows are swept. */
    private readonly sweepAbove = 10_000,
  ) {}

  /** Counts one write for `key`; says whether it is allowed and, if not, when to retry. */
  take(key: string, now = Date.now()): { allowed: true } | { allowed: false; retryAfterSeconds: number } {
    let window = this.windows.get(key);
    if (!window || now - window.start >= this.windowMs) {
      if (this.windows.size >= this.sweepAbove) this.sweep(now);
      window = { start: now, count: 0 };
      this.windows.set(key, window);
    }
    if (window.count >= this.limit) {
      return {
        allowed: false,
        retryAfterSeconds: Math.max(1, Math.ceil((window.start + this.windowMs - now) / 1000)),
      };
    }
    window.count++;
    return { allowed: true };
  }

  get limitPerWindow(): number {
    return this.limit;
  }

  private sweep(now: number): void {
    for (const [key, w] of this.windows) if (now - w.start >= this.windowMs) this.windows.delete(key);
  }
}
