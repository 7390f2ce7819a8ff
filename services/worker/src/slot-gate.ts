/**
 * One worker process's slot budget (`OVERSEER_WORKER_CONCURRENCY`), shared by every pool it
 * serves. A worker in pools gpu and jdk consumes two queues (one BullMQ Worker each, each
 * allowed the whole budget so either pool may use every idle slot), and this gate keeps their
 * sum within the budget:
 *
 * - before a pool's Worker takes a job off its queue, it waits until a slot is free
 *   (`whenFree`), so a full worker leaves queued jobs to other workers instead of holding them;
 * - the run itself takes the slot (`tryTake`) when it starts. Two pools can both see the last
 *   free slot and both take a job; the one that finds no slot hands its job straight back to
 *   its queue (no attempt spent), so a worker never runs more than its budget at once.
 */
export class SlotGate {
  private used = 0;
  private closed = false;
  private waiters: (() => void)[] = [];

  constructor(readonly size: number) {
    if (!Number.isInteger(size) || size < 1)
      throw new RangeError(`a slot budget must be an integer of at least 1, received ${size}`);
  }

  /** Slots taken now. */
  get inUse(): number {
    return this.used;
  }

  /** Takes a slot if one is free. */
  tryTake(): boolean {
    if (this.used >= this.size) return false;
    this.used += 1;
    return true;
  }

  /** Gives a taken slot back and wakes whoever waits for one. */
  release(): void {
    if (this.used === 0) throw new Error("a slot was released that was never taken");
    this.used -= 1;
    this.wake();
  }

  /** Resolves once a slot is free (not reserved: the run takes it with `tryTake`), or the gate closed. */
  whenFree(): Promise<void> {
    if (this.closed || this.used < this.size) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** The worker stops taking jobs: every wait ends now, and every later one at once. */
  close(): void {
    this.closed = true;
    this.wake();
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve();
  }
}
