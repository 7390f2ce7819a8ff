import { StringDecoder } from "node:string_decoder";
import { sanitizeText } from "@overseer/task-files";
import { HARNESS_DEFAULTS } from "./harness-defaults.ts";

/** Default cap on stored output: 1 MiB. */
export const DEFAULT_MAX_OUTPUT_BYTES = HARNESS_DEFAULTS.maxOutputBytes;
/** Default delay before a partial line (no newline yet) is flushed: 100 ms. */
export const DEFAULT_OUTPUT_FLUSH_MS = HARNESS_DEFAULTS.outputFlushMs;
const EMPTY = Buffer.alloc(0);
/** A partial line longer than this is flushed at once: 64 KiB of chars. */
const MAX_PENDING_CHARS = 64 * 1024;

export interface OutputCollectorOptions {
  /** Bytes of (redacted, UTF-8) output kept; the oldest output is dropped first. */
  maxBytes: number;
  /** Applied to every piece of text before it is stored or streamed. */
  redact: (text: string) => string;
  /** Receives every redacted piece, uncapped, in order. */
  onOutput?: ((chunk: string) => void) | undefined;
  /** Delay before a partial line is flushed. */
  flushMs: number;
}

/**
 * Collects a process's stdout and stderr into one interleaved, redacted, capped log.
 *
 * Redaction needs whole words: a secret split across two pipe reads would slip through a
 * chunk-by-chunk redactor. Each stream is therefore decoded (UTF-8, multi-byte safe) and cut
 * at newlines; complete lines are redacted and emitted in arrival order. A partial line is
 * held back and emitted after `flushMs` (or at 64 KiB) so prompts and progress output still
 * stream live; only a secret that straddles such a forced flush could escape redaction.
 *
 * Storage keeps the LAST `maxBytes` bytes (the end of a log says why a run ended); when
 * earlier output was dropped, {@link text} starts with a one-line marker giving the count, so
 * the stored text may exceed `maxBytes` by that line.
 */
export class OutputCollector {
  readonly #options: OutputCollectorOptions;
  readonly #chunks: Buffer[] = [];
  #head = 0;
  #bytes = 0;
  #droppedBytes = 0;
  readonly #streams: { decoder: StringDecoder; pending: string; timer: NodeJS.Timeout | null }[] = [];

  constructor(options: OutputCollectorOptions) {
    this.#options = options;
  }

  /** A sink for one stream (stdout or stderr) of the process. */
  sink(): (chunk: Buffer | string) => void {
    const stream = { decoder: new StringDecoder("utf8"), pending: "", timer: null as NodeJS.Timeout | null };
    this.#streams.push(stream);
    return (chunk) => {
      stream.pending += typeof chunk === "string" ? chunk : stream.decoder.write(chunk);
      const newline = stream.pending.lastIndexOf("\n");
      if (newline >= 0) {
        this.#emit(stream.pending.slice(0, newline + 1));
        stream.pending = stream.pending.slice(newline + 1);
      }
      if (stream.pending.length >= MAX_PENDING_CHARS) {
        this.#emit(stream.pending);
        stream.pending = "";
      }
      if (stream.pending.length > 0 && stream.timer === null) {
        stream.timer = setTimeout(() => {
          stream.timer = null;
          if (stream.pending.length > 0) {
            this.#emit(stream.pending);
            stream.pending = "";
          }
        }, this.#options.flushMs);
      } else if (stream.pending.length === 0 && stream.timer !== null) {
        clearTimeout(stream.timer);
        stream.timer = null;
      }
    };
  }

  /** Emits everything still held back (call once the streams have ended). */
  flush(): void {
    for (const stream of this.#streams) {
      if (stream.timer !== null) clearTimeout(stream.timer);
      stream.timer = null;
      const rest = stream.pending + stream.decoder.end();
      stream.pending = "";
      if (rest.length > 0) this.#emit(rest);
    }
  }

  /** Whether earlier output was dropped to respect the cap. */
  get truncated(): boolean {
    return this.#droppedBytes > 0;
  }

  /** The stored output: the last `maxBytes` bytes, after a truncation marker when needed. */
  text(): string {
    const body = Buffer.concat(this.#chunks.slice(this.#head)).toString("utf8");
    if (this.#droppedBytes === 0) return body;
    return `[… ${this.#droppedBytes} earlier bytes of output truncated; the last ${this.#bytes} bytes follow]\n${body}`;
  }

  #emit(text: string): void {
    // NUL characters and lone surrogates cannot be stored (Postgres text, UTF-8 streams).
    const redacted = sanitizeText(this.#options.redact(text));
    if (redacted.length === 0) return;
    this.#options.onOutput?.(redacted);
    this.#store(Buffer.from(redacted, "utf8"));
  }

  #store(buffer: Buffer): void {
    this.#chunks.push(buffer);
    this.#bytes += buffer.length;
    while (this.#bytes > this.#options.maxBytes) {
      const first = this.#chunks[this.#head] as Buffer;
      const excess = this.#bytes - this.#options.maxBytes;
      if (first.length <= excess) {
        this.#chunks[this.#head] = EMPTY; // release the dropped output now, not at the next compaction
        this.#head += 1;
        this.#bytes -= first.length;
        this.#droppedBytes += first.length;
        continue;
      }
      // Cut inside this chunk, then skip UTF-8 continuation bytes so no character is split.
      let cut = excess;
      while (cut < first.length && ((first[cut] as number) & 0xc0) === 0x80) cut += 1;
      this.#chunks[this.#head] = first.subarray(cut);
      this.#bytes -= cut;
      this.#droppedBytes += cut;
    }
    if (this.#head > 1024 && this.#head * 2 > this.#chunks.length) {
      this.#chunks.splice(0, this.#head);
      this.#head = 0;
    }
  }
}
