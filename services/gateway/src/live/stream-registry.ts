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

/** Who opens a stream: the caps are counted per token and per client address. */
export interface StreamOwner {
  readonly tokenId: string;
  /** Remote address of the connection (the proxy's, behind a reverse proxy); null when unknown. */
  readonly address: string | null;
  /** Admin streams are not counted against the per-address cap (their token cap still holds). */
  readonly admin: boolean;
}

export interface StreamCaps {
  /** All streams of this gateway together. */
  readonly maxOpen: number;
  /** Streams of one token. */
  readonly perToken: number;
  /** Streams of non-admin tokens from one client address. */
  readonly perAddress: number;
}

/** Why a stream was refused: the cap that was reached. */
export type StreamRefusal = "closing" | "token" | "address" | "global";

/**
 * Every open SSE stream of this gateway: bounds how many may be open at once (per token, per
 * client address, then all together), and ends them all on shutdown, so `server.close()` is
 * not held open by long-lived responses. The per-token and per-address caps come first, so one
 * token (or one host with many read tokens) cannot take every slot of the global cap.
 */
export class StreamRegistry {
  private readonly streams = new Set<StreamHandle>();
  private readonly byToken = new Map<string, number>();
  private readonly byAddress = new Map<string, number>();
  private closing = false;

  constructor(
    readonly caps: StreamCaps,
    private readonly metrics: GatewayMetrics,
  ) {}

  /** A handle for a new stream of `owner`, or the cap that refuses it. */
  open(kind: StreamKind, owner: StreamOwner): StreamHandle | StreamRefusal {
    if (this.closing) return "closing";
    if ((this.byToken.get(owner.tokenId) ?? 0) >= this.caps.perToken) return "token";
    const address = owner.admin ? null : owner.address;
    if (address !== null && (this.byAddress.get(address) ?? 0) >= this.caps.perAddress) return "address";
    if (this.streams.size >= this.caps.maxOpen) return "global";
    const handle = new StreamHandle(kind);
    this.streams.add(handle);
    bump(this.byToken, owner.tokenId, 1);
    if (address !== null) bump(this.byAddress, address, 1);
    this.metrics.openStreams.inc({ kind });
    handle.onEnd(() => {
      this.streams.delete(handle);
      bump(this.byToken, owner.tokenId, -1);
      if (address !== null) bump(this.byAddress, address, -1);
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

/** Adds `delta` to a counter, forgetting it at zero (the maps hold only owners with open streams). */
function bump(counts: Map<string, number>, key: string, delta: number): void {
  const next = (counts.get(key) ?? 0) + delta;
  if (next <= 0) counts.delete(key);
  else counts.set(key, next);
}
