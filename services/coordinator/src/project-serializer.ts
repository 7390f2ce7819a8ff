/**
 * Runs work for one project at a time, many projects in parallel. `kick(id)` asks for a
 * scheduling pass; kicks that arrive while a pass runs coalesce into exactly one more pass,
 * so a burst of transitions costs at most two passes, never a queue of them.
 */
export class ProjectSerializer {
  private readonly tails = new Map<string, Promise<unknown>>();
  private readonly pendingKick = new Set<string>();
  private readonly running = new Set<string>();

  constructor(private readonly onError: (projectId: string, error: unknown) => void) {}

  /** Runs `fn` after every earlier task of this project. */
  run<T>(projectId: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(projectId) ?? Promise.resolve();
    const next = previous.then(fn, fn);
    const tail = next.catch(() => undefined);
    this.tails.set(projectId, tail);
    void tail.then(() => {
      if (this.tails.get(projectId) === tail) this.tails.delete(projectId);
    });
    return next;
  }

  /** Coalescing trigger for a scheduling pass. */
  kick(projectId: string, pass: () => Promise<void>): void {
    if (this.running.has(projectId)) {
      this.pendingKick.add(projectId);
      return;
    }
    this.running.add(projectId);
    void this.run(projectId, async () => {
      try {
        do {
          this.pendingKick.delete(projectId);
          await pass();
        } while (this.pendingKick.has(projectId));
      } catch (error) {
        this.onError(projectId, error);
      } finally {
        this.running.delete(projectId);
      }
    });
  }

  /** Resolves when every queued task has finished. */
  async idle(): Promise<void> {
    while (this.tails.size > 0) await Promise.all([...this.tails.values()]);
  }
}
