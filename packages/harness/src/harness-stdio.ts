import type { Logger } from "@overseer/runtime";
import type { SpawnedHarness } from "./harness-spawner.ts";
import { OutputCollector } from "./output-collector.ts";

export interface StdioOptions {
  /** Written to stdin as UTF-8, then stdin is closed. */
  readonly prompt: string;
  readonly maxOutputBytes: number;
  readonly redact: (text: string) => string;
  readonly onOutput?: ((chunk: string) => void) | undefined;
  readonly flushMs: number;
  readonly logger: Logger;
}

/** The harness's stdio once connected. */
export interface ConnectedStdio {
  /** Redacted output, stdout and stderr interleaved, capped. */
  readonly collector: OutputCollector;
  /** `performance.now()` of the last output (or of the connection). */
  lastOutputAt(): number;
  /**
   * Waits up to `timeoutMs` for both pipes to close; pipes still held open (by a process that
   * left the group) are destroyed. Then flushes the collector. True when they closed in time.
   */
  drain(timeoutMs: number): Promise<boolean>;
}

/**
 * Phase 2 of a run: the prompt goes in on stdin (then stdin closes), stdout and stderr go
 * into one redacted, capped collector and to the live `onOutput` callback, whose failures are
 * logged and never end the run.
 */
export function connectStdio(spawned: SpawnedHarness, options: StdioOptions): ConnectedStdio {
  const { pid } = spawned;
  const { logger } = options;
  let lastOutput = performance.now();
  const onOutput = options.onOutput;
  const collector = new OutputCollector({
    maxBytes: options.maxOutputBytes,
    redact: options.redact,
    onOutput: onOutput
      ? (chunk) => {
          try {
            onOutput(chunk);
          } catch (error) {
            logger.warn({ pid, err: error }, "onOutput callback failed; output is still stored");
          }
        }
      : undefined,
    flushMs: options.flushMs,
  });
  const streams = [spawned.stdout, spawned.stderr];
  for (const stream of streams) {
    const sink = collector.sink();
    stream.on("data", (chunk: Buffer) => {
      lastOutput = performance.now();
      sink(chunk);
    });
    stream.on("error", () => undefined);
  }
  const closed = Promise.all(
    streams.map(
      (stream) =>
        new Promise<void>((resolve) => {
          if (stream.destroyed || stream.readableEnded) resolve();
          else stream.once("close", () => resolve());
        }),
    ),
  );
  spawned.stdin.on("error", () => undefined); // EPIPE when the harness never reads its prompt
  spawned.stdin.end(options.prompt, "utf8");
  return {
    collector,
    lastOutputAt: () => lastOutput,
    async drain(timeoutMs) {
      const inTime = await within(closed, timeoutMs);
      if (!inTime) {
        // Something outside the group (a setsid escapee) still holds the pipes open.
        logger.warn({ pid }, "output pipes still open after the process group ended; closing them");
        for (const stream of streams) stream.destroy();
      }
      return inTime;
    },
  };
}

/** Waits for `promise` at most `ms`; true when it settled in time. Leaves no timer behind. */
export async function within(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([promise.then(() => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
