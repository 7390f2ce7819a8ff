import type { GatewayMetrics } from "../metrics/gateway-metrics.ts";

export type StreamKind = "events" | "log";
export type WaitResult = "woken" | "timeout" | "ended";

/**
 * One open SSE stream. Its loop sleeps in `wait()` until something may have changed
 * (`wake()`: a Redis message), the keep-alive interval passes, or the stream ends (client
 * disconnected, or gateway shutting down). A wake that arrives while the loop is busy is
 * remembered, so no notification falls between a read and the next wait.
 */
export class StreamHandle {
  private woken = false;
  private waiter: ((result: WaitResult) => void) | null = null;
  private readonly endHooks: (() => void)[] = [];
  ended = false;

  constructor(readonly kind: StreamKind) {}

  wake(): void {
    if (this.waiter) {
      const resolve = this.waiter;
      this.waiter = null;
      resolve("woken");
    } else {
      this.woken = true;
    }
  }

  wait(ms: number): Promise<WaitResult> {
    if (this.ended) return Promise.resolve("ended");
    if (this.woken) {
      this.woken = false;
      return Promise.resolve("woken");
    }
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiter = null;
        resolve("timeout");
      }, ms);
      this.waiter = (result) => {
        clearTimeout(timer);
        resolve(result);
      };
    });
  }

  /** Runs `hook` when the stream ends (at once if it already has). */
  onEnd(hook: () => void): void {
    if (this.ended) hook();
    else this.endHooks.push(hook);
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    const waiter = this.waiter;
    this.waiter = null;
    waiter?.("ended");
    for (const hook of this.endHooks.splice(0)) {
      try {
        hook();
      } catch {
        // End hooks only release resources; one failing must not keep the others from running.
      }
    }
  }
}

/**
 * Every open SSE stream of this gateway: bounds how many may be open at once and ends them
 * all on shutdown, so `server.close()` is not held open by long-lived responses.
 */
export class StreamRegistry {
  private readonly streams = new Set<StreamHandle>();
  private closing = false;

  constructor(
    private readonly maxOpen: number,
    private readonly metrics: GatewayMetrics,
  ) {}

  /** A handle for a new stream, or null when the limit is reached or the gateway is shutting down. */
  open(kind: StreamKind): StreamHandle | null {
    if (this.closing || this.streams.size >= this.maxOpen) return null;
    const handle = new StreamHandle(kind);
    this.streams.add(handle);
    this.metrics.openStreams.inc({ kind });
    handle.onEnd(() => {
      this.streams.delete(handle);
      this.metrics.openStreams.dec({ kind });
    });
    return handle;
  }

  get size(): number {
    return this.streams.size;
  }

  get isClosing(): boolean {
    return this.closing;
  }

  /** Refuses new streams and ends every open one. */
  closeAll(): void {
    this.closing = true;
    for (const handle of [...this.streams]) handle.end();
  }
}
