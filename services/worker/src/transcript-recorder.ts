import { readSessionFileFrom, sessionFilePaths } from "@overseer/harness";
import type { RunJob, RunTranscript } from "@overseer/run-contract";
import type { Logger } from "@overseer/runtime";
import { createTranscriptFeed, type TranscriptEntry, type TranscriptFeed } from "@overseer/transcript";

/** How a run's transcript is kept and streamed unless told otherwise. */
export const TRANSCRIPT_RECORDER_DEFAULTS = Object.freeze({
  /** Pause between two live publications of new entries (and two reads of Copilot's session file). */
  intervalMs: 250,
  /** Bytes of a session file read per pass. */
  sessionReadBytes: 1024 * 1024,
});

export interface TranscriptRecorderOptions {
  /** JSON bytes of transcript kept (OVERSEER_MAX_TRANSCRIPT_BYTES); the oldest entries go first. */
  maxBytes: number;
  /**
   * Sends new entries live (`run.transcript`) and keeps them where the transcript route reads a
   * running run's (`kept`: how many entries the bounded transcript holds now); best effort, a
   * failure never fails the run.
   */
  publish?: ((entries: TranscriptEntry[], kept: number) => Promise<void>) | undefined;
  intervalMs?: number;
  sessionReadBytes?: number;
}

/** Agents whose transcript comes from their session file, not their (human) output. */
const FROM_SESSION_FILE = new Set(["copilot"]);

/**
 * A run's transcript, parsed as it goes (@overseer/transcript): the agent's redacted output as
 * it streams, or for Copilot its session events file in the control dir, followed while the run
 * lasts. New entries are published live every `intervalMs` (never two at once); the kept
 * transcript stays within `maxBytes` of JSON by dropping the oldest entries (`truncated`).
 */
export class RunTranscriptRecorder {
  readonly #feed: TranscriptFeed;
  readonly #options: Required<Omit<TranscriptRecorderOptions, "publish">> &
    Pick<TranscriptRecorderOptions, "publish">;
  readonly #fromSession: boolean;
  readonly #kept: { entry: TranscriptEntry; bytes: number }[] = [];
  #head = 0;
  #bytes = 0;
  #truncated = false;
  #unsent: TranscriptEntry[] = [];
  #timer: NodeJS.Timeout | null = null;
  #sending: Promise<void> = Promise.resolve();
  #controlDir: string | null = null;
  readonly #offsets = new Map<string, number>();
  #finished = false;

  constructor(
    private readonly job: RunJob,
    root: string | null,
    options: TranscriptRecorderOptions,
    private readonly log: Logger,
  ) {
    this.#options = { ...TRANSCRIPT_RECORDER_DEFAULTS, ...options };
    this.#fromSession = FROM_SESSION_FILE.has(job.agent ?? "");
    this.#feed = createTranscriptFeed(job.agent, { root, now: () => new Date().toISOString() });
  }

  /** The agent's (redacted) output as it arrives. */
  write(chunk: string): void {
    if (this.#fromSession || this.#finished) return;
    this.#add(this.#feed.write(chunk));
  }

  /** The run's control dir exists: a session file is followed there from now on; publication starts. */
  start(controlDir: string): void {
    this.#controlDir = controlDir;
    this.#timer = setInterval(() => void this.#tick(), this.#options.intervalMs);
    this.#timer.unref();
  }

  /** The output ended: the rest parsed and published; the transcript the result carries. */
  async finish(): Promise<RunTranscript> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    // After any pass in flight: a session read of its own here would read the same bytes twice.
    this.#sending = this.#sending.then(async () => {
      if (this.#finished) return;
      await this.#readSession().catch(() => undefined);
      this.#finished = true;
      this.#add(this.#feed.end());
    });
    await this.#tick(false);
    return {
      agent: this.job.agent ?? null,
      entries: this.#kept.slice(this.#head).map((kept) => kept.entry),
      truncated: this.#truncated,
    };
  }

  #add(entries: readonly TranscriptEntry[]): void {
    for (const entry of entries) {
      const bytes = Buffer.byteLength(JSON.stringify(entry)) + 1;
      this.#kept.push({ entry, bytes });
      this.#bytes += bytes;
      this.#unsent.push(entry);
    }
    while (this.#bytes > this.#options.maxBytes && this.#head < this.#kept.length) {
      this.#bytes -= (this.#kept[this.#head] as { bytes: number }).bytes;
      this.#head += 1;
      this.#truncated = true;
    }
    if (this.#head > 1024 && this.#head * 2 > this.#kept.length) {
      this.#kept.splice(0, this.#head);
      this.#head = 0;
    }
  }

  /** New complete lines of the agent's session files, parsed (Copilot). */
  async #readSession(): Promise<void> {
    if (!this.#fromSession || this.#controlDir === null || this.#finished) return;
    for (const path of await sessionFilePaths(this.job.agent, this.#controlDir)) {
      const from = this.#offsets.get(path) ?? 0;
      const bytes = await readSessionFileFrom(path, from, this.#options.sessionReadBytes);
      if (bytes === null || bytes.length === 0) continue;
      const end = bytes.lastIndexOf(0x0a) + 1;
      // A line longer than one read is taken whole once the read is full, never skipped.
      const take = end > 0 ? end : bytes.length === this.#options.sessionReadBytes ? bytes.length : 0;
      if (take === 0) continue;
      this.#offsets.set(path, from + take);
      const text = bytes.subarray(0, take).toString("utf8");
      this.#add(this.#feed.write(text.endsWith("\n") ? text : `${text}\n`));
    }
  }

  /** Reads the session file (when followed) and publishes what is new; passes never overlap. */
  #tick(readSession = true): Promise<void> {
    this.#sending = this.#sending.then(async () => {
      if (readSession) await this.#readSession().catch(() => undefined);
      const batch = this.#unsent;
      this.#unsent = [];
      if (batch.length === 0 || !this.#options.publish) return;
      try {
        await this.#options.publish(batch, this.#kept.length - this.#head);
      } catch (error) {
        this.log.debug({ err: error, runId: this.job.runId }, "live transcript publication failed");
      }
    });
    return this.#sending;
  }
}
