import { type Db, loadProjectStatus, type ProjectStatusData, projectChangeToken } from "@overseer/db";

/** A project's status as read from Postgres, and when. */
export interface StatusSnapshot {
  readonly data: ProjectStatusData;
  /** Epoch ms of the read. */
  readonly at: number;
}

interface Entry extends StatusSnapshot {
  readonly generation: number;
  /** Change token the entry was loaded under (token mode only). */
  readonly token: string | null;
}

/**
 * Status answers, the operator polling loop's hot path, reused while the project is
 * unchanged. Two ways to know it is unchanged:
 *
 * - `notify` (the gateway LISTENs to `POSTGRES_NOTIFY_CHANNEL`): every transition, start and task
 *   import NOTIFYs inside its transaction, and each notification drops the project's entry
 *   (`invalidate`); a reconnection of the LISTEN connection drops them all. Transitions
 *   applied through this gateway drop the entry before their HTTP answer is sent, so an
 *   operator always reads their own writes; a change made by another process shows as soon
 *   as its notification arrives (normally well under a millisecond after its commit). A
 *   cache hit costs no query at all.
 * - `token` (no LISTEN connection): each request reads the project's change token (row
 *   version + last event id, two index lookups) and reuses the entry only if it was loaded
 *   under the same token, so every transition shows on the very next request.
 *
 * In both modes `ttlMs` bounds the age of an entry (what a lost notification, or a change
 * that appends no event in token mode, can cost); 0 disables the cache. Loads are
 * single-flight per project; each invalidation bumps the project's generation, and a load
 * only fills the cache (and a request only joins a load in flight) when the generation has
 * not moved since the load began, so a read from before a change is never served after it.
 */
export class ProjectStatusCache {
  private readonly entries = new Map<string, Entry>();
  private readonly loading = new Map<string, { key: string; promise: Promise<StatusSnapshot | undefined> }>();
  private readonly generations = new Map<string, number>();
  private notified = false;

  constructor(
    private readonly db: Db,
    /** Longest reuse of one answer, in ms; 0 disables the cache. */
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
  ) {}

  /** Switches to `notify` mode while a LISTEN connection delivers notifications. */
  setNotified(active: boolean): void {
    if (active !== this.notified) this.invalidateAll();
    this.notified = active;
  }

  get mode(): "notify" | "token" {
    return this.notified ? "notify" : "token";
  }

  /** The project's status, or undefined when the project does not exist. */
  async get(projectId: string): Promise<StatusSnapshot | undefined> {
    if (this.ttlMs <= 0) return this.read(projectId);
    const generation = this.generations.get(projectId) ?? 0;
    const entry = this.entries.get(projectId);
    const fresh =
      entry !== undefined && entry.generation === generation && Date.now() - entry.at < this.ttlMs;
    let token: string | null = null;
    if (this.notified) {
      if (fresh) return entry;
    } else {
      token = await projectChangeToken(this.db, projectId);
      if (token === null) return undefined;
      if (fresh && entry.token === token) return entry;
    }
    const key = `${generation}/${token ?? ""}`;
    const inFlight = this.loading.get(projectId);
    if (inFlight?.key === key) return inFlight.promise;
    const promise = this.read(projectId).finally(() => {
      if (this.loading.get(projectId)?.promise === promise) this.loading.delete(projectId);
    });
    this.loading.set(projectId, { key, promise });
    const snapshot = await promise;
    if (snapshot && (this.generations.get(projectId) ?? 0) === generation) {
      if (!this.entries.has(projectId) && this.entries.size >= this.maxEntries) this.entries.clear();
      this.entries.set(projectId, { ...snapshot, generation, token });
    }
    return snapshot;
  }

  /** Drops the project's answer (it changed). */
  invalidate(projectId: string): void {
    this.generations.set(projectId, (this.generations.get(projectId) ?? 0) + 1);
    this.entries.delete(projectId);
  }

  /** Drops every answer (notifications may have been missed). */
  invalidateAll(): void {
    for (const projectId of new Set([...this.entries.keys(), ...this.loading.keys()]))
      this.invalidate(projectId);
  }

  private async read(projectId: string): Promise<StatusSnapshot | undefined> {
    const at = Date.now();
    const data = await loadProjectStatus(this.db, projectId);
    return data ? { data, at } : undefined;
  }
}
