import type { LiveChannel } from "@overseer/queue";

/**
 * Streams a run's output to Redis without one round trip per chunk: chunks are joined and
 * flushed at most every `intervalMs`. Streaming is best effort (Postgres keeps the capped
 * output); a Redis error never fails the run.
 */
export class LiveLogBatcher {
  private buffer = "";
  private timer: NodeJS.Timeout | null = null;
  private inflight: Promise<void> = Promise.resolve();

  constructor(
    private readonly live: LiveChannel,
    private readonly runId: string,
    private readonly intervalMs = 50,
  ) {}

  push(chunk: string): void {
    this.buffer += chunk;
    if (this.timer === null) {
      this.timer = setTimeout(() => this.flush(), this.intervalMs);
      this.timer.unref();
    }
  }

  flush(): Promise<void> {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    if (this.buffer === "") return this.inflight;
    const data = this.buffer;
    this.buffer = "";
    this.inflight = this.inflight.then(() => this.live.appendLog(this.runId, data).catch(() => undefined));
    return this.inflight;
  }
}
