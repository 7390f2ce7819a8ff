import type { LiveChannel } from "@overseer/queue";

/**
 * Streams a run's output to Redis without one round trip per chunk: chunks are joined and
 * flushed at most every `intervalMs`, one append at a time. Memory stays bounded whatever the
 * agent prints and however slow Redis is: while an append is in flight, new output waits in
 * one buffer that keeps only its last `maxBufferChars` characters (the live stream keeps only
 * the end of the output anyway), and the skipped amount is reported in the stream. Streaming
 * is best effort (Postgres keeps the capped output); a Redis error never fails the run.
 */
export class LiveLogBatcher {
  private buffer = "";
  private skippedChars = 0;
  private timer: NodeJS.Timeout | null = null;
  private sending: Promise<void> | null = null;

  constructor(
    private readonly live: LiveChannel,
    private readonly runId: string,
    private readonly maxBufferChars = 1024 * 1024,
    private readonly intervalMs = 50,
  ) {}

  /** Characters waiting to be sent (at most twice `maxBufferChars`). */
  get bufferedChars(): number {
    return this.buffer.length;
  }

  push(chunk: string): void {
    this.buffer += chunk;
    // Trim only once the buffer is twice the bound, so trimming costs O(1) per character.
    if (this.buffer.length > 2 * this.maxBufferChars) {
      this.skippedChars += this.buffer.length - this.maxBufferChars;
      this.buffer = this.buffer.slice(-this.maxBufferChars);
    }
    if (this.timer === null && this.sending === null) {
      this.timer = setTimeout(() => void this.send(), this.intervalMs);
      this.timer.unref();
    }
  }

  /** Sends everything pushed so far; resolves once it reached Redis (or failed to). */
  async flush(): Promise<void> {
    for (;;) {
      if (this.sending) await this.sending;
      else if (this.buffer !== "" || this.skippedChars > 0) await this.send();
      else return;
    }
  }

  private send(): Promise<void> {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    if (this.sending) return this.sending;
    if (this.buffer === "" && this.skippedChars === 0) return Promise.resolve();
    const data =
      this.skippedChars > 0
        ? `[… ${this.skippedChars} characters of live output skipped while Redis was busy]\n${this.buffer}`
        : this.buffer;
    this.buffer = "";
    this.skippedChars = 0;
    this.sending = this.live
      .appendLog(this.runId, data)
      .catch(() => undefined)
      .finally(() => {
        this.sending = null;
        // Output that arrived meanwhile goes out next, after the usual interval.
        if (this.buffer !== "" || this.skippedChars > 0) {
          this.timer = setTimeout(() => void this.send(), this.intervalMs);
          this.timer.unref();
        }
      });
    return this.sending;
  }
}
