/** How long a {@link SharedRefresh} value is reused. */
export interface SharedRefreshOptions {
  /** A value this young (ms since its read began) is answered as is. 0 disables the reuse: every call reads. */
  readonly ttlMs: number;
  /**
   * How much older than `ttlMs` a value may still be answered at once while one refresh runs
   * behind it (stale-while-revalidate); past `ttlMs + staleMs` callers wait for the refresh.
   * Default 0: they always wait.
   */
  readonly staleMs?: number;
  /** A refresh nobody waited for failed (the stale value stays until its bound). */
  readonly onBackgroundError?: (error: unknown) => void;
}

/**
 * A value that is costly to read, shared by every caller: read at most once per `ttlMs`, and
 * concurrent callers join the read in flight (single flight). With `staleMs`, a caller past
 * `ttlMs` is answered the previous value at once and the read runs behind it, so under steady
 * polling no caller waits for a read; the value answered is at most `ttlMs + staleMs` old (plus
 * one read).
 *
 * `invalidate()` drops the value (a change the caller must see): the next caller waits for a read
 * that began after the drop; a read that began before it is never reused.
 */
export class SharedRefresh<T> {
  private entry: { readonly value: T; readonly at: number; readonly generation: number } | null = null;
  private loading: { readonly generation: number; readonly promise: Promise<T> } | null = null;
  private generation = 0;

  constructor(
    private readonly load: () => Promise<T>,
    private readonly options: SharedRefreshOptions,
  ) {}

  async get(): Promise<T> {
    const { ttlMs, staleMs = 0 } = this.options;
    if (ttlMs <= 0) return this.load();
    const entry = this.entry;
    if (entry && entry.generation === this.generation) {
      const age = Date.now() - entry.at;
      if (age < ttlMs) return entry.value;
      if (age < ttlMs + staleMs) {
        this.refresh().catch((error: unknown) => this.options.onBackgroundError?.(error));
        return entry.value;
      }
    }
    return this.refresh();
  }

  /** Drops the value: the next `get` waits for a read that begins after this call. */
  invalidate(): void {
    this.generation++;
    this.entry = null;
  }

  /** The read in flight of this generation, or a new one. */
  private refresh(): Promise<T> {
    const generation = this.generation;
    if (this.loading?.generation === generation) return this.loading.promise;
    const at = Date.now();
    const promise = this.load().then(
      (value) => {
        if (this.generation === generation) this.entry = { value, at, generation };
        if (this.loading?.promise === promise) this.loading = null;
        return value;
      },
      (error: unknown) => {
        if (this.loading?.promise === promise) this.loading = null;
        throw error;
      },
    );
    this.loading = { generation, promise };
    return promise;
  }
}
