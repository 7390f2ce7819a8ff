/**
 * The fleet overview's serialized answer (`GET /api/v1/fleet`), shared by every request for up
 * to `ttlMs` after its read began. The overview costs O(projects) to read, build and serialize
 * (~45 ms of CPU and 1.9 MB at 5,000 projects); answered per request, ten dashboards polling
 * once a second took the whole event loop, and every other route (status included) queued
 * behind them for tens of seconds. With this cache the gateway reads it at most once per
 * `ttlMs` whatever the number of pollers, and concurrent requests join the read in flight.
 *
 * Other processes' changes (NOTIFYs) do not drop the answer: during a burst of transitions they
 * arrive by the hundred a second, and dropping on each would put the cost back on every request.
 * They show within `ttlMs`. Transitions applied through this gateway drop it (`invalidate`), so
 * an operator sees their own writes; a read that began before such a drop is never reused.
 * 0 disables the cache.
 */
export class FleetAnswerCache {
  private entry: { readonly body: string; readonly at: number; readonly generation: number } | null = null;
  private loading: { readonly generation: number; readonly promise: Promise<string> } | null = null;
  private generation = 0;

  constructor(
    private readonly load: () => Promise<string>,
    /** Longest reuse of one answer, in ms; 0 disables the cache. */
    private readonly ttlMs: number,
  ) {}

  async get(): Promise<string> {
    if (this.ttlMs <= 0) return this.load();
    const generation = this.generation;
    const entry = this.entry;
    if (entry && entry.generation === generation && Date.now() - entry.at < this.ttlMs) return entry.body;
    if (this.loading?.generation === generation) return this.loading.promise;
    const at = Date.now();
    const loading = { generation, promise: this.load() };
    this.loading = loading;
    try {
      const body = await loading.promise;
      if (this.generation === generation) this.entry = { body, at, generation };
      return body;
    } finally {
      if (this.loading === loading) this.loading = null;
    }
  }

  /** Drops the answer (this gateway changed a project). */
  invalidate(): void {
    this.generation++;
    this.entry = null;
  }
}
