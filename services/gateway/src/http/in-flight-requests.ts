import type { MiddlewareHandler } from "hono";
import type { GatewayEnv } from "../gateway-env.ts";

/**
 * Counts requests whose handler is still running. A client that disconnects does not stop
 * its handler, which may still be waiting for a database connection: shutdown waits for
 * the count to reach zero (bounded) before the caller closes the pools, so no query is
 * issued against a pool that is ending.
 */
export class InFlightRequests {
  private count = 0;
  private waiters: (() => void)[] = [];

  middleware(): MiddlewareHandler<GatewayEnv> {
    return async (_c, next) => {
      this.count++;
      try {
        await next();
      } finally {
        this.count--;
        if (this.count === 0) for (const resolve of this.waiters.splice(0)) resolve();
      }
    };
  }

  get size(): number {
    return this.count;
  }

  /** Resolves true once no handler runs, or false after `timeoutMs`. */
  idle(timeoutMs: number): Promise<boolean> {
    if (this.count === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== done);
        resolve(false);
      }, timeoutMs);
      this.waiters.push(done);
    });
  }
}
