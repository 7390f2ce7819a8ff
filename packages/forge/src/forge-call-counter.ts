/**
 * HTTP requests an adapter sent, by operation (`ensurePullRequest`, `listChecks`…): every
 * attempt counts, retries after a 5xx or a rate limit included, because that is what the
 * forge's quota sees. The caller makes one counter per task (or per job) and reads it for
 * metrics; adapters only ever add to it.
 */
import { AsyncLocalStorage } from "node:async_hooks";

const currentOperation = new AsyncLocalStorage<string>();

export class ForgeCallCounter {
  readonly #byOperation = new Map<string, number>();

  /** Records one request of the operation running now (`other` outside any). */
  record(): void {
    const operation = currentOperation.getStore() ?? "other";
    this.#byOperation.set(operation, (this.#byOperation.get(operation) ?? 0) + 1);
  }

  #notModified = 0;

  /** Records that a request (already recorded) was answered 304 Not Modified. */
  recordNotModified(): void {
    this.#notModified += 1;
  }

  /**
   * Conditional requests answered 304 Not Modified: counted in `total` like any request, but
   * GitHub does not charge them to the rate limit, so metrics report them apart.
   */
  get notModified(): number {
    return this.#notModified;
  }

  get total(): number {
    let sum = 0;
    for (const n of this.#byOperation.values()) sum += n;
    return sum;
  }

  /** Requests by operation, e.g. `{ ensurePullRequest: 3, listChecks: 2 }`. */
  snapshot(): Readonly<Record<string, number>> {
    return Object.freeze(Object.fromEntries(this.#byOperation));
  }
}

/** Runs `work` as `operation`: the requests it sends are counted under that name. */
export function asOperation<T>(operation: string, work: () => Promise<T>): Promise<T> {
  return currentOperation.run(operation, work);
}

/** A `fetch` that records each request in `counter` before sending it. */
export function countingFetch(counter: ForgeCallCounter, inner: typeof fetch = fetch): typeof fetch {
  return async (input, init) => {
    counter.record();
    const response = await inner(input, init);
    if (response.status === 304) counter.recordNotModified();
    return response;
  };
}
