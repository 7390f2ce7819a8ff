import { type HarvestedUsage, readSessionFiles, UsageMeter } from "@overseer/harness";
import type { RunJob, RunUsage } from "@overseer/run-contract";
import type { Logger } from "@overseer/runtime";

/**
 * What one run spends, counted as it goes: the agent's output is fed to a usage meter as it
 * streams, and the CLI's session files (in the control dir) are read every `intervalMs`; a
 * changed count is reported at once (a `run-usage` message the coordinator applies, only ever
 * raising the run's usage), so a run stopped at any point — cancelled, timed out, stalled, its
 * worker killed — keeps what it spent up to its last report, and a live counter follows it.
 */
export class RunUsageTracker {
  readonly #meter: UsageMeter;
  #controlDir: string | null = null;
  #timer: NodeJS.Timeout | null = null;
  #reported = "";
  #reporting: Promise<void> = Promise.resolve();

  constructor(
    private readonly job: RunJob,
    private readonly report: ((usage: RunUsage) => Promise<void>) | undefined,
    private readonly log: Logger,
    /** Pause between two reports (only sent when it changed); 0: only at the end. */
    private readonly intervalMs: number,
  ) {
    this.#meter = new UsageMeter(job.agent);
  }

  /** The agent's (redacted) output as it arrives. */
  write(chunk: string): void {
    this.#meter.write(chunk);
  }

  /**
   * The run's control dir exists: session files are read there from now on. When `signal`
   * aborts (a cancel, which has already ended the run in Postgres, or a shutdown), what the run
   * spent so far is reported at once, not after its process group's kill grace and drain.
   */
  start(controlDir: string, signal?: AbortSignal): void {
    this.#controlDir = controlDir;
    signal?.addEventListener("abort", () => void this.#tick(), { once: true });
    if (this.intervalMs <= 0 || !this.report) return;
    this.#timer = setInterval(() => void this.#tick(), this.intervalMs);
    this.#timer.unref();
  }

  /** The output ended: last lines and session files read, the count reported when it changed. */
  async finish(): Promise<RunUsage | undefined> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    this.#meter.end();
    await this.#readFiles();
    await this.#tick(false);
    return this.usage();
  }

  /** The usage counted so far, priced by the job's price (none: the CLI's own figure). */
  usage(): RunUsage | undefined {
    const found = this.#meter.usage(this.job.price);
    return found ? toRunUsage(found) : undefined;
  }

  async #readFiles(): Promise<void> {
    if (this.#controlDir === null) return;
    this.#meter.readFiles(await readSessionFiles(this.job.agent, this.#controlDir));
  }

  /** Reports the count when it changed since the last report (reports never overlap). */
  #tick(readFiles = true): Promise<void> {
    this.#reporting = this.#reporting.then(async () => {
      if (readFiles) await this.#readFiles().catch(() => undefined);
      const usage = this.usage();
      const key = JSON.stringify(usage ?? null);
      if (!usage || !this.report || key === this.#reported) return;
      try {
        await this.report(usage);
        this.#reported = key;
      } catch (error) {
        this.log.warn({ err: error, runId: this.job.runId }, "usage report failed; the next one carries it");
      }
    });
    return this.#reporting;
  }
}

function toRunUsage(found: HarvestedUsage): RunUsage {
  return {
    tokensIn: found.tokensIn,
    tokensOut: found.tokensOut,
    tokensCached: found.tokensCached,
    ...(found.costUsd !== undefined ? { costUsd: found.costUsd } : {}),
    source: found.source,
  };
}
